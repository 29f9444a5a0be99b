package filters

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// The bounds of a response's warnings, as upstream's: past
// warningTotalRunes runes of warning text in all, every warning (those
// already added too) is cut to warningItemRunes runes, and warnings stop
// once the cut ones reach the total again.
const (
	warningTotalRunes = 4 * 1024
	warningItemRunes  = 256
)

type warningsKey struct{}

// WarningRecorder gives each request one record of the warnings its
// response carries, so that AddWarnings, wherever it is called, drops
// repeated texts and keeps the headers within upstream's bounds. The
// record is made by the first warning: most requests warn nothing.
func WarningRecorder(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(&warningsContext{Context: r.Context()}))
	})
}

// warningsContext is a request's context with the place of its warning
// record. Safe for concurrent use.
type warningsContext struct {
	context.Context
	rec atomic.Pointer[warnings]
}

// Value answers warningsKey with the context itself.
func (c *warningsContext) Value(key any) any {
	if key == (warningsKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// record returns the request's record, made on first use.
func (c *warningsContext) record() *warnings {
	if rec := c.rec.Load(); rec != nil {
		return rec
	}
	c.rec.CompareAndSwap(nil, &warnings{})
	return c.rec.Load()
}

// warnings are the warnings of one response. Safe for concurrent use.
type warnings struct {
	mu       sync.Mutex
	recorded map[string]bool
	// ordered are the texts added, in order, to be cut when the total
	// is passed.
	ordered []string
	// written is the runes of text in the headers; truncating says the
	// total was passed.
	written    int
	truncating bool
}

// AddWarnings adds a Warning header (code 299, agent "-") per text to h,
// the headers of the response of the request ctx is of, as upstream's
// warning recorder: a text already added to the response, an empty one
// or one upstream cannot send (not UTF-8, with control characters) is
// dropped, and past the total the texts are cut. Without the request's
// record (WarningRecorder), the texts of this call are recorded alone.
func AddWarnings(ctx context.Context, h http.Header, texts ...string) {
	if len(texts) == 0 {
		return
	}
	var rec *warnings
	if c, _ := ctx.Value(warningsKey{}).(*warningsContext); c != nil {
		rec = c.record()
	} else {
		rec = &warnings{}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, t := range texts {
		rec.add(h, t)
	}
}

func (rec *warnings) add(h http.Header, text string) {
	if text == "" || (rec.truncating && rec.written >= warningTotalRunes) || rec.recorded[text] {
		return
	}
	if rec.recorded == nil {
		rec.recorded = map[string]bool{}
	}
	rec.recorded[text] = true
	rec.ordered = append(rec.ordered, text)
	if !sendable(text) {
		return
	}
	n := utf8.RuneCountInString(text)
	if rec.truncating {
		text, n = cut(text, n)
	}
	if rec.truncating || rec.written+n <= warningTotalRunes {
		rec.written += n
		h.Add("Warning", warningHeader(text))
		return
	}
	// Past the total: every warning so far is added again, cut.
	rec.truncating, rec.written = true, 0
	h.Del("Warning")
	for _, t := range rec.ordered {
		if !sendable(t) {
			continue
		}
		t, n := cut(t, utf8.RuneCountInString(t))
		rec.written += n
		h.Add("Warning", warningHeader(t))
	}
}

// cut is text, of n runes, cut to warningItemRunes runes.
func cut(text string, n int) (string, int) {
	if n <= warningItemRunes {
		return text, n
	}
	return string([]rune(text)[:warningItemRunes]), warningItemRunes
}

// sendable says whether a warning header may carry text, as upstream
// checks it: valid UTF-8 without control characters.
func sendable(text string) bool {
	return utf8.ValidString(text) && strings.IndexFunc(text, unicode.IsControl) < 0
}

// warningHeader formats one Warning header value: code 299, agent "-",
// the text quoted.
func warningHeader(text string) string {
	return `299 - "` + warningEscaper.Replace(text) + `"`
}

var warningEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

package rest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"platd/server/apierr"
	"platd/server/registry"
)

// resourceVersionSeeds are the edges of the uint64 a resourceVersion is
// parsed as, and the spellings ParseUint refuses.
var resourceVersionSeeds = []string{
	"", "0", "00", "1", "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
	"99999999999999999999999", "-1", "-9223372036854775808", "007", "0009223372036854775808", "+1", " 1", "1 ", "\t1",
	"1\n", "0x10", "1e3", "1_000", "١", "abc",
}

func TestResourceVersionParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in       string
		want     uint64
		rev      int64
		reach    bool
		parseErr string
	}{
		{"", 0, 0, true, ""},
		{"00", 0, 0, true, ""},
		{"007", 7, 7, true, ""},
		{"9223372036854775807", math.MaxInt64, math.MaxInt64, true, ""},
		{"9223372036854775808", 1 << 63, 0, false, ""},
		{"18446744073709551615", math.MaxUint64, 0, false, ""},
		{"18446744073709551616", 0, 0, false, `strconv.ParseUint: parsing "18446744073709551616": value out of range`},
		{"-1", 0, 0, false, `strconv.ParseUint: parsing "-1": invalid syntax`},
		{"+1", 0, 0, false, `strconv.ParseUint: parsing "+1": invalid syntax`},
		{" 1", 0, 0, false, `strconv.ParseUint: parsing " 1": invalid syntax`},
	}
	for _, c := range cases {
		v, err := parseResourceVersion(c.in)
		if c.parseErr != "" {
			want := fmt.Sprintf("invalid resource version: resourceVersion: Invalid value: %q: %s", c.in, c.parseErr)
			if apierr.Code(err) != http.StatusBadRequest || err.Error() != want {
				t.Errorf("%q: %v, want 400 %s", c.in, err, want)
			}
			_, err = parseResourceVersionCached(c.in)
			want = fmt.Sprintf("resourceVersion: Invalid value: %q: %s", c.in, c.parseErr)
			if apierr.Code(err) != http.StatusInternalServerError || apierr.ReasonOf(err) != "" || err.Error() != want {
				t.Errorf("%q cached: %v, want raw 500 %s", c.in, err, want)
			}
			continue
		}
		rev, ok := v.revision()
		if err != nil || uint64(v) != c.want || rev != c.rev || ok != c.reach {
			t.Errorf("%q: %d (%d %v) %v; want %d (%d %v)", c.in, uint64(v), rev, ok, err, c.want, c.rev, c.reach)
		}
	}
	st := apierr.FromError(tooLargeResourceVersion(math.MaxUint64, 12, tooLargeRetryStorage)).Status
	if st.Message != "Timeout: Too large resource version: 18446744073709551615, current: 12" || st.Details.RetryAfterSeconds != 0 {
		t.Errorf("too large: %+v", st)
	}
}

// FuzzResourceVersion holds the parse to ParseUint over the whole uint64
// range and beyond, and every use of the result to it: a value is a store
// revision only when it fits, compares with revisions as the number it
// is, and is printed back as that number.
func FuzzResourceVersion(f *testing.F) {
	for _, s := range resourceVersionSeeds {
		f.Add(s, int64(5))
		f.Add(s, int64(math.MaxInt64))
	}
	f.Fuzz(func(t *testing.T, s string, stored int64) {
		if stored < 0 {
			stored = -stored - 1
		}
		want, perr := strconv.ParseUint(s, 10, 64)
		if s == "" {
			want, perr = 0, nil
		}
		v, err := parseResourceVersion(s)
		vc, errc := parseResourceVersionCached(s)
		if (err == nil) != (perr == nil) || (errc == nil) != (perr == nil) {
			t.Fatalf("%q: parse %v, cached %v, ParseUint %v", s, err, errc, perr)
		}
		sc := &scope{d: &registry.Descriptor{Resource: "configmaps"}, name: "x"}
		werr := checkWriteVersion(sc, s, stored)
		if perr != nil {
			if apierr.Code(err) != http.StatusBadRequest || apierr.Code(errc) != http.StatusInternalServerError || apierr.ReasonOf(errc) != "" {
				t.Errorf("%q: %v / %v", s, err, errc)
			}
			if s != "" && (werr == nil || werr.Error() != perr.Error()) {
				t.Errorf("%q: write check %v, want %v", s, werr, perr)
			}
			return
		}
		if uint64(v) != want || vc != v {
			t.Fatalf("%q: %d / %d, want %d", s, uint64(v), uint64(vc), want)
		}
		rev, ok := v.revision()
		if ok != (want <= math.MaxInt64) || ok && (rev < 0 || uint64(rev) != want) {
			t.Errorf("%q: revision %d %v", s, rev, ok)
		}
		if v.equals(stored) != (want == uint64(stored)) || v.equals(-stored-1) {
			t.Errorf("%q against %d: equals %v", s, stored, v.equals(stored))
		}
		switch {
		case s == "":
			if werr != nil {
				t.Errorf("empty: %v", werr)
			}
		case want == uint64(stored):
			if werr != nil {
				t.Errorf("%q at %d: %v", s, stored, werr)
			}
		default:
			if apierr.Code(werr) != http.StatusConflict {
				t.Errorf("%q at %d: %v", s, stored, werr)
			}
		}
		msg := apierr.FromError(tooLargeResourceVersion(v, stored, tooLargeRetryCache)).Status.Message
		if msg != "Timeout: Too large resource version: "+strconv.FormatUint(want, 10)+", current: "+strconv.FormatInt(stored, 10) {
			t.Errorf("%q: %s", s, msg)
		}
	})
}

// listAnswer is the answer upstream gives a list: the status code, the
// Status reason and message start, and the retry hint of a 504. codes
// other than the first are also right (410 for a pinned revision gone
// from history).
type listAnswer struct {
	codes  []int
	reason string
	prefix string
	retry  string
}

// expectList computes the upstream answer to a list with rv, match and
// limit from a store at revision current: the validation, then the read
// upstream serves from storage (exact lists, and paged lists with a
// version other than "" and "0") or from its watch cache (the rest).
func expectList(rv, match string, limit, current int64) listAnswer {
	if match != "" && (rv == "" || match != matchExact && match != matchNotOlderThan || match == matchExact && rv == "0") {
		return listAnswer{codes: []int{http.StatusUnprocessableEntity}, reason: "Invalid"}
	}
	fromStorage := match == matchExact || limit > 0 && rv != "" && rv != "0"
	n, err := strconv.ParseUint(rv, 10, 64)
	switch {
	case rv == "":
		return listAnswer{codes: []int{http.StatusOK}}
	case err != nil && fromStorage:
		return listAnswer{codes: []int{http.StatusBadRequest}, reason: "BadRequest",
			prefix: fmt.Sprintf("invalid resource version: resourceVersion: Invalid value: %q: ", rv)}
	case err != nil:
		return listAnswer{codes: []int{http.StatusInternalServerError}, prefix: fmt.Sprintf("resourceVersion: Invalid value: %q: ", rv)}
	case n > uint64(current):
		a := listAnswer{codes: []int{http.StatusGatewayTimeout}, reason: "Timeout",
			prefix: fmt.Sprintf("Timeout: Too large resource version: %d, current: ", n), retry: "1"}
		// Storage checks once without a hint, except for an exact read
		// of a revision that may still come (see tooLargeRetryCache).
		if fromStorage && (n > math.MaxInt64 || match == matchNotOlderThan) {
			a.retry = ""
		}
		return a
	case fromStorage && n > 0 && match != matchNotOlderThan:
		return listAnswer{codes: []int{http.StatusOK, http.StatusGone}}
	}
	return listAnswer{codes: []int{http.StatusOK}}
}

// FuzzListResourceVersion sends resourceVersion, match and limit through
// the list handler of a real store: the answer is the one expectList
// computes, never the engine's text, and a list is served only at a
// revision the store has reached.
func FuzzListResourceVersion(f *testing.F) {
	for _, s := range resourceVersionSeeds {
		for _, m := range []string{"", matchExact, matchNotOlderThan} {
			f.Add(s, m, int64(0))
			f.Add(s, m, int64(2))
		}
	}
	f.Add("1", "", int64(-1))
	f.Add("1", "", int64(math.MinInt64))
	f.Add("1", "Foo", int64(2))
	_, srv, store := newTestHandler(f, Config{TooLargeWait: time.Millisecond})
	client := srv.Client()
	f.Fuzz(func(t *testing.T, rv, match string, limit int64) {
		want := expectList(rv, match, limit, store.Revision())
		q := url.Values{"resourceVersion": {rv}, "resourceVersionMatch": {match}, "limit": {strconv.FormatInt(limit, 10)}}
		res, err := client.Get(srv.URL + "/api/v1/namespaces/default/configmaps?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		b := string(body)
		if strings.Contains(b, "bolt") {
			t.Fatalf("%q %q %d: engine text leaked: %s", rv, match, limit, b)
		}
		if !slices.Contains(want.codes, res.StatusCode) {
			t.Fatalf("%q %q %d: %d, want %v: %s", rv, match, limit, res.StatusCode, want.codes, b)
		}
		if res.StatusCode == http.StatusOK {
			n, _ := strconv.ParseUint(rv, 10, 64)
			if n > uint64(store.Revision()) {
				t.Errorf("%q %q %d: served %s", rv, match, limit, b)
			}
			return
		}
		var st struct{ Reason, Message string }
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("%q %q %d: %s: %v", rv, match, limit, b, err)
		}
		if res.StatusCode == http.StatusGone {
			return
		}
		if st.Reason != want.reason || !strings.HasPrefix(st.Message, want.prefix) {
			t.Errorf("%q %q %d: reason %q message %q, want %q %q…", rv, match, limit, st.Reason, st.Message, want.reason, want.prefix)
		}
		if got := res.Header.Get("Retry-After"); got != want.retry {
			t.Errorf("%q %q %d: Retry-After %q, want %q", rv, match, limit, got, want.retry)
		}
	})
}

// A watch from a version the store has not reached gets no bookmarks:
// upstream passes on only those newer than the version asked for. A watch
// from the current revision, run alongside, shows that bookmarks were due.
func TestNoBookmarksBeyondEveryRevision(t *testing.T) {
	t.Parallel()
	_, srv, store := newTestHandler(t, Config{BookmarkInterval: 10 * time.Millisecond})
	base := srv.URL + "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion="
	read := func(rv string, out chan<- string) {
		res, err := srv.Client().Get(base + rv)
		if err != nil {
			out <- err.Error()
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		out <- strconv.Itoa(res.StatusCode) + " " + string(b)
	}
	huge, ahead, control := make(chan string, 1), make(chan string, 1), make(chan string, 1)
	go read("18446744073709551615", huge)
	// A version a write could reach, but none does while the watch runs.
	go read(strconv.FormatInt(store.Revision()+1000, 10), ahead)
	go read(strconv.FormatInt(store.Revision(), 10), control)
	if got := <-huge; got != "200 " {
		t.Errorf("watch from 2^64-1: %q, want an empty 200 stream", got)
	}
	if got := <-ahead; got != "200 " {
		t.Errorf("watch from past the store: %q, want an empty 200 stream", got)
	}
	if got := <-control; !strings.Contains(got, `"type":"BOOKMARK"`) {
		t.Errorf("watch from the current revision got no bookmark: %q", got)
	}
}

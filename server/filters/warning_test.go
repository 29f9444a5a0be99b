package filters

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestAddWarnings checks the warnings of one response, as upstream's
// recorder keeps them: repeated and unsendable texts dropped, and past
// 4096 runes every warning cut to 256 runes, those already added too,
// until the cut ones reach the total again.
func TestAddWarnings(t *testing.T) {
	t.Parallel()
	x, y := strings.Repeat("x", 3000), strings.Repeat("y", 3000)
	var many [][]string
	for i := 0; i < 20; i++ {
		many = append(many, []string{fmt.Sprintf("%02d", i) + strings.Repeat("z", 298)})
	}
	h := func(texts ...string) []string {
		var out []string
		for _, t := range texts {
			out = append(out, `299 - "`+t+`"`)
		}
		return out
	}
	cutMany := []string{x[:256], y[:256]}
	for _, m := range many[:14] {
		cutMany = append(cutMany, m[0][:256])
	}
	tests := []struct {
		name  string
		calls [][]string // one AddWarnings call each
		want  []string
	}{
		{"repeats dropped across calls", [][]string{{"a", "b", "a"}, {"b", "c"}}, h("a", "b", "c")},
		{"quoted", [][]string{{`say "hi" \ bye`}}, h(`say \"hi\" \\ bye`)},
		{"empty and control characters dropped", [][]string{{"", "a\nb", "ok"}}, h("ok")},
		{"within the total", [][]string{{x}, {strings.Repeat("é", 1000)}}, h(x, strings.Repeat("é", 1000))},
		{"past the total, all cut", [][]string{{x}, {y}}, h(x[:256], y[:256])},
		{"cut by runes", [][]string{{strings.Repeat("é", 3000)}, {y}}, h(strings.Repeat("é", 256), y[:256])},
		{"cut until the total again", append([][]string{{x, y}}, many...), h(cutMany...)},
	}
	for _, tt := range tests {
		ctx := context.Background()
		WarningRecorder(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { ctx = r.Context() })).ServeHTTP(nil, httptest.NewRequest("GET", "/", nil))
		w := httptest.NewRecorder()
		for _, c := range tt.calls {
			AddWarnings(ctx, w.Header(), c...)
		}
		if got := w.Header().Values("Warning"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %d warnings %.200q, want %d %.200q", tt.name, len(got), got, len(tt.want), tt.want)
		}
	}
}

// TestAddWarningsWithoutRecord checks that without the request's record
// one call's texts are still deduplicated and bounded.
func TestAddWarningsWithoutRecord(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	x, y := strings.Repeat("x", 3000), strings.Repeat("y", 3000)
	AddWarnings(context.Background(), w.Header(), x, x, y)
	if got, want := w.Header().Values("Warning"), []string{`299 - "` + x[:256] + `"`, `299 - "` + y[:256] + `"`}; !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %.200q", got)
	}
}

// TestWarningRecordMadeByFirstWarning checks that a request that warns
// nothing has no record, and that the record made by the first warning
// is the one every later call, from any goroutine or derived context,
// adds to.
func TestWarningRecordMadeByFirstWarning(t *testing.T) {
	t.Parallel()
	var ctx context.Context
	WarningRecorder(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { ctx = r.Context() })).ServeHTTP(nil, httptest.NewRequest("GET", "/", nil))
	c, _ := ctx.Value(warningsKey{}).(*warningsContext)
	if c == nil {
		t.Fatal("no warning context")
	}
	w := httptest.NewRecorder()
	AddWarnings(ctx, w.Header())
	AddWarnings(ctx, w.Header(), []string{}...)
	if rec := c.rec.Load(); rec != nil || len(w.Header().Values("Warning")) != 0 {
		t.Fatalf("no warnings: record %v, headers %q", rec, w.Header().Values("Warning"))
	}
	derived, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				AddWarnings(derived, w.Header(), "same", fmt.Sprint("own ", i))
			} else {
				AddWarnings(ctx, w.Header(), "same")
			}
		}()
	}
	wg.Wait()
	got := w.Header().Values("Warning")
	slices.Sort(got)
	want := []string{`299 - "own 0"`, `299 - "own 2"`, `299 - "own 4"`, `299 - "own 6"`, `299 - "same"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if rec := c.rec.Load(); rec == nil || len(rec.ordered) != 5 {
		t.Errorf("record %+v", rec)
	}
}

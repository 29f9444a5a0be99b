package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGrowStack checks the filter hands its handler the very request and
// writer it got, once, and leaves the answer alone.
func TestGrowStack(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces", nil)
	calls := 0
	GrowStack(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if w != rec || r != req {
			t.Errorf("handler got writer %p and request %p, want %p and %p", w, r, rec, req)
		}
		w.Header().Set("X-Seen", "1")
		w.WriteHeader(http.StatusTeapot)
	})).ServeHTTP(rec, req)
	if calls != 1 {
		t.Fatalf("handler called %d times, want 1", calls)
	}
	if rec.Code != http.StatusTeapot || rec.Header().Get("X-Seen") != "1" {
		t.Fatalf("answer %d %v, want the handler's 418 with X-Seen", rec.Code, rec.Header())
	}
}

// BenchmarkGrowStack runs a handler as the server does, on a new
// goroutine, through a chain of filters whose frames together need about
// 6 KB of stack: with the stack grown on entry, and without.
func BenchmarkGrowStack(b *testing.B) {
	var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for range 12 {
		h = frameFilter(h)
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"plain", h}, {"grown", GrowStack(h)}} {
		b.Run(tc.name, func(b *testing.B) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			done := make(chan struct{})
			for range b.N {
				go func() {
					tc.h.ServeHTTP(rec, req)
					done <- struct{}{}
				}()
				<-done
			}
		})
	}
}

// frameFilter is a filter whose frame holds about 512 bytes of locals.
func frameFilter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var local [64]int
		fill(local[:])
		next.ServeHTTP(w, r)
		if local[63] != 63 {
			panic("stack corrupted")
		}
	})
}

//go:noinline
func fill(s []int) {
	for i := range s {
		s[i] = i
	}
}

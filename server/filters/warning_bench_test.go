package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkWarningRecorder is what the warning record costs a request:
// one that warns nothing (the authentication layer still asks to add its
// none) and one that warns twice.
func BenchmarkWarningRecorder(b *testing.B) {
	for _, bc := range []struct {
		name  string
		texts []string
	}{
		{"none", nil},
		{"two", []string{"deprecated", "unknown field"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := WarningRecorder(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				AddWarnings(r.Context(), w.Header())
				AddWarnings(r.Context(), w.Header(), bc.texts...)
			}))
			r := httptest.NewRequest("GET", "/api/v1/namespaces/bench/configmaps", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, r)
			}
		})
	}
}

// discardWriter keeps headers and drops the rest.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

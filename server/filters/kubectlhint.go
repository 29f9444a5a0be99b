package filters

import (
	"net/http"
	"strings"
)

// kubectlAgent starts the User-Agent of every kubectl.
const kubectlAgent = "kubectl/"

// KubectlHint adds a Warning with hint to the responses kubectl shows
// its user when the brand is one kubectl cannot speak: discovery (its
// first request, then cached) and every error. Other clients, and other
// kubectl responses, pass untouched; the caller installs it only when
// there is a hint.
func KubectlHint(next http.Handler, hint string) http.Handler {
	warning := `299 - "` + strings.ReplaceAll(hint, `"`, `'`) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("User-Agent"), kubectlAgent) {
			next.ServeHTTP(w, r)
			return
		}
		if p := r.URL.Path; p == "/api" || p == "/apis" {
			w.Header().Add("Warning", warning)
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&hintWriter{ResponseWriter: w, warning: warning}, r)
	})
}

// hintWriter adds the warning to an error response before its header
// is written; it passes Flush on and unwraps for http.ResponseController.
type hintWriter struct {
	http.ResponseWriter
	warning string
	written bool
}

func (w *hintWriter) WriteHeader(code int) {
	if !w.written && code >= 200 {
		w.written = true
		if code >= 400 {
			w.Header().Add("Warning", w.warning)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *hintWriter) Write(b []byte) (int, error) {
	w.written = true
	return w.ResponseWriter.Write(b)
}

func (w *hintWriter) Flush() { _ = w.FlushError() }

// FlushError flushes and says whether the client could be written to.
func (w *hintWriter) FlushError() error {
	w.written = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *hintWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

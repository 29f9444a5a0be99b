package filters

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// LogRequests logs one debug line per request: method, path, user,
// status and duration. The caller installs it only when the logger
// enables debug, so a server at info pays nothing for it.
func LogRequests(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		rl := &requestLog{}
		sw := &logWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestLogKey{}, rl)))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		log.LogAttrs(r.Context(), slog.LevelDebug, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.RequestURI()), slog.String("user", rl.user),
			slog.Int("status", status), slog.Duration("duration", time.Since(began)))
	})
}

// requestLog collects what inner layers learn for the request's line.
type requestLog struct{ user string }

type requestLogKey struct{}

// noteUser records the authenticated user for the request log line.
func noteUser(ctx context.Context, name string) {
	if rl, ok := ctx.Value(requestLogKey{}).(*requestLog); ok {
		rl.user = name
	}
}

// logWriter remembers the final status code; it passes Flush on, for
// watches, and unwraps for http.ResponseController.
type logWriter struct {
	http.ResponseWriter
	status int
}

func (w *logWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx are interim
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *logWriter) Flush() { _ = w.FlushError() }

// FlushError flushes and says whether the client could be written to.
func (w *logWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

package server_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// At debug level every request gets one log line naming its method,
// path, user, status and duration.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := startLogged(t, testOptions(t, t.TempDir()), log)
	e.do("GET", "/api/v1/namespaces/default/configmaps/nope?pretty=1", nil).mustCode(t, 404)
	e.send(req{method: "GET", path: "/api/v1/namespaces", token: "wrong"}).mustCode(t, 401)
	for _, want := range []string{
		`msg=request method=GET path="/api/v1/namespaces/default/configmaps/nope?pretty=1" user=admin status=404 duration=`,
		`msg=request method=GET path=/api/v1/namespaces user="" status=401 duration=`,
	} {
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(buf.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no log line %q in:\n%s", want, buf.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// At info level there is none.
	var quiet lockedBuffer
	e = startLogged(t, testOptions(t, t.TempDir()), slog.New(slog.NewTextHandler(&quiet, &slog.HandlerOptions{Level: slog.LevelInfo})))
	e.do("GET", "/api/v1/namespaces/default/configmaps/nope", nil).mustCode(t, 404)
	e.stop()
	if strings.Contains(quiet.String(), "msg=request") {
		t.Errorf("request logged at info level:\n%s", quiet.String())
	}
}

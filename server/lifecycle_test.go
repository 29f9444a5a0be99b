package server_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// bodyLimit is upstream's request body limit, 3 MiB.
const bodyLimit = 3145728

// A body over 3 MiB is refused with upstream's 413 on every verb that
// reads one; a body of exactly the limit is read and judged on its content.
func TestRequestBodyLimit(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "big"}}).mustCode(t, http.StatusCreated)
	// A JSON object padded with spaces to n bytes.
	padded := func(n int) string {
		s := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"}}`
		return s + strings.Repeat(" ", n-len(s))
	}
	const tooLarge = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`
	for _, tc := range []struct {
		name, method, path, ctype string
	}{
		{"create", http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json"},
		{"update", http.MethodPut, "/api/v1/namespaces/default/configmaps/big", "application/json"},
		{"merge patch", http.MethodPatch, "/api/v1/namespaces/default/configmaps/big", "application/merge-patch+json"},
		{"apply", http.MethodPatch, "/api/v1/namespaces/default/configmaps/big?fieldManager=t", "application/apply-patch+yaml"},
		{"delete options", http.MethodDelete, "/api/v1/namespaces/default/configmaps/other", "application/json"},
	} {
		r := e.do(tc.method, tc.path, padded(bodyLimit+1), "Content-Type", tc.ctype)
		if r.code != http.StatusRequestEntityTooLarge || strings.TrimSpace(string(r.body)) != tooLarge {
			t.Errorf("%s of %d bytes: %d %s, want 413 %s", tc.name, bodyLimit+1, r.code, r.body, tooLarge)
		}
	}
	// At the limit the body is read: the update succeeds.
	e.do(http.MethodPut, "/api/v1/namespaces/default/configmaps/big", padded(bodyLimit)).mustCode(t, http.StatusOK)
}

// ?timeout= is read by the server's timeout layer: a duration that does not
// parse is upstream's 400, a valid one leaves the request alone.
func TestRequestTimeoutParameter(t *testing.T) {
	t.Parallel()
	e := start(t)
	r := e.do(http.MethodGet, "/api/v1/namespaces/default/configmaps?timeout=soon", nil).mustCode(t, http.StatusBadRequest)
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid timeout specified in the request URL - time: invalid duration \"soon\"","reason":"BadRequest","code":400}`
	if got := strings.TrimSpace(string(r.body)); got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	e.do(http.MethodGet, "/api/v1/namespaces/default/configmaps?timeout=30s", nil).mustCode(t, http.StatusOK)
	e.do(http.MethodPost, "/api/v1/namespaces/default/configmaps?timeout=30s", map[string]any{"metadata": map[string]any{"name": "t"}}).mustCode(t, http.StatusCreated)
}

// After SIGTERM with a shutdown delay, readyz fails at once while requests
// and open watches are still served; the server stops only after the delay.
func TestShutdownDelay(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second
	e := start(t, func(o *config.Options) { o.ShutdownDelayDuration = delay })
	rq, err := http.NewRequest(http.MethodGet, e.srv.URL()+"/api/v1/namespaces/default/configmaps?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	rq.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := e.client.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := bufio.NewScanner(res.Body)

	began := time.Now()
	e.cancel()
	eventually(t, "readyz to fail", func() bool {
		r := e.do(http.MethodGet, "/readyz/shutdown", nil)
		return r.code == http.StatusInternalServerError && string(r.body) == "internal server error: process is shutting down\n"
	})
	e.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "late"}}).mustCode(t, http.StatusCreated)
	if !events.Scan() || !strings.Contains(events.Text(), `"type":"ADDED"`) || !strings.Contains(events.Text(), `"name":"late"`) {
		t.Fatalf("watch during the delay: %q, %v; want the ADDED event", events.Text(), events.Err())
	}
	if err := <-e.done; err != nil {
		t.Errorf("platd stopped with: %v", err)
	}
	e.cancel = nil
	if took := time.Since(began); took < delay {
		t.Errorf("stopped after %s, want at least the %s delay", took, delay)
	}
	if events.Scan() {
		t.Errorf("watch went on after the stop: %q", events.Text())
	}
}

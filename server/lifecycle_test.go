package server_test

import (
	"net/http"
	"strings"
	"testing"
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

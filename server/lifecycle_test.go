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

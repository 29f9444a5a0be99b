package server_test

import (
	"testing"

	"platd/config"
)

// TestAllowPrivileged: --allow-privileged=false refuses a privileged
// container with upstream's field error and stores nothing; the default
// admits it.
func TestAllowPrivileged(t *testing.T) {
	t.Parallel()
	const pod = `{"metadata":{"name":"p"},"spec":{"automountServiceAccountToken":false,"containers":[{"name":"c","image":"x","securityContext":{"privileged":true}}]}}`
	for _, forbid := range []bool{false, true} {
		e := start(t, func(o *config.Options) { o.ForbidPrivileged = forbid })
		e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"ns"}}`).mustCode(t, 201)
		if !forbid {
			e.do("POST", "/api/v1/namespaces/ns/pods", pod).mustCode(t, 201)
			got := e.do("GET", "/api/v1/namespaces/ns/pods/p", nil).mustCode(t, 200).obj(t)
			if v := path(got, "spec.containers").([]any)[0].(map[string]any)["securityContext"]; mustJSON(t, v) != `{"privileged":true}` {
				t.Errorf("stored securityContext %s", mustJSON(t, v))
			}
			continue
		}
		e.do("POST", "/api/v1/namespaces/ns/pods", pod).mustCode(t, 422).
			mustMessage(t, `Pod "p" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`)
		e.do("GET", "/api/v1/namespaces/ns/pods/p", nil).mustCode(t, 404)
	}
}

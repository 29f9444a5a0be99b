package server_test

import (
	"encoding/base64"
	"testing"

	"platd/config"
)

// A bad credential is refused on every path, public ones included; no
// credential is anonymous there.
func TestAuthenticationFilter(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) {
		o.AnonymousAuth = true
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
	})
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/version", "/api/v1/namespaces"} {
		e.send(req{method: "GET", path: p, token: "not-a-valid-token"}).mustCode(t, 401).mustMessage(t, "Unauthorized")
	}
	// Anonymous, hence authorized and refused by AlwaysDeny.
	e.send(req{method: "GET", path: "/healthz"}).mustCode(t, 403)
	before := e.srv.AuthCounts()

	// The websocket token: unpadded base64url in a subprotocol entry,
	// with another entry to answer with.
	proto := "base64url.bearer.authorization." + platBrand.Domain + "." + base64.RawURLEncoding.EncodeToString([]byte(adminToken))
	ws := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}
	with := func(protocols string) map[string]string {
		h := map[string]string{"Sec-WebSocket-Protocol": protocols}
		for k, v := range ws {
			h[k] = v
		}
		return h
	}
	got := e.send(req{method: "POST", path: "/apis/" + platBrand.Group("authentication") + "/v1/selfsubjectreviews", body: `{}`, header: with(proto + ", " + "v5.channel." + platBrand.Domain)}).mustCode(t, 201).obj(t)
	if name := path(got, "status.userInfo.username"); name != "admin" {
		t.Errorf("websocket token: user %v, want admin", name)
	}
	e.send(req{method: "GET", path: "/healthz", header: with(proto)}).mustCode(t, 401)
	e.send(req{method: "GET", path: "/healthz", header: with(proto + "=, x")}).mustCode(t, 401)

	after := e.srv.AuthCounts()
	if d := after.Attempts["error"] - before.Attempts["error"]; d != 2 {
		t.Errorf("authentication_attempts{result=error} grew by %d, want 2", d)
	}
	if d := after.UserRequests["admin"] - before.UserRequests["admin"]; d != 1 {
		t.Errorf("authenticated_user_requests{username=admin} grew by %d, want 1", d)
	}
}

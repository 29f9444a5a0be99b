package security

import (
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"

	"platd/config"
)

func TestWebSocketAuthenticator(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("kubernetes")
	a := NewWebSocketAuthenticator(b, NewTokenFile([]config.Token{{Token: "tok", User: "alice", UID: "1"}}))
	enc := func(s string) string {
		return "base64url.bearer.authorization." + b.Domain + "." + base64.RawURLEncoding.EncodeToString([]byte(s))
	}
	for _, c := range []struct {
		name      string
		upgrade   bool
		protocols []string
		user      string
		err       string
		left      string
	}{
		{name: "token", upgrade: true, protocols: []string{enc("tok") + ", " + "v4.channel." + b.Domain}, user: "alice", left: "v4.channel." + b.Domain},
		{name: "token in second header", upgrade: true, protocols: []string{"a", enc("tok") + ",b"}, user: "alice", left: "a,b"},
		{name: "not an upgrade", protocols: []string{enc("tok") + ",x"}},
		{name: "no token", upgrade: true, protocols: []string{"v4.channel." + b.Domain}},
		{name: "only protocol", upgrade: true, protocols: []string{enc("tok")}, err: "missing additional subprotocol"},
		{name: "two tokens", upgrade: true, protocols: []string{enc("tok") + "," + enc("tok") + ",x"}, err: "multiple base64.bearer.authorization tokens specified"},
		{name: "padded", upgrade: true, protocols: []string{enc("tok") + "=,x"}, err: "invalid base64.bearer.authorization token encoding"},
		{name: "not utf-8", upgrade: true, protocols: []string{"base64url.bearer.authorization." + b.Domain + "." + base64.RawURLEncoding.EncodeToString([]byte{0xff}) + ",x"}, err: "invalid base64.bearer.authorization token"},
		{name: "unknown token", upgrade: true, protocols: []string{enc("nope") + ",x"}, err: "invalid bearer token"},
	} {
		r := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods/p/exec", nil)
		if c.upgrade {
			r.Header.Set("Connection", "keep-alive, Upgrade")
			r.Header.Set("Upgrade", "WebSocket")
		}
		for _, p := range c.protocols {
			r.Header.Add("Sec-WebSocket-Protocol", p)
		}
		u, ok, err := a.AuthenticateRequest(r)
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err || ok {
				t.Errorf("%s: got %v %v, want error %q", c.name, ok, err, c.err)
			}
		case c.user != "":
			if !ok || err != nil || u.Name != c.user {
				t.Errorf("%s: got %+v %v %v", c.name, u, ok, err)
			}
			if got := strings.Join(r.Header.Values("Sec-WebSocket-Protocol"), "|"); got != c.left {
				t.Errorf("%s: protocols left %q, want %q", c.name, got, c.left)
			}
		default:
			if ok || err != nil {
				t.Errorf("%s: got %v %v, want no opinion", c.name, ok, err)
			}
		}
	}
}

func FuzzWebSocketToken(f *testing.F) {
	plat, _ := config.LookupBrand("plat")
	prefix := "base64url.bearer.authorization." + plat.Domain + "."
	for _, s := range []string{prefix + "dG9r, x", prefix + "dG9r", "a,b", prefix + "=,x", prefix + "_w,y", ",,,", prefix + prefix} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, h1, h2 string) {
		token, others, err := WebSocketToken([]string{h1, h2}, prefix)
		if err != nil {
			if token != "" || others != nil {
				t.Fatalf("error %v with token %q others %q", err, token, others)
			}
			return
		}
		if token != "" && len(others) == 0 {
			t.Fatalf("token %q accepted without another subprotocol", token)
		}
		for _, o := range others {
			if strings.HasPrefix(o, prefix) || strings.Contains(o, ",") {
				t.Fatalf("entry %q left among others", o)
			}
		}
	})
}

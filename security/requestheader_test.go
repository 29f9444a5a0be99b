package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestRequestHeaderAuthenticator(t *testing.T) {
	t.Parallel()
	proxyCA := newTestCA(t, "proxy-ca")
	otherCA := newTestCA(t, "other-ca")
	proxy := proxyCA.leaf(t, leafOpts{cn: "front-proxy"})
	stranger := proxyCA.leaf(t, leafOpts{cn: "someone-else"})
	foreign := otherCA.leaf(t, leafOpts{cn: "front-proxy"})
	serverEKU := proxyCA.leaf(t, leafOpts{cn: "front-proxy", eku: x509.ExtKeyUsageServerAuth})
	cfg := RequestHeaderConfig{
		CAs: proxyCA.pool, AllowedNames: []string{"front-proxy"},
		UsernameHeaders: []string{"X-Remote-User", "x-other-user"}, UIDHeaders: []string{"X-Remote-Uid"},
		GroupHeaders: []string{"X-Remote-Group", "X-Other-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-", "X-Other-Extra-"},
	}
	a := NewRequestHeaderAuthenticator(cfg, testBrand)
	identity := http.Header{
		"X-Remote-User":                     {"bob"},
		"X-Remote-Uid":                      {"bob-uid"},
		"X-Remote-Group":                    {"g1", "", "g2"},
		"X-Other-Group":                     {"g3,g4"},
		"X-Remote-Extra-Scopes":             {"a", "b"},
		"X-Remote-Extra-Acme.com%2fproject": {"p1"},
		"X-Other-Extra-Bad%zzkey":           {"raw"},
		"X-Remote-Extra-":                   {"empty-key"},
		"Accept":                            {"application/json"},
	}
	wantUser := &User{Name: "bob", UID: "bob-uid", Groups: []string{"g1", "g2", "g3,g4"}, Extra: map[string][]string{
		"scopes": {"a", "b"}, "acme.com/project": {"p1"}, "bad%zzkey": {"raw"}, "": {"empty-key"},
	}}
	cases := []struct {
		name   string
		certs  []*x509.Certificate
		header http.Header
		user   *User
		err    string
	}{
		{name: "trusted proxy", certs: []*x509.Certificate{proxy}, header: identity, user: wantUser},
		{name: "trusted proxy, second user header", certs: []*x509.Certificate{proxy}, header: http.Header{"X-Other-User": {"carol"}}, user: &User{Name: "carol"}},
		{name: "trusted proxy, no user", certs: []*x509.Certificate{proxy}, header: http.Header{"X-Remote-Group": {"g"}}},
		{name: "no certificate", header: identity},
		{name: "name not allowed", certs: []*x509.Certificate{stranger}, header: identity, err: "x509: subject with cn=someone-else is not in the allowed list"},
		{name: "other CA", certs: []*x509.Certificate{foreign}, header: identity, err: "verifying certificate SN="},
		// A request naming no user is not the proxy's: its certificate is
		// not checked against the proxy's CAs (it is some user's own).
		{name: "other CA, no user", certs: []*x509.Certificate{foreign}, header: http.Header{"X-Remote-Group": {"g"}}},
		{name: "server certificate", certs: []*x509.Certificate{serverEKU}, header: identity, err: "verifying certificate SN="},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/api", nil)
		r.Header = c.header.Clone()
		if c.certs != nil {
			r.TLS = &tls.ConnectionState{PeerCertificates: c.certs}
		}
		u, ok, err := a.AuthenticateRequest(r)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrCertificateVerify) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || ok != (c.user != nil) || !reflect.DeepEqual(u, c.user) {
			t.Errorf("%s: user=%+v ok=%v err=%v, want %+v", c.name, u, ok, err, c.user)
		}
		if ok {
			for k := range r.Header {
				if k != "Accept" {
					t.Errorf("%s: header %s left on the request", c.name, k)
				}
			}
		}
	}
	// Any certificate the CA verifies is a proxy when no names are listed.
	cfg.AllowedNames = nil
	any := NewRequestHeaderAuthenticator(cfg, testBrand)
	r := httptest.NewRequest("GET", "/api", nil)
	r.Header.Set("X-Remote-User", "dave")
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{stranger}}
	if u, ok, err := any.AuthenticateRequest(r); !ok || err != nil || u.Name != "dave" {
		t.Errorf("no allowed names: %v %v %v", u, ok, err)
	}
}

// The chain strips the configured proxy headers from every authenticated
// request, whichever authenticator accepted it, and ignores them from a
// client that is not the proxy.
func TestIdentityHeadersStripped(t *testing.T) {
	t.Parallel()
	proxyCA := newTestCA(t, "proxy-ca")
	rh := NewRequestHeaderAuthenticator(RequestHeaderConfig{
		CAs: proxyCA.pool, UsernameHeaders: []string{"X-Proxy-User"}, GroupHeaders: []string{"X-Proxy-Group"}, ExtraHeaderPrefixes: []string{"X-Proxy-Extra-"},
	}, testBrand)
	chain := NewAuthenticator(AuthConfig{Brand: testBrand, Front: []Authenticator{rh}, LoopbackToken: "tok"})
	r := httptest.NewRequest("GET", "/api", nil)
	r.Header = http.Header{
		"Authorization": {"Bearer tok"}, "X-Proxy-User": {"mallory"}, "X-Proxy-Group": {"x"}, "X-Proxy-Extra-K": {"v"}, "Accept": {"*/*"},
	}
	u, ok, err := chain.AuthenticateRequest(r)
	if !ok || err != nil || u.Name != APIServerUser {
		t.Fatalf("user %v ok=%v err=%v", u, ok, err)
	}
	for k := range r.Header {
		if k != "Accept" && k != "Authorization" {
			t.Errorf("header %s reached the handler", k)
		}
	}
}

func FuzzRequestHeaderUser(f *testing.F) {
	f.Add("X-Remote-User", "bob", "X-Remote-Extra-Foo%2Fbar", "v", "X-Remote-Extra-")
	f.Add("X-Remote-Extra-%", "", "x-remote-group", "g", "")
	f.Add("", "", "", "", "X-")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, prefix string) {
		hdr := http.Header{}
		hdr.Add(k1, v1)
		hdr.Add(k2, v2)
		u := userFromHeaders(hdr, []string{"X-Remote-User"}, []string{"X-Remote-Uid"}, []string{"X-Remote-Group"}, []string{prefix, "X-Remote-Extra-"})
		if u != nil && u.Name == "" {
			t.Fatalf("user without a name: %+v", u)
		}
		if u == nil && hdr.Get("X-Remote-User") != "" {
			t.Fatalf("user header %q ignored", hdr.Get("X-Remote-User"))
		}
	})
}

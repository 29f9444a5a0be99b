package server_test

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"platd/config"
)

// --client-ca-file is re-read when it changes, as upstream's: a CA added
// to it authenticates its clients, in the handshake (which offers it) and
// in verification, and a CA taken out of it no longer does, without a
// restart.
func TestClientCAFileReload(t *testing.T) {
	t.Parallel()
	oldCA, newCA := newProxyPKI(t, "carol"), newProxyPKI(t, "carol")
	caFile := filepath.Join(t.TempDir(), "client-ca.crt")
	if err := os.WriteFile(caFile, oldCA.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
		o.ClientCAFile = caFile
	})
	// 403 from the deny-all authorizer: authenticated; 401: not.
	as := func(cert tls.Certificate) int {
		c := e.clientWith(cert)
		defer c.CloseIdleConnections()
		res, err := c.Get(e.srv.URL() + "/api/v1/namespaces/default/configmaps")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := as(oldCA.certs["carol"]); code != http.StatusForbidden {
		t.Fatalf("client of the file's CA: %d", code)
	}
	if code := as(newCA.certs["carol"]); code != http.StatusUnauthorized {
		t.Fatalf("client of another CA: %d", code)
	}
	if err := os.WriteFile(caFile, newCA.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new CA trusted", func() bool { return as(newCA.certs["carol"]) == http.StatusForbidden })
	eventually(t, "the removed CA no longer trusted", func() bool { return as(oldCA.certs["carol"]) == http.StatusUnauthorized })
	// The published bundle follows: the new CA is added to it; as
	// upstream merges bundles, the removed one stays until it expires.
	caPEM, err := os.ReadFile(filepath.Join(e.opts.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	want := string(caPEM) + string(oldCA.caPEM) + string(newCA.caPEM)
	eventually(t, "the new CA published", func() bool {
		r := e.do("GET", "/api/v1/namespaces/"+platBrand.SystemNamespace+"/configmaps/extension-apiserver-authentication", nil)
		data, _ := r.obj(t)["data"].(map[string]any)
		return data["client-ca-file"] == want
	})
}

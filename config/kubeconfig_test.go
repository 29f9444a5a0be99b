package config

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadKubeconfigClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{"ca.pem": "CA", "c.pem": "CERT", "k.pem": "KEY", "tok": " file-token\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name string
		file string
		want KubeconfigClient
		err  string
	}{
		{name: "files relative to the kubeconfig", file: `
clusters:
- name: hook
  cluster: {server: "https://hook.example/authenticate", certificate-authority: ca.pem, tls-server-name: hook}
users:
- name: platd
  user: {client-certificate: c.pem, client-key: k.pem}
contexts:
- name: webhook
  context: {cluster: hook, user: platd}
current-context: webhook
`, want: KubeconfigClient{Server: "https://hook.example/authenticate", CAPEM: []byte("CA"), TLSServerName: "hook", ClientCertPEM: []byte("CERT"), ClientKeyPEM: []byte("KEY")}},
		{name: "inline data, one context, token file", file: `
clusters:
- name: hook
  cluster: {server: "https://h", certificate-authority-data: ` + b64("CA2") + `}
users:
- name: u
  user: {tokenFile: tok}
contexts:
- name: only
  context: {cluster: hook, user: u}
`, want: KubeconfigClient{Server: "https://h", CAPEM: []byte("CA2"), Token: "file-token"}},
		{name: "no user", file: `
clusters: [{name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x
`, want: KubeconfigClient{Server: "https://h", InsecureSkipTLSVerify: true}},
		{name: "missing context", file: `
clusters: [{name: c, cluster: {server: "https://h"}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: zz
`, err: `context "zz" not found`},
		{name: "several contexts, none current", file: `
contexts: [{name: x, context: {cluster: c}}, {name: y, context: {cluster: c}}]
`, err: "no current-context is set and the file has 2 contexts"},
		{name: "missing cluster", file: `
contexts: [{name: x, context: {cluster: c}}]
`, err: `cluster "c" of context "x" not found`},
		{name: "no server", file: `
clusters: [{name: c, cluster: {}}]
contexts: [{name: x, context: {cluster: c}}]
`, err: `cluster "c" has no server defined`},
		{name: "missing user", file: `
clusters: [{name: c, cluster: {server: "https://h"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
`, err: `user "u" of context "x" not found`},
		{name: "file and data", file: `
clusters: [{name: c, cluster: {server: "https://h", certificate-authority: ca.pem, certificate-authority-data: ` + b64("x") + `}}]
contexts: [{name: x, context: {cluster: c}}]
`, err: "certificate-authority and certificate-authority-data are both specified; only one is allowed"},
		{name: "certificate without key", file: `
clusters: [{name: c, cluster: {server: "https://h"}}]
users: [{name: u, user: {client-certificate: c.pem}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
`, err: "client-certificate and client-key must be given together"},
		{name: "missing file", file: `
clusters: [{name: c, cluster: {server: "https://h", certificate-authority: nope.pem}}]
contexts: [{name: x, context: {cluster: c}}]
`, err: "certificate-authority: open "},
		{name: "not YAML", file: "clusters: [", err: "invalid kubeconfig: "},
	}
	for i, c := range cases {
		path := filepath.Join(dir, "kc"+string(rune('a'+i)))
		if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := LoadKubeconfigClient(path)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrKubeconfig) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v\nwant %+v", c.name, got, err, c.want)
		}
	}
}

func FuzzParseKubeconfigClient(f *testing.F) {
	f.Add([]byte("clusters: [{name: c, cluster: {server: \"https://h\"}}]\ncontexts: [{name: x, context: {cluster: c}}]\n"))
	f.Add([]byte("current-context: [1]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kc, err := ParseKubeconfigClient(data, "")
		if err == nil && kc.Server == "" {
			t.Fatalf("no error and no server")
		}
	})
}

func TestRemoteAuthnValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		mod  func(*Options)
		err  string
	}{
		{"webhook version", func(o *Options) { o.TokenWebhook.Version = "v2" }, `unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"`},
		{"negative ttl", func(o *Options) { o.TokenWebhook.CacheTTL = -1 }, "--authentication-token-webhook-cache-ttl -1ns must not be negative"},
		{"blank username header", func(o *Options) { o.RequestHeader.UsernameHeaders = []string{"X-Remote-User", " "} }, `empty value in "requestheader-username-headers"`},
		{"blank allowed name", func(o *Options) { o.RequestHeader.AllowedNames = []string{""} }, `empty value in "requestheader-allowed-names"`},
		{"uid headers without the standard one", func(o *Options) { o.RequestHeader.UIDHeaders = []string{"X-Uid"} }, "--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work"},
	}
	for _, c := range cases {
		o := Options{DataDir: "d", BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, HistoryRetention: DefaultHistoryRetention}
		c.mod(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
		}
	}
	o := Options{DataDir: "d", BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, HistoryRetention: DefaultHistoryRetention}
	o.RequestHeader.UIDHeaders = []string{"x-remote-uid"}
	if err := o.Validate(); err != nil || o.TokenWebhook.Version != DefaultTokenWebhookVersion {
		t.Errorf("valid options: %v, version %q", err, o.TokenWebhook.Version)
	}
}

//go:build linux

package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"platd/config"
)

// TestKubectlOIDCToken: kubectl with an ID token of a real provider and
// --authentication-config, in the upstream brand.
func TestKubectlOIDCToken(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	k8s, _ := config.LookupBrand("kubernetes")
	p := newOIDCProvider(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "authn.yaml")
	writeFileAtomic(t, file, strings.Replace(p.config("oidc:"),
		config.AuthenticationConfigAPIVersions(platBrand)[0], config.AuthenticationConfigAPIVersions(k8s)[0], 1))
	proc := startPlatd(t, filepath.Join(dir, "data"), "--brand", k8s.Name, "--authentication-config", file)
	k := &kubectlEnv{bin: bin, proc: proc, brand: k8s, environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home")}}
	empty := filepath.Join(dir, "empty.kubeconfig")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	as := func(tok string, args ...string) (string, string, error) {
		base := []string{"--kubeconfig", empty, "--server", proc.url,
			"--certificate-authority", filepath.Join(proc.dataDir, "pki", "ca.crt"), "--token", tok}
		return k.run(t, append(base, args...)...)
	}
	tok := p.token(t, map[string]any{"tenant": "acme", "groups": []string{"dev"}})
	var out, stderr string
	eventually(t, "kubectl auth whoami with an ID token", func() bool {
		out, stderr, err = as(tok, "auth", "whoami", "-o", "json")
		return err == nil
	})
	var r struct {
		Status struct {
			UserInfo struct {
				Username string
				Groups   []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Status.UserInfo.Username != "oidc:alice" ||
		strings.Join(r.Status.UserInfo.Groups, ",") != "dev,system:authenticated" {
		t.Errorf("whoami = %s %s (%v)", out, stderr, err)
	}
	// Authenticated is not authorized: alice reads namespaces once her
	// group is bound to a role that may.
	want := `Error from server (Forbidden): namespaces is forbidden: User "oidc:alice" cannot list resource "namespaces" in API group "" at the cluster scope`
	if _, stderr, err := as(tok, "get", "namespaces", "-o", "name"); err == nil || strings.TrimSpace(stderr) != want {
		t.Errorf("get namespaces unbound: %v %s", err, stderr)
	}
	k.must(t, "--kubeconfig", filepath.Join(proc.dataDir, "admin.kubeconfig"), "create", "clusterrolebinding", "dev-view", "--clusterrole", "view", "--group", "dev")
	eventually(t, "the group's binding in force", func() bool {
		_, _, err := as(tok, "get", "namespaces", "-o", "name")
		return err == nil
	})
	// A token the claim rule refuses is 401: kubectl asks for credentials.
	bad := p.token(t, map[string]any{"tenant": "other"})
	if _, stderr, err := as(bad, "get", "namespaces"); err == nil || !strings.Contains(stderr, "Unauthorized") && !strings.Contains(stderr, "provide credentials") {
		t.Errorf("refused token: %v %s", err, stderr)
	}
}

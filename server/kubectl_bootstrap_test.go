//go:build linux

package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"platd/config"
)

// TestKubectlBootstrapToken creates a bootstrap token as kubeadm does and
// uses it from kubectl with nothing else: no client certificate, only the
// server and CA that cluster-info publishes.
func TestKubectlBootstrapToken(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	brand, _ := config.LookupBrand("kubernetes")
	dir := t.TempDir()
	p := startPlatd(t, filepath.Join(dir, "data"), "--brand", brand.Name, "--enable-bootstrap-token-auth")
	k := &kubectlEnv{bin: bin, proc: p, brand: brand, environ: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"),
		"KUBECONFIG=" + filepath.Join(p.dataDir, "admin.kubeconfig"),
	}}
	k.must(t, "create", "secret", "generic", "bootstrap-token-abc123", "-n", brand.SystemNamespace,
		"--type", brand.BootstrapTokenType(), "--from-literal=token-id=abc123", "--from-literal=token-secret=0123456789abcdef",
		"--from-literal=usage-bootstrap-authentication=true", "--from-literal=usage-bootstrap-signing=true",
		"--from-literal=auth-extra-groups=system:bootstrappers:kubeadm:default-node-token")
	_, errOut, err := k.run(t, "create", "secret", "generic", "bootstrap-token-bad000", "-n", brand.SystemNamespace,
		"--type", brand.BootstrapTokenType(), "--from-literal=token-id=bad000", "--from-literal=token-secret=short")
	if err == nil || !strings.Contains(errOut, `data[token-secret]: Invalid value: "<secret contents redacted>": must match [a-z0-9]{16}`) {
		t.Fatalf("invalid token secret accepted (%v): %s", err, errOut)
	}

	// The joining side knows only cluster-info's server and CA.
	server := k.must(t, "get", "configmap", "cluster-info", "-n", brand.PublicNamespace, "-o", "jsonpath={.data.kubeconfig}")
	if !strings.Contains(server, "server: "+p.url) {
		t.Fatalf("cluster-info kubeconfig does not name %s:\n%s", p.url, server)
	}
	empty := filepath.Join(dir, "empty.kubeconfig")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	join := func(token string, args ...string) (string, string, error) {
		return k.runEnv(t, []string{"KUBECONFIG=" + empty}, append([]string{"--server", p.url,
			"--certificate-authority", filepath.Join(p.dataDir, "pki", "ca.crt"), "--token", token}, args...)...)
	}
	out, errOut, err := join("abc123.0123456789abcdef", "get", "--raw", "/api")
	if err != nil || !strings.Contains(out, `"kind":"APIVersions"`) {
		t.Fatalf("get --raw /api with the bootstrap token: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = join("abc123.0123456789abcdef", "auth", "whoami", "-o", "json")
	if err != nil {
		t.Fatalf("auth whoami with the bootstrap token: %v\n%s%s", err, out, errOut)
	}
	var review struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				UID      string   `json:"uid"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &review); err != nil {
		t.Fatalf("auth whoami -o json: %v\n%s", err, out)
	}
	u := review.Status.UserInfo
	wantGroups := []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"}
	if u.Username != "system:bootstrap:abc123" || u.UID != "" || !slices.Equal(u.Groups, wantGroups) {
		t.Errorf("auth whoami: %+v, want system:bootstrap:abc123 in %v", u, wantGroups)
	}
	_, errOut, err = join("abc123.0123456789abcdee", "get", "--raw", "/api")
	if err == nil || !strings.Contains(errOut, "Unauthorized") {
		t.Fatalf("wrong token secret: %v, stderr %q", err, errOut)
	}
}

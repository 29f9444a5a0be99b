//go:build linux

package server_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"platd/config"
	"regexp"
	"strings"
	"testing"
)

// kubectl auth whoami as the admin, as a user of a kubeconfig made by
// platd kubeconfig, and impersonating with --as/--as-group.
func TestKubectlAuthWhoami(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	out, errOut, err := k.run(t, "auth", "whoami")
	if err != nil {
		t.Fatalf("whoami: %v\n%s", err, errOut)
	}
	// Client certificates carry their fingerprint as a credential id.
	kb, _ := config.LookupBrand("kubernetes")
	certUser := regexp.MustCompile(`^ATTRIBUTE VALUE Username (\S+) Groups \[([^]]*)\] Extra: ` + regexp.QuoteMeta("authentication."+kb.LongDomain+"/credential-id") + ` \[X509SHA256=[0-9a-f]{64}\]$`)
	if m := certUser.FindStringSubmatch(norm(out)); m == nil || m[1] != "platd-admin" || m[2] != "system:masters system:authenticated" {
		t.Errorf("whoami as admin:\n%s", out)
	}
	out, errOut, err = k.run(t, "auth", "whoami", "--as", "bob", "--as-group", "dev", "--as-group", "ops", "--as-uid", "b-1")
	if err != nil {
		t.Fatalf("whoami --as: %v\n%s", err, errOut)
	}
	if got := norm(out); got != "ATTRIBUTE VALUE Username bob UID b-1 Groups [dev ops system:authenticated]" {
		t.Errorf("whoami --as bob:\n%s", out)
	}
	out, errOut, err = k.run(t, "auth", "whoami", "--as", "system:serviceaccount:ns1:robot", "-o", "jsonpath={.status.userInfo.groups}")
	if err != nil || out != `["system:serviceaccounts","system:serviceaccounts:ns1","system:authenticated"]` {
		t.Errorf("whoami --as a service account: %q %v\n%s", out, err, errOut)
	}

	// A kubeconfig for carol in groups dev and qa, by certificate.
	kc := filepath.Join(t.TempDir(), "carol.kubeconfig")
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	b, err := exec.CommandContext(ctx, platdBinary(t), "kubeconfig", "--data-dir", k.proc.dataDir, "--brand", "kubernetes",
		"--user", "carol", "--group", "dev", "--group", "qa", "-o", kc).CombinedOutput()
	if err != nil {
		t.Fatalf("platd kubeconfig: %v\n%s", err, b)
	}
	out, errOut, err = k.run(t, "--kubeconfig", kc, "auth", "whoami")
	if err != nil {
		t.Fatalf("whoami as carol: %v\n%s", err, errOut)
	}
	if m := certUser.FindStringSubmatch(norm(out)); m == nil || m[1] != "carol" || m[2] != "dev qa system:authenticated" {
		t.Errorf("whoami as carol:\n%s", out)
	}
	out, _, err = k.run(t, "--kubeconfig", kc, "config", "current-context")
	if err != nil || strings.TrimSpace(out) != "carol@"+k.brand.ClusterName {
		t.Errorf("current context %q %v", out, err)
	}
}

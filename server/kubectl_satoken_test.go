//go:build linux

package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubectlServiceAccountToken drives `kubectl create token` and uses
// the token as a kubeconfig without a client certificate would.
func TestKubectlServiceAccountToken(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	var tok string
	eventually(t, "the default service account", func() bool {
		out, _, err := k.run(t, "create", "token", "default")
		tok = strings.TrimSpace(out)
		return err == nil && tok != ""
	})
	c := jwtClaims(t, tok)
	if c["sub"] != "system:serviceaccount:default:default" || c["exp"].(float64)-c["iat"].(float64) != 3600 {
		t.Errorf("claims = %v", c)
	}
	// A kubeconfig holding only the server and its CA: the token is the
	// only credential.
	empty := filepath.Join(t.TempDir(), "empty.kubeconfig")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	as := func(tok string, args ...string) (string, string, error) {
		base := []string{"--kubeconfig", empty, "--server", k.proc.url,
			"--certificate-authority", filepath.Join(k.proc.dataDir, "pki", "ca.crt"), "--token", tok}
		return k.run(t, append(base, args...)...)
	}
	// The account may do nothing until it is bound to a role.
	want := `Error from server (Forbidden): configmaps is forbidden: User "system:serviceaccount:default:default" cannot list resource "configmaps" in API group "" in the namespace "default"`
	if _, stderr, err := as(tok, "get", "configmaps", "-n", "default", "-o", "name"); err == nil || strings.TrimSpace(stderr) != want {
		t.Fatalf("get as the unbound service account: %v\n%s", err, stderr)
	}
	k.must(t, "create", "rolebinding", "default-view", "--clusterrole", "view", "--serviceaccount", "default:default", "-n", "default")
	eventually(t, "the service account's binding in force", func() bool {
		_, _, err := as(tok, "get", "configmaps", "-n", "default", "-o", "name")
		return err == nil
	})
	if out, stderr, err := as(tok, "auth", "whoami", "-o", "json"); err == nil {
		var r struct {
			Status struct {
				UserInfo struct {
					Username string
					Groups   []string
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Status.UserInfo.Username != "system:serviceaccount:default:default" ||
			strings.Join(r.Status.UserInfo.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:default,system:authenticated" {
			t.Errorf("whoami = %s (%v)", out, err)
		}
	} else {
		t.Logf("auth whoami not served yet: %s", stderr)
	}

	// A token for another audience, and one bound to a deleted secret, are refused.
	out, stderr, err := k.run(t, "create", "token", "default", "--audience", "vault", "--duration", "10m")
	if err != nil {
		t.Fatalf("create token --audience: %v %s", err, stderr)
	}
	if _, stderr, err := as(strings.TrimSpace(out), "get", "configmaps"); err == nil || !strings.Contains(stderr, "Unauthorized") {
		t.Errorf("wrong audience: err %v, stderr %s", err, stderr)
	}
	if _, stderr, err := k.run(t, "create", "secret", "generic", "anchor", "--from-literal=a=b"); err != nil {
		t.Fatal(stderr)
	}
	out, stderr, err = k.run(t, "create", "token", "default", "--bound-object-kind", "Secret", "--bound-object-name", "anchor")
	if err != nil {
		t.Fatalf("create token --bound-object-kind: %v %s", err, stderr)
	}
	bound := strings.TrimSpace(out)
	if _, stderr, err := as(bound, "get", "configmaps"); err != nil {
		t.Fatalf("bound token: %s", stderr)
	}
	if _, stderr, err := k.run(t, "delete", "secret", "anchor"); err != nil {
		t.Fatal(stderr)
	}
	if _, stderr, err := as(bound, "get", "configmaps"); err == nil || !strings.Contains(stderr, "Unauthorized") {
		t.Errorf("token of a deleted secret: err %v, stderr %s", err, stderr)
	}
	if _, stderr, err := k.run(t, "create", "token", "nope"); err == nil || !strings.Contains(stderr, `serviceaccounts "nope" not found`) {
		t.Errorf("missing account: %v %s", err, stderr)
	}
}

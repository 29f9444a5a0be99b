//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestKubectlRBAC writes roles and bindings with kubectl's generators and
// auth reconcile as admin, then acts as alice through impersonation.
func TestKubectlRBAC(t *testing.T) {
	t.Parallel()
	k := newKubectlEnvFlags(t, "--authorization-mode", "RBAC")
	g := k.brand.Group("rbac.authorization")
	// expect runs kubectl until its output holds want: a binding takes
	// effect once the authorizer has seen it.
	expect := func(t *testing.T, want string, args ...string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var out, errOut string
		for time.Now().Before(deadline) {
			out, errOut, _ = k.run(t, args...)
			if strings.Contains(out+errOut, want) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("kubectl %s: want %q in\nstdout: %s\nstderr: %s", strings.Join(args, " "), want, out, errOut)
	}
	asAlice := []string{"--as", "alice", "-n", "ns1"}
	alice := func(args ...string) []string { return append(args, asAlice...) }

	k.must(t, "create", "namespace", "ns1")
	for _, c := range [][2]string{
		{"role." + g + "/cm-reader created\n", "create role cm-reader -n ns1 --verb=get,list --resource=configmaps"},
		{"rolebinding." + g + "/alice-cm created\n", "create rolebinding alice-cm -n ns1 --role=cm-reader --user=alice"},
		{"clusterrole." + g + "/ns-viewer created\n", "create clusterrole ns-viewer --verb=get --resource=namespaces"},
		{"clusterrolebinding." + g + "/alice-ns created\n", "create clusterrolebinding alice-ns --clusterrole=ns-viewer --user=alice"},
	} {
		if out := k.must(t, strings.Fields(c[1])...); out != c[0] {
			t.Errorf("kubectl %s printed %q, want %q", c[1], out, c[0])
		}
	}
	manifest := `apiVersion: ` + g + `/v1
kind: Role
metadata:
  name: pod-reader
  namespace: ns1
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list"]
- apiGroups: ["` + g + `"]
  resources: ["roles"]
  verbs: ["create"]
---
apiVersion: ` + g + `/v1
kind: RoleBinding
metadata:
  name: alice-pods
  namespace: ns1
roleRef:
  apiGroup: ` + g + `
  kind: Role
  name: pod-reader
subjects:
- apiGroup: ` + g + `
  kind: User
  name: alice
`
	file := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out := k.must(t, "auth", "reconcile", "-f", file)
	for _, want := range []string{"role." + g + "/pod-reader reconciled", "rolebinding." + g + "/alice-pods reconciled"} {
		if !strings.Contains(out, want) {
			t.Errorf("auth reconcile printed %q, want %q", out, want)
		}
	}
	// A second run has nothing to add.
	if out := k.must(t, "auth", "reconcile", "-f", file); strings.Contains(out, "reconciliation required") {
		t.Errorf("second reconcile still changes: %s", out)
	}

	// alice reads what her bindings allow, and only that.
	expect(t, "DATA", alice("get", "configmaps")...)
	expect(t, "No resources found in ns1 namespace.", alice("get", "pods")...)
	expect(t, "ns1", "get", "namespace", "ns1", "--as", "alice")
	_, errOut, err := k.run(t, alice("get", "secrets")...)
	if want := `Error from server (Forbidden): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "ns1"`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("get secrets as alice: %v %s", err, errOut)
	}
	_, errOut, err = k.run(t, alice("delete", "configmap", "x")...)
	if want := `configmaps "x" is forbidden: User "alice" cannot delete resource "configmaps" in API group "" in the namespace "ns1"`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("delete configmap as alice: %v %s", err, errOut)
	}
	// She may create roles, but grant only what she holds.
	if out := k.must(t, alice("create", "role", "mine", "--verb=get", "--resource=pods")...); out != "role."+g+"/mine created\n" {
		t.Errorf("create role as alice printed %q", out)
	}
	_, errOut, err = k.run(t, alice("create", "role", "secrets", "--verb=get", "--resource=secrets")...)
	want := `roles.` + g + ` "secrets" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` +
		"\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`
	if err == nil || !strings.Contains(errOut, want) {
		t.Errorf("escalating role as alice: %v %s", err, errOut)
	}

	// auth can-i asks the server's access reviews.
	for _, c := range []struct {
		args []string
		want string
	}{
		{alice("auth", "can-i", "list", "configmaps"), "yes\n"},
		{alice("auth", "can-i", "list", "secrets"), "no\n"},
		{alice("auth", "can-i", "get", "pods"), "yes\n"},
		{alice("auth", "can-i", "delete", "pods"), "no\n"},
		{[]string{"auth", "can-i", "delete", "secrets", "-n", "ns1"}, "yes\n"},
	} {
		out, _, _ := k.run(t, c.args...)
		if out != c.want {
			t.Errorf("kubectl %s printed %q, want %q", strings.Join(c.args, " "), out, c.want)
		}
	}
	// --list shows alice's rules in ns1 from her bindings.
	list := k.must(t, alice("auth", "can-i", "--list")...)
	for _, line := range []string{`configmaps\s+\[\]\s+\[\]\s+\[get list\]`, `pods\s+\[\]\s+\[\]\s+\[get list\]`,
		`roles\.` + regexp.QuoteMeta(g) + `\s+\[\]\s+\[\]\s+\[create\]`, `namespaces\s+\[\]\s+\[\]\s+\[get\]`} {
		if !regexp.MustCompile(`(?m)^` + line + `\s*$`).MatchString(list) {
			t.Errorf("auth can-i --list has no line %s:\n%s", line, list)
		}
	}
	if strings.Contains(list, "secrets") {
		t.Errorf("auth can-i --list lists secrets:\n%s", list)
	}
}

//go:build linux

package server_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// canI runs kubectl auth can-i and returns its output and exit code.
func (k *kubectlEnv) canI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	out, errOut, err := k.run(t, append([]string{"auth", "can-i"}, args...)...)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, errOut, 0
	case errors.As(err, &exit):
		return out, errOut, exit.ExitCode()
	}
	t.Fatalf("kubectl auth can-i %s: %v", strings.Join(args, " "), err)
	return "", "", 0
}

// kubectl auth can-i against the chains of today's modes: the admin is in
// system:masters and may do anything; under AlwaysDeny others may not even
// ask, unless impersonation puts them in system:masters.
func TestKubectlAuthCanI(t *testing.T) {
	t.Parallel()
	deny := newKubectlEnvFlags(t, "--authorization-mode", "AlwaysDeny")
	allow := newKubectlEnvFlags(t, "--authorization-mode", "AlwaysAllow")
	const (
		listHeader = "Resources   Non-Resource URLs   Resource Names   Verbs\n"
		everything = listHeader + "*.*         []                  []               [*]\n            [*]                 []               [*]\n"
	)
	for _, c := range []struct {
		name   string
		k      *kubectlEnv
		args   []string
		out    string
		errOut string
		code   int
	}{
		{"admin under AlwaysDeny", deny, []string{"delete", "nodes"}, "yes\n", "Warning: resource 'nodes' is not namespace scoped\n\n", 0},
		{"admin, a named object and a subresource", deny, []string{"get", "pods/p1", "--subresource", "log", "-n", "ns1"}, "yes\n", "", 0},
		{"admin, a path", deny, []string{"get", "/healthz"}, "yes\n", "", 0},
		{"admin, an unknown resource", deny, []string{"get", "foos"}, "yes\n", "Warning: the server doesn't have a resource type 'foos'\n\n", 0},
		{"alice may not ask", deny, []string{"get", "pods", "--as", "alice"}, "",
			"Error from server (Forbidden): selfsubjectaccessreviews." + deny.brand.Group("authorization") + " is forbidden: User \"alice\" cannot create resource \"selfsubjectaccessreviews\" in API group \"" + deny.brand.Group("authorization") + "\" at the cluster scope: Everything is forbidden.\n", 1},
		{"alice as a master", deny, []string{"get", "secrets", "--as", "alice", "--as-group", "system:masters", "-A"}, "yes\n", "", 0},
		// The masters' bypass lists no rules, and AlwaysDeny none either.
		{"admin's list under AlwaysDeny", deny, []string{"--list", "-n", "ns1"}, listHeader, "", 0},
		{"anyone under AlwaysAllow", allow, []string{"create", "deployments.apps", "--as", "alice"}, "yes\n", "", 0},
		{"alice's list under AlwaysAllow", allow, []string{"--list", "-n", "ns1", "--as", "alice"}, everything, "", 0},
	} {
		out, errOut, code := c.k.canI(t, c.args...)
		if out != c.out || errOut != c.errOut || code != c.code {
			t.Errorf("%s: can-i %s: exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q", c.name, strings.Join(c.args, " "), code, out, errOut, c.code, c.out, c.errOut)
		}
	}
}

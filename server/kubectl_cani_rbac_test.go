//go:build linux

package server_test

import (
	"strings"
	"testing"
)

// kubectl auth can-i under RBAC: alice with a RoleBinding, a service
// account bound in its namespace, her --list, and a "no" with the chain's
// reason when AlwaysDeny follows RBAC.
func TestKubectlAuthCanIRBAC(t *testing.T) {
	t.Parallel()
	k := newKubectlEnvFlags(t, "--authorization-mode", "RBAC,AlwaysDeny")
	k.must(t, "create", "namespace", "ns1")
	k.must(t, "create", "role", "r1", "-n", "ns1", "--verb", "list,get", "--resource", "configmaps")
	k.must(t, "create", "rolebinding", "rb1", "-n", "ns1", "--role", "r1", "--user", "alice", "--serviceaccount", "ns1:robot")
	const no = "no - Everything is forbidden.\n"
	// The authorizer follows bindings from the store's watch.
	eventually(t, "alice's binding takes effect", func() bool {
		out, _, _ := k.canI(t, "list", "configmaps", "-n", "ns1", "--as", "alice")
		return out == "yes\n"
	})
	for _, c := range []struct {
		name string
		args []string
		out  string
		code int
	}{
		{"alice in her namespace", []string{"list", "configmaps", "-n", "ns1", "--as", "alice"}, "yes\n", 0},
		{"alice, a named object", []string{"get", "configmaps/c1", "-n", "ns1", "--as", "alice"}, "yes\n", 0},
		{"alice, another verb", []string{"delete", "configmaps", "-n", "ns1", "--as", "alice"}, no, 1},
		{"alice elsewhere", []string{"list", "configmaps", "-n", "default", "--as", "alice"}, no, 1},
		{"alice, a discovery path", []string{"get", "/api", "--as", "alice"}, "yes\n", 0},
		{"alice, another path", []string{"get", "/logs", "--as", "alice"}, no, 1},
		{"the service account", []string{"get", "configmaps", "-n", "ns1", "--as", "system:serviceaccount:ns1:robot"}, "yes\n", 0},
		{"another service account", []string{"get", "configmaps", "-n", "ns1", "--as", "system:serviceaccount:ns1:other"}, no, 1},
		{"the admin", []string{"delete", "secrets", "-A"}, "yes\n", 0},
	} {
		out, errOut, code := k.canI(t, c.args...)
		if out != c.out || code != c.code {
			t.Errorf("%s: can-i %s: exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q", c.name, strings.Join(c.args, " "), code, out, errOut, c.code, c.out)
		}
	}
	// kubectl breaks the rules down and prints them; the non-resource
	// rules of system:discovery and system:public-info-viewer overlap.
	authn, authz := k.brand.Group("authentication"), k.brand.Group("authorization")
	want := "" +
		"Resources                                       Non-Resource URLs   Resource Names   Verbs\n" +
		"selfsubjectreviews." + authn + "        []                  []               [create]\n" +
		"selfsubjectaccessreviews." + authz + "   []                  []               [create]\n" +
		"selfsubjectrulesreviews." + authz + "    []                  []               [create]\n" +
		"                                                [/api/*]            []               [get]\n" +
		"                                                [/api]              []               [get]\n" +
		"                                                [/apis/*]           []               [get]\n" +
		"                                                [/apis]             []               [get]\n" +
		"                                                [/healthz]          []               [get]\n" +
		"                                                [/healthz]          []               [get]\n" +
		"                                                [/livez]            []               [get]\n" +
		"                                                [/livez]            []               [get]\n" +
		"                                                [/openapi/*]        []               [get]\n" +
		"                                                [/openapi]          []               [get]\n" +
		"                                                [/readyz]           []               [get]\n" +
		"                                                [/readyz]           []               [get]\n" +
		"                                                [/version/]         []               [get]\n" +
		"                                                [/version/]         []               [get]\n" +
		"                                                [/version]          []               [get]\n" +
		"                                                [/version]          []               [get]\n" +
		"configmaps                                      []                  []               [list get]\n"
	out, errOut, code := k.canI(t, "--list", "-n", "ns1", "--as", "alice")
	if out != want || errOut != "" || code != 0 {
		t.Errorf("can-i --list: exit %d\n%s\nstderr %q\nwant\n%s", code, out, errOut, want)
	}
}

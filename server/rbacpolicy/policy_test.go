package rbacpolicy

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"platd/config"
	"platd/server/registry"
)

// upstreamPolicy is the default policy of a v1.32 server in the kubernetes
// brand: the cluster roles and bindings as it served them, the namespaced
// ones from the reference's tables.
type upstreamPolicy struct {
	ClusterRoles, ClusterRoleBindings, Roles, RoleBindings []registry.Object
}

func loadUpstream(t *testing.T) upstreamPolicy {
	t.Helper()
	raw, err := os.ReadFile("../testdata/upstream/rbac-default-policy.json")
	if err != nil {
		t.Fatal(err)
	}
	var p upstreamPolicy
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// comparable drops what the upstream capture has that a default object
// leaves to the server: kind, apiVersion, and the rules of aggregated
// roles (null until the aggregation controller fills them).
func comparable(o registry.Object) string {
	o = registry.Object(jsonCopy(o))
	delete(o, "kind")
	delete(o, "apiVersion")
	if o["rules"] == nil {
		delete(o, "rules")
	}
	j, _ := json.Marshal(o)
	return string(j)
}

func jsonCopy(v any) map[string]any {
	j, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(j, &m)
	return m
}

func key(o registry.Object) string { return Namespace(o) + "/" + Name(o) }

func TestDefaultPolicyIsUpstreams(t *testing.T) {
	b := config.Brands["kubernetes"]
	got := For(b).Objects(b)
	want := loadUpstream(t)
	for _, c := range []struct {
		what      string
		got, want []registry.Object
	}{
		{"clusterroles", got.ClusterRoles, want.ClusterRoles},
		{"clusterrolebindings", got.ClusterRoleBindings, want.ClusterRoleBindings},
		{"roles", got.Roles, want.Roles},
		{"rolebindings", got.RoleBindings, want.RoleBindings},
	} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s: %d objects, want %d", c.what, len(c.got), len(c.want))
		}
		byKey := map[string]registry.Object{}
		for _, o := range c.got {
			if byKey[key(o)] != nil {
				t.Errorf("%s: %s twice", c.what, key(o))
			}
			byKey[key(o)] = o
		}
		for _, w := range c.want {
			g := byKey[key(w)]
			if g == nil {
				t.Errorf("%s: %s missing", c.what, key(w))
				continue
			}
			if comparable(g) != comparable(w) {
				t.Errorf("%s %s:\n got  %s\n want %s", c.what, key(w), comparable(g), comparable(w))
			}
		}
	}
}

// TestUpstreamOrder checks the first and last objects of each list, whose
// order is upstream's.
func TestUpstreamOrder(t *testing.T) {
	b := config.Brands["kubernetes"]
	p := For(b)
	names := func(n int, f func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	roles := names(len(p.ClusterRoles), func(i int) string { return p.ClusterRoles[i].Name })
	if roles[0] != "cluster-admin" || roles[5] != "admin" || roles[30] != "system:kube-scheduler" ||
		roles[31] != controllerPrefix+"attachdetach-controller" || roles[len(roles)-1] != controllerPrefix+"legacy-service-account-token-cleaner" {
		t.Errorf("cluster role order: %v", roles)
	}
	bindings := names(len(p.ClusterRoleBindings), func(i int) string { return p.ClusterRoleBindings[i].Name })
	if bindings[0] != "cluster-admin" || bindings[11] != "system:service-account-issuer-discovery" || len(bindings) != 12+33 {
		t.Errorf("cluster role binding order: %v", bindings)
	}
}

// TestPlatBrandSpelling: the plat brand's policy names no upstream
// spelling, and is the kubernetes one with the brand's strings swapped.
func TestPlatBrandSpelling(t *testing.T) {
	k, b := config.Brands["kubernetes"], config.Brands["plat"]
	plat, _ := json.Marshal(For(b).Objects(b))
	kube, _ := json.Marshal(For(k).Objects(k))
	for _, s := range []string{k.Domain, k.LongDomain, k.SystemNamespace, k.PublicNamespace, k.LegacyTokenTrackingConfigMap} {
		if strings.Contains(string(plat), s) {
			t.Errorf("plat policy spells %q", s)
		}
	}
	swapped := strings.NewReplacer(k.LegacyTokenTrackingConfigMap, b.LegacyTokenTrackingConfigMap, k.Domain, b.Domain, k.LongDomain, b.LongDomain,
		k.SystemNamespace, b.SystemNamespace, k.PublicNamespace, b.PublicNamespace).Replace(string(kube))
	var x, y any
	_ = json.Unmarshal(plat, &x)
	_ = json.Unmarshal([]byte(swapped), &y)
	if !reflect.DeepEqual(x, y) {
		t.Errorf("plat policy is not the kubernetes one rebranded")
	}
}

func TestNodeRules(t *testing.T) {
	b := config.Brands["plat"]
	rules := NodeRules(b)
	var node ClusterRole
	for _, r := range For(b).ClusterRoles {
		if r.Name == "system:node" {
			node = r
		}
	}
	if len(rules) != 22 || len(rules) != len(node.Rules) {
		t.Fatalf("%d node rules, role has %d", len(rules), len(node.Rules))
	}
	for i, r := range node.Rules {
		n := rules[i]
		if !reflect.DeepEqual([][]string{n.Verbs, n.APIGroups, n.Resources, n.ResourceNames}, [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames}) {
			t.Errorf("rule %d: %+v, role has %+v", i, n, r)
		}
	}
	if rules[1].APIGroups[0] != b.Group("authorization") || !reflect.DeepEqual(rules[1].Resources, []string{"localsubjectaccessreviews", "subjectaccessreviews"}) {
		t.Errorf("rule 1: %+v", rules[1])
	}
}

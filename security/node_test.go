package security

import (
	"context"
	"errors"
	"testing"

	"platd/config"
)

func TestNodeGraph(t *testing.T) {
	t.Parallel()
	g := NewNodeGraph()
	p1 := &NodePodRefs{Node: "n1", Secrets: []string{"s1", "shared"}, ConfigMaps: []string{"c1"}, PVCs: []string{"claim"}, ServiceAccounts: []string{"sa"}, ResourceClaims: []string{"rc"}}
	p2 := &NodePodRefs{Node: "n2", Secrets: []string{"shared"}}
	g.SetPod("ns", "p1", p1)
	g.SetPod("ns", "p2", p2)
	g.SetPV("pv1", &NodePVRefs{ClaimNamespace: "ns", ClaimName: "claim", Secrets: []NodeRef{{"other", "pvsecret"}}})
	g.SetPV("pv2", &NodePVRefs{ClaimNamespace: "ns", ClaimName: "unused", Secrets: []NodeRef{{"other", "pv2secret"}}})
	g.SetVolumeAttachment("va1", "n1")
	g.SetResourceSlice("slice1", "n2")

	type q struct {
		node     string
		kind     NodeObject
		ns, name string
		want     bool
	}
	check := func(step string, qs []q) {
		t.Helper()
		for _, c := range qs {
			if got := g.HasPath(c.node, c.kind, c.ns, c.name); got != c.want {
				t.Errorf("%s: HasPath(%s, %s, %s/%s) = %v, want %v", step, c.node, c.kind, c.ns, c.name, got, c.want)
			}
		}
	}
	check("initial", []q{
		{"n1", NodePod, "ns", "p1", true},
		{"n2", NodePod, "ns", "p1", false},
		{"n1", NodeSecret, "ns", "s1", true},
		{"n2", NodeSecret, "ns", "s1", false},
		{"n1", NodeSecret, "other", "s1", false},
		{"n1", NodeSecret, "ns", "shared", true},
		{"n2", NodeSecret, "ns", "shared", true},
		{"n1", NodeConfigMap, "ns", "c1", true},
		{"n1", NodeConfigMap, "ns", "s1", false},
		{"n1", NodePVC, "ns", "claim", true},
		{"n1", NodePV, "", "pv1", true},
		{"n2", NodePV, "", "pv1", false},
		{"n1", NodePV, "", "pv2", false},
		{"n1", NodeSecret, "other", "pvsecret", true},
		{"n2", NodeSecret, "other", "pvsecret", false},
		{"n1", NodeSecret, "other", "pv2secret", false},
		{"n1", NodeServiceAccount, "ns", "sa", true},
		{"n1", NodeResourceClaim, "ns", "rc", true},
		{"n1", NodeVolumeAttachment, "", "va1", true},
		{"n2", NodeVolumeAttachment, "", "va1", false},
		{"n2", NodeResourceSlice, "", "slice1", true},
		{"n1", NodeResourceSlice, "", "slice1", false},
		{"n3", NodeSecret, "ns", "shared", false},
	})

	// Moving p1 away and deleting p2 takes their objects with them; a
	// secret two pods share stays while one of them is left.
	g.SetPod("ns", "p2", nil)
	check("p2 deleted", []q{{"n2", NodeSecret, "ns", "shared", false}, {"n1", NodeSecret, "ns", "shared", true}, {"n2", NodePod, "ns", "p2", false}})
	g.SetPod("ns", "p1", &NodePodRefs{Node: "n3", Secrets: []string{"s1"}})
	check("p1 moved", []q{
		{"n1", NodeSecret, "ns", "s1", false}, {"n3", NodeSecret, "ns", "s1", true},
		{"n1", NodeSecret, "ns", "shared", false}, {"n1", NodePV, "", "pv1", false}, {"n1", NodeSecret, "other", "pvsecret", false},
	})
	g.SetPod("ns", "p1", &NodePodRefs{}) // unbound: no node
	check("p1 unbound", []q{{"n3", NodeSecret, "ns", "s1", false}, {"n3", NodePod, "ns", "p1", false}})
	if len(g.reach) != 0 || len(g.pods) != 0 {
		t.Errorf("empty graph keeps %d reach entries, %d pods", len(g.reach), len(g.pods))
	}

	// A claim bound later makes its volume and the volume's secrets
	// reachable; removing the volume takes them away.
	g.SetPod("ns", "p3", &NodePodRefs{Node: "n1", PVCs: []string{"unused"}})
	check("pv2 claimed", []q{{"n1", NodePV, "", "pv2", true}, {"n1", NodeSecret, "other", "pv2secret", true}})
	g.SetPV("pv2", nil)
	check("pv2 deleted", []q{{"n1", NodePV, "", "pv2", false}, {"n1", NodeSecret, "other", "pv2secret", false}})
	g.SetVolumeAttachment("va1", "")
	check("va1 deleted", []q{{"n1", NodeVolumeAttachment, "", "va1", false}})

	// Replace swaps the whole set.
	g.ReplacePods(map[NodeRef]*NodePodRefs{{"ns", "p9"}: {Node: "n9", ConfigMaps: []string{"c9"}}})
	check("replaced", []q{{"n9", NodeConfigMap, "ns", "c9", true}, {"n1", NodePV, "", "pv2", false}, {"n1", NodePVC, "ns", "unused", false}})
	g.ReplacePVs(nil)
	g.ReplaceVolumeAttachments(map[string]string{"va2": "n9", "va3": ""})
	g.ReplaceResourceSlices(nil)
	check("replaced all", []q{{"n9", NodeVolumeAttachment, "", "va2", true}, {"", NodeVolumeAttachment, "", "va3", false}, {"n2", NodeResourceSlice, "", "slice1", false}})
}

func TestNodeIdentity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		u      *User
		node   string
		isNode bool
	}{
		{&User{Name: "system:node:n1", Groups: []string{NodesGroup}}, "n1", true},
		{&User{Name: "system:node:", Groups: []string{NodesGroup}}, "", true},
		{&User{Name: "system:node:n1"}, "", false},
		{&User{Name: "n1", Groups: []string{NodesGroup}}, "", false},
		{nil, "", false},
	} {
		if node, isNode := NodeIdentity(c.u); node != c.node || isNode != c.isNode {
			t.Errorf("%+v: %q %v", c.u, node, isNode)
		}
	}
}

func TestNodeAuthorizer(t *testing.T) {
	t.Parallel()
	b := config.Brands["plat"]
	g := NewNodeGraph()
	g.SetPod("ns", "p1", &NodePodRefs{Node: "n1", Secrets: []string{"s1"}, ConfigMaps: []string{"c1"}, PVCs: []string{"claim"}, ServiceAccounts: []string{"sa"}})
	g.SetPV("pv1", &NodePVRefs{ClaimNamespace: "ns", ClaimName: "claim"})
	g.SetVolumeAttachment("va1", "n1")
	g.SetResourceSlice("slice1", "n1")
	rules := []ResourceRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"services", "endpoints"}},
		{Verbs: []string{"create"}, APIGroups: []string{b.Group("certificates")}, Resources: []string{"certificatesigningrequests"}},
		{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"ns"}},
	}
	z := NewNodeAuthorizer(g, rules, b)
	n1 := &User{Name: "system:node:n1", Groups: []string{NodesGroup, AllAuthenticated}}
	res := func(u *User, verb, group, resource, sub, ns, name string) Attributes {
		return Attributes{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
	}
	sel := func(a Attributes, key, value string) Attributes {
		a.FieldSelector = []SelectorRequirement{{Key: key, Operator: "In", Values: []string{value}}}
		return a
	}
	const noRel = "no relationship found between node 'n1' and this object"
	st, co, rs := b.Group("storage"), b.Group("coordination"), b.Group("resource")
	tests := []struct {
		name   string
		a      Attributes
		want   Decision
		reason string
	}{
		{"not a node", res(&User{Name: "alice", Groups: []string{AllAuthenticated}}, "get", "", "secrets", "", "ns", "s1"), DecisionNoOpinion, ""},
		{"node without name", res(&User{Name: "system:node:", Groups: []string{NodesGroup}}, "get", "", "secrets", "", "ns", "s1"), DecisionNoOpinion, `unknown node for user "system:node:"`},
		{"own pod's secret", res(n1, "get", "", "secrets", "", "ns", "s1"), DecisionAllow, ""},
		{"own pod's secret by watch", res(n1, "watch", "", "secrets", "", "ns", "s1"), DecisionAllow, ""},
		{"other secret", res(n1, "get", "", "secrets", "", "ns", "s2"), DecisionNoOpinion, noRel},
		{"secret list without name", res(n1, "list", "", "secrets", "", "ns", ""), DecisionNoOpinion, "No Object name found"},
		{"secret update", res(n1, "update", "", "secrets", "", "ns", "s1"), DecisionNoOpinion, "can only read resources of this type"},
		{"secret subresource", res(n1, "get", "", "secrets", "x", "ns", "s1"), DecisionNoOpinion, "cannot read subresource"},
		{"secret cluster-wide", res(n1, "list", "", "secrets", "", "", ""), DecisionNoOpinion, "can only read namespaced object of this type"},
		{"own pod's configmap", res(n1, "get", "", "configmaps", "", "ns", "c1"), DecisionAllow, ""},
		{"other configmap", res(n1, "get", "", "configmaps", "", "ns", "s1"), DecisionNoOpinion, noRel},
		{"pvc get", res(n1, "get", "", "persistentvolumeclaims", "", "ns", "claim"), DecisionAllow, ""},
		{"pvc list", res(n1, "list", "", "persistentvolumeclaims", "", "ns", ""), DecisionNoOpinion, "can only get individual resources of this type"},
		{"pvc status patch", res(n1, "patch", "", "persistentvolumeclaims", "status", "ns", "claim"), DecisionAllow, ""},
		{"pvc status get", res(n1, "get", "", "persistentvolumeclaims", "status", "ns", "claim"), DecisionNoOpinion, "can only get/update/patch this type"},
		{"pv through claim", res(n1, "get", "", "persistentvolumes", "", "", "pv1"), DecisionAllow, ""},
		{"pv subresource", res(n1, "get", "", "persistentvolumes", "status", "", "pv1"), DecisionNoOpinion, "cannot get subresource"},
		{"unknown pv", res(n1, "get", "", "persistentvolumes", "", "", "pv9"), DecisionNoOpinion, noRel},
		{"volume attachment", res(n1, "get", st, "volumeattachments", "", "", "va1"), DecisionAllow, ""},
		{"resource claim unrelated", res(n1, "get", rs, "resourceclaims", "", "ns", "rc"), DecisionNoOpinion, noRel},
		{"token of pod's service account", res(n1, "create", "", "serviceaccounts", "token", "ns", "sa"), DecisionAllow, ""},
		{"token of other service account", res(n1, "create", "", "serviceaccounts", "token", "ns", "default"), DecisionNoOpinion, noRel},
		{"service account get", res(n1, "get", "", "serviceaccounts", "", "ns", "sa"), DecisionNoOpinion, "can only create tokens for individual service accounts"},
		{"service account create", res(n1, "create", "", "serviceaccounts", "", "ns", "sa"), DecisionNoOpinion, "can only create token subresource of serviceaccount"},
		{"own lease", res(n1, "update", co, "leases", "", b.NodeLeaseNamespace, "n1"), DecisionAllow, ""},
		{"lease create", res(n1, "create", co, "leases", "", b.NodeLeaseNamespace, ""), DecisionAllow, ""},
		{"other lease", res(n1, "get", co, "leases", "", b.NodeLeaseNamespace, "n2"), DecisionNoOpinion, "can only access node lease with the same name as the requesting node"},
		{"lease elsewhere", res(n1, "get", co, "leases", "", "default", "n1"), DecisionNoOpinion, `can only access leases in the "` + b.NodeLeaseNamespace + `" system namespace`},
		{"lease list", res(n1, "list", co, "leases", "", b.NodeLeaseNamespace, ""), DecisionNoOpinion, "can only get, create, update, patch, or delete a node lease"},
		{"own csinode", res(n1, "patch", st, "csinodes", "", "", "n1"), DecisionAllow, ""},
		{"other csinode", res(n1, "get", st, "csinodes", "", "", "n2"), DecisionNoOpinion, "can only access CSINode with the same name as the requesting node"},
		{"csinode watch", res(n1, "watch", st, "csinodes", "", "", "n1"), DecisionNoOpinion, "can only get, create, update, patch, or delete a CSINode"},
		{"csinode subresource", res(n1, "get", st, "csinodes", "status", "", "n1"), DecisionNoOpinion, "cannot authorize CSINode subresources"},
		{"own slice", res(n1, "delete", rs, "resourceslices", "", "", "slice1"), DecisionAllow, ""},
		{"slice create", res(n1, "create", rs, "resourceslices", "", "", ""), DecisionAllow, ""},
		{"slice list by node", sel(res(n1, "list", rs, "resourceslices", "", "", ""), "spec.nodeName", "n1"), DecisionAllow, ""},
		{"slice list", res(n1, "list", rs, "resourceslices", "", "", ""), DecisionNoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector"},
		{"slice proxy", res(n1, "proxy", rs, "resourceslices", "", "", "slice1"), DecisionNoOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection"},
		{"own node", res(n1, "get", "", "nodes", "", "", "n1"), DecisionAllow, ""},
		{"node create", res(n1, "create", "", "nodes", "", "", ""), DecisionAllow, ""},
		{"node status", res(n1, "patch", "", "nodes", "status", "", "n1"), DecisionAllow, ""},
		{"all nodes", res(n1, "list", "", "nodes", "", "", ""), DecisionNoOpinion, "node 'n1' cannot read all nodes, only its own Node object"},
		{"other node", res(n1, "get", "", "nodes", "", "", "n2"), DecisionNoOpinion, "node 'n1' cannot read 'n2', only its own Node object"},
		{"node delete", res(n1, "delete", "", "nodes", "", "", "n1"), DecisionNoOpinion, ""},
		{"bound pod", res(n1, "get", "", "pods", "", "ns", "p1"), DecisionAllow, ""},
		{"other pod", res(n1, "get", "", "pods", "", "ns", "p2"), DecisionNoOpinion, noRel},
		{"pods by node", sel(res(n1, "watch", "", "pods", "", "", ""), "spec.nodeName", "n1"), DecisionAllow, ""},
		{"pods by other node", sel(res(n1, "list", "", "pods", "", "", ""), "spec.nodeName", "n2"), DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"one pod by watch", res(n1, "watch", "", "pods", "", "ns", "p1"), DecisionAllow, ""},
		{"mirror pod", res(n1, "create", "", "pods", "", "ns", ""), DecisionAllow, ""},
		{"pod status", res(n1, "update", "", "pods", "status", "ns", "p9"), DecisionAllow, ""},
		{"eviction", res(n1, "create", "", "pods", "eviction", "ns", "p9"), DecisionAllow, ""},
		{"pod update", res(n1, "update", "", "pods", "", "ns", "p1"), DecisionNoOpinion, ""},
		{"role rule", res(n1, "watch", "", "services", "", "", ""), DecisionAllow, ""},
		{"role rule other verb", res(n1, "delete", "", "services", "", "ns", "x"), DecisionNoOpinion, ""},
		{"role rule group", res(n1, "create", b.Group("certificates"), "certificatesigningrequests", "", "", ""), DecisionAllow, ""},
		{"role rule any subresource", res(n1, "get", "apps", "deployments", "scale", "ns", "d"), DecisionAllow, ""},
		{"role rule not the resource", res(n1, "get", "apps", "deployments", "", "ns", "d"), DecisionNoOpinion, ""},
		{"role rule names", res(n1, "get", "", "namespaces", "", "ns", "ns"), DecisionAllow, ""},
		{"role rule other name", res(n1, "get", "", "namespaces", "", "other", "other"), DecisionNoOpinion, ""},
		{"non-resource", Attributes{User: n1, Verb: "get", Path: "/healthz"}, DecisionNoOpinion, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, reason, err := z.Authorize(context.Background(), tt.a)
			if err != nil || d != tt.want || reason != tt.reason {
				t.Fatalf("got %v %q %v, want %v %q", d, reason, err, tt.want, tt.reason)
			}
		})
	}
	if _, incomplete, err := z.RulesFor(context.Background(), n1, "ns"); !incomplete || !errors.Is(err, ErrNodeRules) || err.Error() != "node authorizer does not support user rule resolution" {
		t.Errorf("node rules: %v %v", incomplete, err)
	}
	if r, incomplete, err := z.RulesFor(context.Background(), &User{Name: "alice"}, "ns"); incomplete || err != nil || len(r.Resource) != 0 {
		t.Errorf("user rules: %v %v %v", r, incomplete, err)
	}
}

package rbacpolicy

import (
	"encoding/json"
	"strings"
	"testing"

	"platd/config"
	"platd/server/registry"
)

// mustObj decodes s with the plat brand's strings put in for $BOOT (the
// bootstrapping label), $AUTO (the autoupdate annotation), $RBAC (the
// group) and $SYS (the system namespace).
func mustObj(t *testing.T, s string) registry.Object {
	t.Helper()
	b := config.Brands["plat"]
	s = strings.NewReplacer("$BOOT", b.BootstrappingLabel(), "$AUTO", b.RBACAutoUpdateAnnotation(), "$RBAC", b.Group("rbac.authorization"),
		"$SYS", b.SystemNamespace).Replace(s)
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

func compact(v any) string {
	j, _ := json.Marshal(v)
	return string(j)
}

func TestReconcileRole(t *testing.T) {
	b := config.Brands["plat"]
	const meta = `"metadata":{"name":"r","labels":{"$BOOT":"rbac-defaults"},"annotations":{"$AUTO":"true"}}`
	want := `{` + meta + `,"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`
	cases := []struct {
		name, have string
		// out is the object to write ("" for none), missing the rules added.
		out, missing string
		protected    bool
	}{
		{name: "same", have: want},
		{name: "covered by a wider rule",
			have: `{` + meta + `,"rules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]},{"verbs":["get"],"nonResourceURLs":["/*"]}]}`},
		{name: "extra rules stay",
			have: `{` + meta + `,"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]},{"verbs":["delete"],"apiGroups":[""],"resources":["pods"]}]}`},
		{name: "removed verb added back broken down",
			have:    `{` + meta + `,"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`,
			out:     `{` + meta + `,"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]},{"apiGroups":[""],"resources":["pods"],"verbs":["list"]},{"nonResourceURLs":["/healthz"],"verbs":["get"]}]}`,
			missing: `[{"verbs":["list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]`},
		{name: "a rule limited to names does not cover",
			have:    `{` + meta + `,"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"],"resourceNames":["x"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`,
			out:     `{` + meta + `,"rules":[{"apiGroups":[""],"resourceNames":["x"],"resources":["pods"],"verbs":["get","list"]},{"nonResourceURLs":["/healthz"],"verbs":["get"]},{"apiGroups":[""],"resources":["pods"],"verbs":["get"]},{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}]}`,
			missing: `[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]},{"verbs":["list"],"apiGroups":[""],"resources":["pods"]}]`},
		{name: "missing label added, changed one kept",
			have: `{"metadata":{"name":"r","labels":{"$BOOT":"mine","x":"y"}},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`,
			out:  `{"metadata":{"annotations":{"$AUTO":"true"},"labels":{"$BOOT":"mine","x":"y"},"name":"r"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]},{"nonResourceURLs":["/healthz"],"verbs":["get"]}]}`},
		{name: "protected",
			have:      `{"metadata":{"name":"r","annotations":{"$AUTO":"false"}},"rules":[]}`,
			protected: true,
			missing:   `[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]},{"verbs":["list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]`},
		{name: "protected and the same",
			have: `{"metadata":{"name":"r","labels":{"$BOOT":"rbac-defaults"},"annotations":{"$AUTO":"false"}},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`},
		{name: "aggregation the default lacks is dropped",
			have: `{` + meta + `,"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"a":"b"}}]},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`,
			out:  `{` + meta + `,"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]},{"nonResourceURLs":["/healthz"],"verbs":["get"]}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := ReconcileRole(b, mustObj(t, c.have), mustObj(t, want))
			if c.out == "" && res.Object != nil || c.out != "" && compact(res.Object) != compact(mustObj(t, c.out)) {
				t.Errorf("object:\n got  %s\n want %s", compact(res.Object), c.out)
			}
			if c.missing != "" && compact(res.Missing) != c.missing {
				t.Errorf("missing:\n got  %s\n want %s", compact(res.Missing), c.missing)
			}
			if res.Protected != c.protected || res.Recreate {
				t.Errorf("protected %v recreate %v", res.Protected, res.Recreate)
			}
		})
	}
}

func TestReconcileAggregatedRole(t *testing.T) {
	b := config.Brands["plat"]
	want := `{"metadata":{"name":"admin"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"to-admin":"true"}}]}}`
	// Filled by the aggregation controller: the rules are not the default's.
	filled := `{"metadata":{"name":"admin"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"to-admin":"true"}}]},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`
	if res := ReconcileRole(b, mustObj(t, filled), mustObj(t, want)); res.Object != nil {
		t.Errorf("filled aggregated role changed: %s", compact(res.Object))
	}
	other := `{"metadata":{"name":"admin"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"mine":"true"}}]}}`
	res := ReconcileRole(b, mustObj(t, other), mustObj(t, want))
	if got, w := compact(res.Object["aggregationRule"]), `{"clusterRoleSelectors":[{"matchLabels":{"mine":"true"}},{"matchLabels":{"to-admin":"true"}}]}`; got != w {
		t.Errorf("selectors: got %s, want %s", got, w)
	}
	plain := `{"metadata":{"name":"admin"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`
	res = ReconcileRole(b, mustObj(t, plain), mustObj(t, want))
	if got, w := compact(res.Object["aggregationRule"]), `{"clusterRoleSelectors":[{"matchLabels":{"to-admin":"true"}}]}`; got != w {
		t.Errorf("selectors: got %s, want %s", got, w)
	}
}

func TestReconcileBinding(t *testing.T) {
	b := config.Brands["plat"]
	const meta = `"metadata":{"name":"x","labels":{"$BOOT":"rbac-defaults"},"annotations":{"$AUTO":"true"}}`
	ref := `"roleRef":{"apiGroup":"$RBAC","kind":"ClusterRole","name":"x"}`
	want := `{` + meta + `,` + ref + `,"subjects":[{"kind":"Group","apiGroup":"$RBAC","name":"g"},{"kind":"ServiceAccount","name":"s","namespace":"$SYS"}]}`
	cases := []struct {
		name, have, out     string
		recreate, protected bool
	}{
		{name: "same", have: want},
		{name: "extra subject stays",
			have: `{` + meta + `,` + ref + `,"subjects":[{"kind":"User","apiGroup":"$RBAC","name":"u"},{"kind":"Group","apiGroup":"$RBAC","name":"g"},{"kind":"ServiceAccount","name":"s","namespace":"$SYS"}]}`},
		{name: "missing subject added",
			have: `{` + meta + `,` + ref + `,"subjects":[{"kind":"User","apiGroup":"$RBAC","name":"u"}]}`,
			out:  `{` + meta + `,` + ref + `,"subjects":[{"kind":"User","apiGroup":"$RBAC","name":"u"},{"kind":"Group","apiGroup":"$RBAC","name":"g"},{"kind":"ServiceAccount","name":"s","namespace":"$SYS"}]}`},
		{name: "subject in another namespace is another subject",
			have: `{` + meta + `,` + ref + `,"subjects":[{"kind":"Group","apiGroup":"$RBAC","name":"g"},{"kind":"ServiceAccount","name":"s","namespace":"other"}]}`,
			out:  `{` + meta + `,` + ref + `,"subjects":[{"kind":"Group","apiGroup":"$RBAC","name":"g"},{"kind":"ServiceAccount","name":"s","namespace":"other"},{"kind":"ServiceAccount","name":"s","namespace":"$SYS"}]}`},
		{name: "other roleRef recreates",
			have:     `{` + meta + `,"roleRef":{"apiGroup":"$RBAC","kind":"ClusterRole","name":"y"}}`,
			recreate: true},
		{name: "protected other roleRef",
			have:      `{"metadata":{"name":"x","annotations":{"$AUTO":"false"}},"roleRef":{"apiGroup":"$RBAC","kind":"ClusterRole","name":"y"}}`,
			protected: true},
		{name: "protected missing subject",
			have:      `{"metadata":{"name":"x","labels":{"$BOOT":"rbac-defaults"},"annotations":{"$AUTO":"false"}},` + ref + `}`,
			protected: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := ReconcileBinding(b, mustObj(t, c.have), mustObj(t, want))
			if c.out == "" && res.Object != nil || c.out != "" && compact(res.Object) != compact(mustObj(t, c.out)) {
				t.Errorf("object:\n got  %s\n want %s", compact(res.Object), c.out)
			}
			if res.Protected != c.protected || res.Recreate != c.recreate {
				t.Errorf("protected %v recreate %v", res.Protected, res.Recreate)
			}
		})
	}
}

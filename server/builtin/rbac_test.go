package builtin

import (
	"testing"

	"platd/server/registry"
)

func TestRoles(t *testing.T) {
	t.Parallel()
	rule := func(members map[string]any) map[string]any { return members }
	withRules := func(rules ...any) registry.Object { return named("r", map[string]any{"rules": rules}) }
	tests := []struct {
		name        string
		obj         registry.Object
		role, crole []string // errors of a Role and of a ClusterRole
		same        bool     // a ClusterRole has the Role's errors
	}{
		{"resources", withRules(rule(map[string]any{"verbs": []any{"get"}, "apiGroups": []any{""}, "resources": []any{"pods"}})), nil, nil, false},
		{"no rules", withRules(), nil, nil, false},
		{"urls", withRules(rule(map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"/healthz"}})),
			[]string{`rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs`}, nil, false},
		{"urls and resources", withRules(rule(map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"/a", "/b"}, "resourceNames": []any{"x"}})),
			[]string{
				`rules[0].nonResourceURLs: Invalid value: []string{"/a", "/b"}: namespaced rules cannot apply to non-resource URLs`,
				`rules[0].nonResourceURLs: Invalid value: []string{"/a", "/b"}: rules cannot apply to both regular resources and non-resource URLs`,
			},
			[]string{`rules[0].nonResourceURLs: Invalid value: []string{"/a", "/b"}: rules cannot apply to both regular resources and non-resource URLs`}, false},
		{"empty rule", withRules(rule(map[string]any{}), rule(map[string]any{"verbs": []any{"*"}, "apiGroups": []any{"*"}, "resources": []any{"a", "b"}, "resourceNames": []any{"n"}})),
			[]string{
				"rules[0].verbs: Required value: verbs must contain at least one value",
				"rules[0].apiGroups: Required value: resource rules must supply at least one api group",
				"rules[0].resources: Required value: resource rules must supply at least one resource",
				"rules[1].resourceNames: Required value: resource names cannot apply to multiple resources",
			}, nil, true},
	}
	role, crole := typeDescriptor(t, "Role"), typeDescriptor(t, "ClusterRole")
	for _, tt := range tests {
		_, errs := create(role, tt.obj)
		checkErrs(t, tt.name+" (Role)", errs, tt.role)
		want := tt.crole
		if tt.same {
			want = tt.role
		}
		_, errs = create(crole, tt.obj)
		checkErrs(t, tt.name+" (ClusterRole)", errs, want)
	}
	if role.NameRule != registry.NamePathSegment || !role.UpdateCreates || crole.NameRule != registry.NamePathSegment {
		t.Error("roles take any path segment as name and may be created by PUT")
	}
}

func TestClusterRoleAggregation(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "ClusterRole")
	agg := func(sels ...any) registry.Object {
		return named("r", map[string]any{"aggregationRule": map[string]any{"clusterRoleSelectors": sels}})
	}
	badValue := map[string]any{"matchLabels": map[string]any{"rbac.example.com/aggregate-to-view": "-"}}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"selector", agg(map[string]any{"matchLabels": map[string]any{"rbac.example.com/aggregate-to-view": "true"}}), nil},
		{"no selectors", agg(), []string{"aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"}},
		{"bad selector", agg(map[string]any{"matchExpressions": []any{map[string]any{"key": "k", "operator": "In"}}}), []string{
			"aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
			"aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
		}},
		{"bad value", agg(badValue), []string{
			`aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: "-": ` + labelValueMsg,
			"aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
	// A stored expression with a bad value keeps validating the values
	// leniently, but still fails to convert.
	badExpr := agg(map[string]any{"matchExpressions": []any{map[string]any{"key": "k", "operator": "In", "values": []any{"-"}}}})
	_, errs := create(d, badExpr)
	checkErrs(t, "bad expression value", errs, []string{
		`aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values[0]: Invalid value: "-": ` + labelValueMsg,
		"aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
	})
	_, errs = update(d, badExpr, badExpr, "")
	checkErrs(t, "stored bad value", errs, []string{"aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector."})
}

func TestRoleBindings(t *testing.T) {
	t.Parallel()
	g := brand.Group("rbac.authorization")
	binding := func(ref map[string]any, subjects ...any) registry.Object {
		return named("b", map[string]any{"roleRef": ref, "subjects": subjects})
	}
	ref := func(kind, name string) map[string]any { return map[string]any{"kind": kind, "name": name} }
	subject := func(kind, name string, more ...string) map[string]any {
		s := map[string]any{"kind": kind, "name": name}
		for i := 0; i+1 < len(more); i += 2 {
			s[more[i]] = more[i+1]
		}
		return s
	}
	tests := []struct {
		name    string
		obj     registry.Object
		rb, crb []string
		same    bool // a ClusterRoleBinding has the RoleBinding's errors
	}{
		{"role ref", binding(ref("Role", "r"), subject("User", "u")), nil,
			[]string{`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`}, false},
		{"cluster role ref", binding(ref("ClusterRole", "view"), subject("Group", "g"), subject("ServiceAccount", "sa", "namespace", "ns")), nil, nil, true},
		{"no ref", binding(map[string]any{}), []string{
			`roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"`,
			"roleRef.name: Required value",
		}, []string{
			`roleRef.kind: Unsupported value: "": supported values: "ClusterRole"`,
			"roleRef.name: Required value",
		}, false},
		{"foreign ref", binding(map[string]any{"apiGroup": "example.com", "kind": "ClusterRole", "name": "a/b"}), []string{
			`roleRef.apiGroup: Unsupported value: "example.com": supported values: "` + g + `"`,
			`roleRef.name: Invalid value: "a/b": may not contain '/'`,
		}, nil, true},
		{"subjects", binding(ref("ClusterRole", "view"),
			subject("ServiceAccount", "Bad_Name", "apiGroup", g),
			subject("User", "", "apiGroup", "example.com"),
			subject("Group", ""),
			subject("Robot", "r"),
		), []string{
			`subjects[0].name: Invalid value: "Bad_Name": ` + subdomainMsg,
			`subjects[0].apiGroup: Unsupported value: "` + g + `": supported values: ""`,
			"subjects[1].name: Required value",
			`subjects[1].name: Invalid value: "": user name cannot be empty`,
			`subjects[1].apiGroup: Unsupported value: "example.com": supported values: "` + g + `"`,
			"subjects[2].name: Required value",
			`subjects[2].name: Invalid value: "": group name cannot be empty`,
			`subjects[3].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`,
		}, []string{
			`subjects[0].name: Invalid value: "Bad_Name": ` + subdomainMsg,
			`subjects[0].apiGroup: Unsupported value: "` + g + `": supported values: ""`,
			"subjects[0].namespace: Required value",
			"subjects[1].name: Required value",
			`subjects[1].name: Invalid value: "": user name cannot be empty`,
			`subjects[1].apiGroup: Unsupported value: "example.com": supported values: "` + g + `"`,
			"subjects[2].name: Required value",
			`subjects[2].name: Invalid value: "": group name cannot be empty`,
			`subjects[3].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`,
		}, false},
		{"service account namespace", binding(ref("ClusterRole", "view"), subject("ServiceAccount", "sa")), nil,
			[]string{"subjects[0].namespace: Required value"}, false},
	}
	rb, crb := typeDescriptor(t, "RoleBinding"), typeDescriptor(t, "ClusterRoleBinding")
	for _, tt := range tests {
		_, errs := create(rb, tt.obj)
		checkErrs(t, tt.name+" (RoleBinding)", errs, tt.rb)
		want := tt.crb
		if tt.same {
			want = tt.rb
		}
		_, errs = create(crb, tt.obj)
		checkErrs(t, tt.name+" (ClusterRoleBinding)", errs, want)
	}

	// Defaults name the rbac group where a reference or a user or group
	// subject leaves it out.
	got := mustCreate(t, rb, binding(ref("ClusterRole", "view"), subject("User", "u"), subject("Group", "g"), subject("ServiceAccount", "sa")))
	if mapAt(got, "roleRef")["apiGroup"] != g {
		t.Errorf("roleRef = %v", got["roleRef"])
	}
	subs := mapsOf(got["subjects"])
	if subs[0]["apiGroup"] != g || subs[1]["apiGroup"] != g || has(subs[2], "apiGroup") {
		t.Errorf("subjects = %v", got["subjects"])
	}

	// The reference never changes; subjects may.
	_, errs := update(rb, binding(ref("ClusterRole", "view"), subject("User", "v")), got, "")
	checkErrs(t, "subjects change", errs, nil)
	_, errs = update(rb, binding(ref("ClusterRole", "edit"), subject("User", "u")), got, "")
	checkErrs(t, "role change", errs, []string{
		`roleRef: Invalid value: rbac.RoleRef{APIGroup:"` + g + `", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef`,
	})
	storedCRB := mustCreate(t, crb, binding(ref("ClusterRole", "view")))
	_, errs = update(crb, binding(map[string]any{"apiGroup": g, "kind": "ClusterRole", "name": "admin"}), storedCRB, "")
	checkErrs(t, "cluster role change", errs, []string{
		`roleRef: Invalid value: rbac.RoleRef{APIGroup:"` + g + `", Kind:"ClusterRole", Name:"admin"}: cannot change roleRef`,
	})
}

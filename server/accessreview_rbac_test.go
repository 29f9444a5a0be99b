package server_test

import (
	"testing"

	"platd/config"
)

// With RBAC, alice's reviews answer as a v1.32 server's default policy
// answers them: the basic user's and discovery rules, nothing more.
func TestAccessReviewsRBACMatchUpstream(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"), withRBAC)
	kb, _ := config.LookupBrand("kubernetes")
	g := kb.Group("authorization")
	normalize := func(m map[string]any) string {
		for _, f := range asAnyList(path(m, "metadata.managedFields")) {
			f.(map[string]any)["time"] = "T"
			f.(map[string]any)["manager"] = "M"
		}
		return jsonOf(t, m)
	}
	for _, c := range []struct{ resource, body, golden string }{
		{"selfsubjectaccessreviews", `{"apiVersion": "` + g + `/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"group": "` + g + `", "resource": "selfsubjectaccessreviews", "verb": "create"}}}`,
			"selfsubjectaccessreview-alice-allowed-resource.json"},
		{"selfsubjectaccessreviews", `{"apiVersion": "` + g + `/v1", "kind": "SelfSubjectAccessReview", "spec": {"nonResourceAttributes": {"path": "/api", "verb": "get"}}}`,
			"selfsubjectaccessreview-alice-allowed-nonresource.json"},
		{"selfsubjectaccessreviews", `{"apiVersion": "` + g + `/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"namespace": "golden-auth", "verb": "list", "resource": "configmaps"}}}`,
			"selfsubjectaccessreview-alice-denied.json"},
		{"selfsubjectrulesreviews", `{"apiVersion": "` + g + `/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "golden-auth"}}`,
			"selfsubjectrulesreview-alice.json"},
	} {
		got := e.send(req{method: "POST", path: "/apis/" + g + "/v1/" + c.resource, body: c.body, token: aliceToken}).mustCode(t, 201).obj(t)
		if gs, w := normalize(got), normalize(goldenBody(t, c.golden)); gs != w {
			t.Errorf("%s:\n got  %s\n want %s", c.golden, gs, w)
		}
	}
}

// A SubjectAccessReview asks about exactly the user it describes; a
// RoleBinding's grant is reported with its reason, in reviews of every
// kind.
func TestAccessReviewsRBAC(t *testing.T) {
	t.Parallel()
	e := start(t, withRBAC)
	rbac := "/apis/" + platBrand.Group("rbac.authorization") + "/v1"
	e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"ns1"}}`).mustCode(t, 201)
	e.do("POST", rbac+"/namespaces/ns1/roles", `{"metadata":{"name":"r1"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["list","get"]}]}`).mustCode(t, 201)
	e.do("POST", rbac+"/namespaces/ns1/rolebindings", `{"metadata":{"name":"rb1"},"roleRef":{"apiGroup":"`+platBrand.Group("rbac.authorization")+`","kind":"Role","name":"r1"},`+
		`"subjects":[{"kind":"User","apiGroup":"`+platBrand.Group("rbac.authorization")+`","name":"alice"},{"kind":"ServiceAccount","name":"robot","namespace":"ns1"}]}`).mustCode(t, 201)
	const granted = `{"allowed":true,"reason":"RBAC: allowed by RoleBinding \"rb1/ns1\" of Role \"r1\" to User \"alice\""}`
	sar := reviewPath("subjectaccessreviews")
	aliceLists := reviewBody("SubjectAccessReview", `{"user":"alice","resourceAttributes":{"namespace":"ns1","verb":"list","resource":"configmaps"}}`)
	// The authorizer follows bindings from the store's watch.
	eventually(t, "alice's binding takes effect", func() bool {
		return jsonOf(t, e.do("POST", sar, aliceLists).mustCode(t, 201).obj(t)["status"]) == granted
	})
	basicUser := `{"allowed":true,"reason":"RBAC: allowed by ClusterRoleBinding \"system:basic-user\" of ClusterRole \"system:basic-user\" to Group \"system:authenticated\""}`
	ssarAttrs := `"resourceAttributes":{"group":"` + authzGroup + `","resource":"selfsubjectaccessreviews","verb":"create"}`

	for _, c := range []struct{ spec, status string }{
		{`{"user":"alice","resourceAttributes":{"namespace":"ns1","verb":"list","resource":"configmaps"}}`, granted},
		{`{"user":"alice","resourceAttributes":{"namespace":"ns2","verb":"list","resource":"configmaps"}}`, `{"allowed":false}`},
		{`{"user":"alice","resourceAttributes":{"namespace":"ns1","verb":"delete","resource":"configmaps","name":"c"}}`, `{"allowed":false}`},
		// No group is added: without system:authenticated alice is not a
		// basic user.
		{`{"user":"alice",` + ssarAttrs + `}`, `{"allowed":false}`},
		{`{"user":"alice","groups":["system:authenticated"],` + ssarAttrs + `}`, basicUser},
		{`{"user":"system:serviceaccount:ns1:robot","resourceAttributes":{"namespace":"ns1","verb":"get","resource":"configmaps","name":"c"}}`,
			`{"allowed":true,"reason":"RBAC: allowed by RoleBinding \"rb1/ns1\" of Role \"r1\" to ServiceAccount \"robot/ns1\""}`},
		{`{"user":"bob","groups":["system:masters"],"resourceAttributes":{"verb":"delete","resource":"nodes"}}`, `{"allowed":true}`},
	} {
		got := e.do("POST", sar, reviewBody("SubjectAccessReview", c.spec)).mustCode(t, 201).obj(t)
		if s := jsonOf(t, got["status"]); s != c.status {
			t.Errorf("SAR %s: status %s, want %s", c.spec, s, c.status)
		}
	}
	lsar := "/apis/" + authzGroup + "/v1/namespaces/ns1/localsubjectaccessreviews"
	got := e.do("POST", lsar, reviewBody("LocalSubjectAccessReview", `{"user":"alice","resourceAttributes":{"namespace":"ns1","verb":"get","resource":"configmaps"}}`)).mustCode(t, 201).obj(t)
	if s := jsonOf(t, got["status"]); s != granted {
		t.Errorf("LSAR status %s", s)
	}
	ssar := reviewPath("selfsubjectaccessreviews")
	got = e.send(req{method: "POST", path: ssar, token: aliceToken, body: reviewBody("SelfSubjectAccessReview", `{"resourceAttributes":{"namespace":"ns1","verb":"list","resource":"configmaps"}}`)}).mustCode(t, 201).obj(t)
	if s := jsonOf(t, got["status"]); s != granted {
		t.Errorf("SSAR status %s", s)
	}
	// Alice may ask about herself, not about others.
	e.send(req{method: "POST", path: sar, token: aliceToken, body: reviewBody("SubjectAccessReview", `{"user":"bob","nonResourceAttributes":{"path":"/x","verb":"get"}}`)}).mustCode(t, 403).
		mustMessage(t, `subjectaccessreviews.`+authzGroup+` is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "`+authzGroup+`" at the cluster scope`)
	// Her rules in ns1 end with the binding's, after the cluster-wide ones.
	got = e.send(req{method: "POST", path: reviewPath("selfsubjectrulesreviews"), token: aliceToken, body: reviewBody("SelfSubjectRulesReview", `{"namespace":"ns1"}`)}).mustCode(t, 201).obj(t)
	rules := asAnyList(path(got, "status.resourceRules"))
	if len(rules) != 3 || jsonOf(t, rules[2]) != `{"apiGroups":[""],"resources":["configmaps"],"verbs":["list","get"]}` || path(got, "status.incomplete") != false {
		t.Errorf("rules review %s", jsonOf(t, got["status"]))
	}
}

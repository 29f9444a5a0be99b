package server_test

import (
	"strings"
	"testing"

	"platd/config"
)

// authzGroup is the access reviews' group in the test brand.
var authzGroup = platBrand.Group("authorization")

func reviewPath(resource string) string { return "/apis/" + authzGroup + "/v1/" + resource }

func reviewBody(kind, spec string, meta ...string) string {
	m := ""
	if len(meta) > 0 {
		m = `"metadata":` + meta[0] + `,`
	}
	return `{"apiVersion":"` + authzGroup + `/v1","kind":"` + kind + `",` + m + `"spec":` + spec + `}`
}

// The access reviews answer 201 with the request echoed and the status
// filled; they store nothing and serve no other verb.
func TestAccessReviews(t *testing.T) {
	t.Parallel()
	e := start(t)
	ssar := reviewPath("selfsubjectaccessreviews")
	got := e.do("POST", ssar, reviewBody("SelfSubjectAccessReview", `{"resourceAttributes":{"namespace":"ns1","verb":"delete","resource":"secrets","name":"x"}}`)).mustCode(t, 201).obj(t)
	if s := jsonOf(t, got["spec"]); s != `{"resourceAttributes":{"name":"x","namespace":"ns1","resource":"secrets","verb":"delete"}}` {
		t.Errorf("spec %s", s)
	}
	if s := jsonOf(t, got["status"]); s != `{"allowed":true}` {
		t.Errorf("status %s", s)
	}
	if got["kind"] != "SelfSubjectAccessReview" || got["apiVersion"] != authzGroup+"/v1" {
		t.Errorf("kind %v apiVersion %v", got["kind"], got["apiVersion"])
	}
	if mf := jsonOf(t, path(got, "metadata.managedFields")); !strings.Contains(mf, `"fieldsV1":{"f:spec":{"f:resourceAttributes":{".":{},"f:name":{},"f:namespace":{},"f:resource":{},"f:verb":{}}}}`) {
		t.Errorf("managedFields %s", mf)
	}
	if ts, ok := path(got, "metadata").(map[string]any)["creationTimestamp"]; !ok || ts != nil {
		t.Errorf("creationTimestamp %v, want null", ts)
	}
	// client-go sends an empty creationTimestamp: metadata is still empty.
	e.do("POST", ssar, reviewBody("SelfSubjectAccessReview", `{"nonResourceAttributes":{"path":"/api","verb":"get"}}`, `{"creationTimestamp":null}`)).mustCode(t, 201)

	r := e.do("POST", ssar, reviewBody("SelfSubjectAccessReview", `{}`)).mustCode(t, 422)
	r.mustMessage(t, `.`+authzGroup+` "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`)
	if d := jsonOf(t, r.obj(t)["details"]); d != `{"causes":[{"field":"spec.resourceAttributes","message":"Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified","reason":"FieldValueInvalid"}],"group":"`+authzGroup+`"}` {
		t.Errorf("details %s", d)
	}
	e.do("POST", ssar, reviewBody("SelfSubjectAccessReview", `{"resourceAttributes":{}}`, `{"name":"x"}`)).mustCode(t, 422).
		mustMessage(t, `.`+authzGroup+` "" is invalid: metadata: Invalid value: map[string]interface {}{"name":"x"}: must be empty`)

	sar := reviewPath("subjectaccessreviews")
	e.do("POST", sar, reviewBody("SubjectAccessReview", `{"resourceAttributes":{"verb":"get","resource":"pods"}}`)).mustCode(t, 422).
		mustMessage(t, `.`+authzGroup+` "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`)
	got = e.do("POST", sar, reviewBody("SubjectAccessReview", `{"user":"bob","nonResourceAttributes":{"path":"/x","verb":"get"}}`)).mustCode(t, 201).obj(t)
	if s := jsonOf(t, got["status"]); s != `{"allowed":true}` {
		t.Errorf("SAR status %s", s)
	}
	// A cluster-scoped review loses a namespace its metadata names.
	got = e.do("POST", sar, reviewBody("SubjectAccessReview", `{"user":"bob","nonResourceAttributes":{"path":"/x","verb":"get"}}`, `{"namespace":"ns1"}`)).mustCode(t, 201).obj(t)
	if ns := path(got, "metadata.namespace"); ns != nil {
		t.Errorf("SAR namespace %v", ns)
	}

	for _, res := range []string{"selfsubjectaccessreviews", "subjectaccessreviews", "selfsubjectrulesreviews"} {
		e.do("GET", reviewPath(res), nil).mustCode(t, 405)
		e.do("GET", reviewPath(res)+"/x", nil).mustCode(t, 405)
		e.do("POST", "/apis/"+authzGroup+"/v1/namespaces/ns1/"+res, reviewBody("SelfSubjectAccessReview", `{}`)).mustCode(t, 404)
	}
	e.do("POST", reviewPath("localsubjectaccessreviews"), reviewBody("LocalSubjectAccessReview", `{}`)).mustCode(t, 405)
	e.do("POST", ssar+"?fieldValidation=Strict", reviewBody("SelfSubjectAccessReview", `{"bogus":1,"resourceAttributes":{}}`)).mustCode(t, 400).
		mustMessage(t, `SelfSubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: strict decoding error: unknown field "spec.bogus"`)
}

// A LocalSubjectAccessReview takes its URL's namespace and asks only
// about that namespace.
func TestLocalSubjectAccessReview(t *testing.T) {
	t.Parallel()
	e := start(t)
	lsar := "/apis/" + authzGroup + "/v1/namespaces/ns1/localsubjectaccessreviews"
	body := func(spec string, meta ...string) string { return reviewBody("LocalSubjectAccessReview", spec, meta...) }
	got := e.do("POST", lsar, body(`{"user":"bob","resourceAttributes":{"namespace":"ns1","verb":"get","resource":"pods"}}`)).mustCode(t, 201).obj(t)
	if ns := path(got, "metadata.namespace"); ns != "ns1" {
		t.Errorf("namespace %v, want ns1", ns)
	}
	if s := jsonOf(t, got["status"]); s != `{"allowed":true}` {
		t.Errorf("status %s", s)
	}
	e.do("POST", lsar, body(`{"user":"bob","resourceAttributes":{"namespace":"ns1"}}`, `{"namespace":"ns2"}`)).mustCode(t, 400).
		mustMessage(t, "the namespace of the provided object does not match the namespace sent on the request")
	e.do("POST", lsar, body(`{"user":"bob","resourceAttributes":{"namespace":"ns2","verb":"get","resource":"pods"}}`)).mustCode(t, 422).
		mustMessage(t, `.`+authzGroup+` "" is invalid: spec.resourceAttributes.namespace: Invalid value: "ns2": must match metadata.namespace`)
	e.do("POST", lsar, body(`{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods"}}`)).mustCode(t, 422).
		mustMessage(t, `.`+authzGroup+` "" is invalid: spec.resourceAttributes.namespace: Invalid value: "": must match metadata.namespace`)
	e.do("POST", lsar, body(`{"groups":["g"],"nonResourceAttributes":{"path":"/x","verb":"get"}}`)).mustCode(t, 422).
		mustMessage(t, `.`+authzGroup+` "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: disallowed on this kind of request`)
	e.do("POST", lsar, body(`{"user":"bob","resourceAttributes":{"namespace":"ns1"}}`, `{"namespace":"ns1","labels":{"a":"b"}}`)).mustCode(t, 422).
		mustMessage(t, `.`+authzGroup+` "" is invalid: metadata: Invalid value: map[string]interface {}{"labels":map[string]interface {}{"a":"b"}, "namespace":"ns1"}: must be empty except for namespace`)
}

// Under AlwaysDeny only system:masters passes; the reviews say so with
// the chain's reason, and ask about exactly the user described.
func TestAccessReviewsAlwaysDeny(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.AuthorizationModes = []string{config.ModeAlwaysDeny} })
	sar := reviewPath("subjectaccessreviews")
	for _, c := range []struct{ spec, status string }{
		{`{"user":"alice","resourceAttributes":{"namespace":"ns1","verb":"list","resource":"configmaps"}}`, `{"allowed":false,"reason":"Everything is forbidden."}`},
		{`{"user":"admin","nonResourceAttributes":{"path":"/healthz","verb":"get"}}`, `{"allowed":false,"reason":"Everything is forbidden."}`},
		{`{"user":"alice","groups":["system:masters"],"resourceAttributes":{"verb":"delete","resource":"nodes"}}`, `{"allowed":true}`},
	} {
		got := e.do("POST", sar, reviewBody("SubjectAccessReview", c.spec)).mustCode(t, 201).obj(t)
		if s := jsonOf(t, got["status"]); s != c.status {
			t.Errorf("%s: status %s, want %s", c.spec, s, c.status)
		}
	}
	ssar := reviewPath("selfsubjectaccessreviews")
	// Alice may not even ask.
	e.send(req{method: "POST", path: ssar, token: aliceToken, body: reviewBody("SelfSubjectAccessReview", `{"resourceAttributes":{"verb":"get","resource":"pods"}}`)}).mustCode(t, 403).
		mustMessage(t, `selfsubjectaccessreviews.`+authzGroup+` is forbidden: User "alice" cannot create resource "selfsubjectaccessreviews" in API group "`+authzGroup+`" at the cluster scope: Everything is forbidden.`)
	// The reviewed user is the impersonated one.
	got := e.do("POST", ssar, reviewBody("SelfSubjectAccessReview", `{"resourceAttributes":{"verb":"get","resource":"pods"}}`),
		"Impersonate-User", "alice", "Impersonate-Group", "system:masters").mustCode(t, 201).obj(t)
	if s := jsonOf(t, got["status"]); s != `{"allowed":true}` {
		t.Errorf("impersonated SSAR status %s", s)
	}
	// The masters' bypass lists no rules, and AlwaysDeny none either.
	ssrr := reviewPath("selfsubjectrulesreviews")
	got = e.do("POST", ssrr, reviewBody("SelfSubjectRulesReview", `{"namespace":"ns1"}`)).mustCode(t, 201).obj(t)
	if s := jsonOf(t, got); s != `{"apiVersion":"`+authzGroup+`/v1","kind":"SelfSubjectRulesReview","metadata":{"creationTimestamp":null},"spec":{},"status":{"incomplete":false,"nonResourceRules":[],"resourceRules":[]}}` {
		t.Errorf("rules review %s", s)
	}
}

// A rules review answers a new object with the chain's rules.
func TestSelfSubjectRulesReviewHTTP(t *testing.T) {
	t.Parallel()
	e := start(t)
	ssrr := reviewPath("selfsubjectrulesreviews")
	got := e.send(req{method: "POST", path: ssrr, token: aliceToken, body: reviewBody("SelfSubjectRulesReview", `{"namespace":"ns1"}`)}).mustCode(t, 201).obj(t)
	want := `{"apiVersion":"` + authzGroup + `/v1","kind":"SelfSubjectRulesReview","metadata":{"creationTimestamp":null},"spec":{},` +
		`"status":{"incomplete":false,"nonResourceRules":[{"nonResourceURLs":["*"],"verbs":["*"]}],"resourceRules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}}`
	if s := jsonOf(t, got); s != want {
		t.Errorf("rules review\n%s\nwant\n%s", s, want)
	}
	e.do("POST", ssrr, reviewBody("SelfSubjectRulesReview", `{}`)).mustCode(t, 400).mustMessage(t, "no namespace on request")
}

// The access reviews answer as a v1.32 server does, in the kubernetes
// brand: the request echoed with its managed fields and the status.
func TestAccessReviewsMatchUpstream(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	kb, _ := config.LookupBrand("kubernetes")
	ssar := "/apis/" + kb.Group("authorization") + "/v1/selfsubjectaccessreviews"
	normalize := func(m map[string]any) string {
		for _, f := range asAnyList(path(m, "metadata.managedFields")) {
			f.(map[string]any)["time"] = "T"
			f.(map[string]any)["manager"] = "M"
		}
		return jsonOf(t, m)
	}
	for _, c := range []struct {
		body, golden string
		code         int
	}{
		{`{"apiVersion": "` + kb.Group("authorization") + `/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"namespace": "golden-auth", "verb": "delete", "resource": "secrets", "name": "x"}}}`,
			"selfsubjectaccessreview-admin-allowed.json", 201},
		{`{"apiVersion": "` + kb.Group("authorization") + `/v1", "kind": "SelfSubjectAccessReview", "spec": {}}`,
			"selfsubjectaccessreview-invalid-empty-spec.json", 422},
	} {
		got := e.do("POST", ssar, c.body).mustCode(t, c.code).obj(t)
		if g, w := normalize(got), normalize(goldenBody(t, c.golden)); g != w {
			t.Errorf("%s:\n got  %s\n want %s", c.golden, g, w)
		}
	}
}

// Request info as authorization sees it: the proxy verb's path form is
// authorized and then not found; a path verb with nothing after it is a
// plain-text 500; collection reads are authorized with their selectors.
func TestRequestInfoEdges(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.AuthorizationModes = []string{config.ModeAlwaysDeny} })
	e.do("GET", "/api/v1/proxy/namespaces/ns1/pods/p1/x", nil).mustCode(t, 404).mustMessage(t, "the server could not find the requested resource")
	e.send(req{method: "GET", path: "/api/v1/proxy/namespaces/ns1/pods/p1", token: aliceToken}).mustCode(t, 403).
		mustMessage(t, `pods "p1" is forbidden: User "alice" cannot proxy resource "pods" in API group "" in the namespace "ns1": Everything is forbidden.`)
	r := e.do("GET", "/api/v1/watch?x=<b>", nil)
	if want := "Internal Server Error: \"/api/v1/watch?x=&lt;b&gt;\": failed to create RequestInfo: unable to determine kind and namespace from url, /api/v1/watch?x=&lt;b&gt;\n"; r.code != 500 || string(r.body) != want {
		t.Errorf("watch alone: %d %q, want 500 %q", r.code, r.body, want)
	}
	e.send(req{method: "GET", path: "/api/v1/namespaces/ns1/pods?watch=1&fieldSelector=metadata.name%3Dp1", token: aliceToken}).mustCode(t, 403).
		mustMessage(t, `pods "p1" is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "ns1": Everything is forbidden.`)
	e.send(req{method: "DELETE", path: "/apis/apps/v1/namespaces/ns1/deployments", token: aliceToken}).mustCode(t, 403).
		mustMessage(t, `deployments.apps is forbidden: User "alice" cannot deletecollection resource "deployments" in API group "apps" in the namespace "ns1": Everything is forbidden.`)
}

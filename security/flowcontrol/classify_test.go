package flowcontrol

import (
	"testing"

	"platd/security"
)

func mustSchema(t testing.TB, js string) *FlowSchema {
	t.Helper()
	fs, err := DecodeFlowSchema([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func mustLevel(t testing.TB, js string) *PriorityLevel {
	t.Helper()
	pl, err := DecodePriorityLevel([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// testConfig is a few of the default flow schemas, in no order, and one
// naming a level that does not exist.
func testConfig(t *testing.T) *Classifier {
	schemas := []*FlowSchema{
		mustSchema(t, `{"metadata":{"name":"catch-all","uid":"fs-catch-all"},"spec":{"priorityLevelConfiguration":{"name":"catch-all"},"matchingPrecedence":10000,
			"rules":[{"subjects":[{"kind":"Group","group":{"name":"system:unauthenticated"}},{"kind":"Group","group":{"name":"system:authenticated"}}],
			"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"clusterScope":true,"namespaces":["*"]}],
			"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}]}]}}`),
		mustSchema(t, `{"metadata":{"name":"exempt","uid":"fs-exempt"},"spec":{"priorityLevelConfiguration":{"name":"exempt"},"matchingPrecedence":1,
			"rules":[{"subjects":[{"kind":"Group","group":{"name":"system:masters"}}],
			"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"clusterScope":true,"namespaces":["*"]}],
			"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}]}]}}`),
		mustSchema(t, `{"metadata":{"name":"probes","uid":"fs-probes"},"spec":{"priorityLevelConfiguration":{"name":"exempt"},"matchingPrecedence":2,
			"rules":[{"subjects":[{"kind":"Group","group":{"name":"system:unauthenticated"}},{"kind":"Group","group":{"name":"system:authenticated"}}],
			"nonResourceRules":[{"verbs":["get"],"nonResourceURLs":["/healthz","/readyz","/livez"]}]}]}}`),
		mustSchema(t, `{"metadata":{"name":"leader-election","uid":"fs-le"},"spec":{"priorityLevelConfiguration":{"name":"leader-election"},"matchingPrecedence":100,
			"rules":[{"subjects":[{"kind":"User","user":{"name":"system:kube-scheduler"}},{"kind":"ServiceAccount","serviceAccount":{"namespace":"system","name":"*"}}],
			"resourceRules":[{"verbs":["get","create","update"],"apiGroups":["coordination.example"],"resources":["leases"],"namespaces":["*"]}]}]}}`),
		mustSchema(t, `{"metadata":{"name":"one-sa","uid":"fs-one-sa"},"spec":{"priorityLevelConfiguration":{"name":"workload-high"},"matchingPrecedence":800,
			"rules":[{"subjects":[{"kind":"ServiceAccount","serviceAccount":{"namespace":"apps","name":"builder"}}],
			"resourceRules":[{"verbs":["*"],"apiGroups":[""],"resources":["pods/status","configmaps"],"clusterScope":true,"namespaces":["apps"]}],
			"nonResourceRules":[{"verbs":["get"],"nonResourceURLs":["/metrics*","/apis/*"]}]}]}}`),
		// Its level does not exist: it matches nothing.
		mustSchema(t, `{"metadata":{"name":"dangling","uid":"fs-dangling"},"spec":{"priorityLevelConfiguration":{"name":"missing"},"matchingPrecedence":3,
			"rules":[{"subjects":[{"kind":"User","user":{"name":"*"}}],
			"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"clusterScope":true,"namespaces":["*"]}],
			"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}]}]}}`),
		// Same precedence as catch-all: the name breaks the tie.
		mustSchema(t, `{"metadata":{"name":"aaa-tie","uid":"fs-tie"},"spec":{"priorityLevelConfiguration":{"name":"workload-high"},"matchingPrecedence":10000,
			"rules":[{"subjects":[{"kind":"User","user":{"name":"tie"}}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}]}]}}`),
	}
	levels := []*PriorityLevel{
		mustLevel(t, `{"metadata":{"name":"exempt","uid":"pl-exempt"},"spec":{"type":"Exempt"}}`),
		mustLevel(t, `{"metadata":{"name":"catch-all","uid":"pl-catch-all"},"spec":{"type":"Limited"}}`),
		mustLevel(t, `{"metadata":{"name":"leader-election","uid":"pl-le"},"spec":{"type":"Limited"}}`),
		mustLevel(t, `{"metadata":{"name":"workload-high","uid":"pl-wh"},"spec":{"type":"Limited"}}`),
	}
	var c Classifier
	c.Replace(schemas, levels)
	return &c
}

var (
	schemaUIDs = map[string]string{"exempt": "fs-exempt", "probes": "fs-probes", "catch-all": "fs-catch-all",
		"leader-election": "fs-le", "one-sa": "fs-one-sa", "aaa-tie": "fs-tie"}
	levelUIDs = map[string]string{"exempt": "pl-exempt", "catch-all": "pl-catch-all", "leader-election": "pl-le", "workload-high": "pl-wh"}
)

func TestClassify(t *testing.T) {
	c := testConfig(t)
	authed := func(name string, groups ...string) *security.User {
		return &security.User{Name: name, Groups: append(groups, "system:authenticated")}
	}
	anonymous := &security.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	res := func(u *security.User, verb, group, resource, sub, ns string) security.Attributes {
		return security.Attributes{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, ResourceRequest: true}
	}
	path := func(u *security.User, verb, p string) security.Attributes {
		return security.Attributes{User: u, Verb: verb, Path: p}
	}
	for _, tc := range []struct {
		name   string
		a      security.Attributes
		fs, pl string
		exempt bool
	}{
		{"masters are exempt", res(authed("admin", "system:masters"), "delete", "apps", "deployments", "", "default"), "exempt", "exempt", true},
		{"masters on any path", path(authed("admin", "system:masters"), "post", "/anything"), "exempt", "exempt", true},
		{"probe", path(anonymous, "get", "/readyz"), "probes", "exempt", true},
		{"a check under a probe", path(anonymous, "get", "/readyz/ping"), "probes", "exempt", true},
		{"not a probe's prefix", path(anonymous, "get", "/readyzz"), "catch-all", "catch-all", false},
		{"probe by another verb", path(anonymous, "post", "/healthz"), "catch-all", "catch-all", false},
		{"user subject", res(authed("system:kube-scheduler"), "update", "coordination.example", "leases", "", "system"), "leader-election", "leader-election", false},
		{"leases are namespaced only", res(authed("system:kube-scheduler"), "list", "coordination.example", "leases", "", ""), "catch-all", "catch-all", false},
		{"every service account of a namespace", res(authed("system:serviceaccount:system:anyone"), "get", "coordination.example", "leases", "", "x"), "leader-election", "leader-election", false},
		{"a namespace's prefix is not it", res(authed("system:serviceaccount:systemx:anyone"), "get", "coordination.example", "leases", "", "x"), "catch-all", "catch-all", false},
		{"one service account", res(authed("system:serviceaccount:apps:builder"), "patch", "", "pods", "status", "apps"), "one-sa", "workload-high", false},
		{"its subresource only", res(authed("system:serviceaccount:apps:builder"), "patch", "", "pods", "", "apps"), "catch-all", "catch-all", false},
		{"another service account", res(authed("system:serviceaccount:apps:other"), "get", "", "configmaps", "", "apps"), "catch-all", "catch-all", false},
		{"cluster scope allowed", res(authed("system:serviceaccount:apps:builder"), "list", "", "configmaps", "", ""), "one-sa", "workload-high", false},
		{"other namespace", res(authed("system:serviceaccount:apps:builder"), "list", "", "configmaps", "", "web"), "catch-all", "catch-all", false},
		{"url with a trailing star is a directory", path(authed("system:serviceaccount:apps:builder"), "get", "/metrics/slis"), "one-sa", "workload-high", false},
		{"not its sibling", path(authed("system:serviceaccount:apps:builder"), "get", "/metricsx"), "catch-all", "catch-all", false},
		{"under /apis/*", path(authed("system:serviceaccount:apps:builder"), "get", "/apis/apps"), "one-sa", "workload-high", false},
		{"the name breaks a precedence tie", path(authed("tie"), "get", "/x"), "aaa-tie", "workload-high", false},
		{"anonymous falls to catch-all", res(anonymous, "get", "", "pods", "", "default"), "catch-all", "catch-all", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := c.Classify(tc.a)
			if !ok {
				t.Fatal("not classified")
			}
			want := Match{FlowSchema: tc.fs, PriorityLevel: tc.pl, FlowSchemaUID: schemaUIDs[tc.fs], PriorityLevelUID: levelUIDs[tc.pl], Exempt: tc.exempt}
			if m != want {
				t.Errorf("got %+v, want %+v", m, want)
			}
		})
	}
}

func TestClassifyUnconfigured(t *testing.T) {
	var c Classifier
	if m, ok := c.Classify(security.Attributes{User: &security.User{Name: "a"}, Verb: "get", Path: "/"}); ok {
		t.Errorf("classified %+v before any configuration", m)
	}
	c.Replace(nil, nil)
	if m, ok := c.Classify(security.Attributes{User: &security.User{Name: "a"}, Verb: "get", Path: "/"}); ok {
		t.Errorf("classified %+v by no flow schema", m)
	}
}

// FuzzClassify: any stored flow schema classifies any request without a
// panic, and the same way twice.
func FuzzClassify(f *testing.F) {
	f.Add(`{"metadata":{"name":"a","uid":"u"},"spec":{"priorityLevelConfiguration":{"name":"l"},"matchingPrecedence":5,
		"rules":[{"subjects":[{"kind":"ServiceAccount","serviceAccount":{"namespace":"ns","name":"*"}}],
		"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["/a/*","/b"]}]}]}}`, "system:serviceaccount:ns:x", "get", "/a/b", false)
	f.Add(`{"spec":{"priorityLevelConfiguration":{"name":"l"},"rules":[{"subjects":[{"kind":"Group"},{"kind":"User","user":{"name":"*"}}],
		"resourceRules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods/log"],"namespaces":["*"]}]}]}}`, "bob", "get", "", true)
	f.Add(`{"spec":{"rules":null}}`, "", "", "*", false)
	level := mustLevel(f, `{"metadata":{"name":"l","uid":"pl"},"spec":{"type":"Limited"}}`)
	f.Fuzz(func(t *testing.T, schema, user, verb, path string, resource bool) {
		fs, err := DecodeFlowSchema([]byte(schema))
		if err != nil {
			return
		}
		var c Classifier
		c.Replace([]*FlowSchema{fs}, []*PriorityLevel{level})
		a := security.Attributes{User: &security.User{Name: user, Groups: []string{user}}, Verb: verb, Path: path, ResourceRequest: resource,
			Resource: "pods", Subresource: "log", Namespace: user}
		m1, ok1 := c.Classify(a)
		m2, ok2 := c.Classify(a)
		if m1 != m2 || ok1 != ok2 {
			t.Fatalf("classified %v %v, then %v %v", m1, ok1, m2, ok2)
		}
		if ok1 && (m1.FlowSchema != fs.Metadata.Name || m1.PriorityLevelUID != "pl") {
			t.Fatalf("classified %+v by %s", m1, fs.Metadata.Name)
		}
	})
}

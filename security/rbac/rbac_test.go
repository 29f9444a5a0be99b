package rbac

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"platd/config"
	"platd/security"
)

var brand = config.Brands["kubernetes"]

func res(verb, group, resource, sub, name string) security.Attributes {
	return security.Attributes{ResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name}
}

func path(verb, p string) security.Attributes { return security.Attributes{Verb: verb, Path: p} }

func rule(verbs, groups, resources, names, urls string) PolicyRule {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	// The core group is "": "-" is none.
	g := strings.Split(groups, ",")
	if groups == "-" {
		g = nil
	}
	return PolicyRule{Verbs: split(verbs), APIGroups: g, Resources: split(resources), ResourceNames: split(names), NonResourceURLs: split(urls)}
}

func TestRuleAllows(t *testing.T) {
	for _, c := range []struct {
		name string
		rule PolicyRule
		a    security.Attributes
		want bool
	}{
		{"exact", rule("get", "", "pods", "", ""), res("get", "", "pods", "", "p"), true},
		{"other verb", rule("get", "", "pods", "", ""), res("list", "", "pods", "", ""), false},
		{"verb star", rule("*", "", "pods", "", ""), res("delete", "", "pods", "", "p"), true},
		{"other group", rule("get", "apps", "pods", "", ""), res("get", "", "pods", "", ""), false},
		{"group star", rule("get", "*", "pods", "", ""), res("get", "apps", "pods", "", ""), true},
		{"resource star matches subresource", rule("get", "", "*", "", ""), res("get", "", "pods", "log", "p"), true},
		{"plain resource not its subresource", rule("get", "", "pods", "", ""), res("get", "", "pods", "log", "p"), false},
		{"resource/sub", rule("get", "", "pods/log", "", ""), res("get", "", "pods", "log", "p"), true},
		{"resource/sub not the resource", rule("get", "", "pods/log", "", ""), res("get", "", "pods", "", "p"), false},
		{"star/sub", rule("get", "*", "*/scale", "", ""), res("get", "apps", "deployments", "scale", "d"), true},
		{"star/sub other sub", rule("get", "", "*/scale", "", ""), res("get", "", "pods", "status", "p"), false},
		{"star/sub without sub", rule("get", "", "*/scale", "", ""), res("get", "", "pods", "", "p"), false},
		{"resource/star no wildcard", rule("get", "", "pods/*", "", ""), res("get", "", "pods", "log", "p"), false},
		{"longer name prefix", rule("get", "", "pods/logs", "", ""), res("get", "", "pods", "log", "p"), false},
		{"named", rule("get", "", "pods", "a,b", ""), res("get", "", "pods", "", "b"), true},
		{"named other", rule("get", "", "pods", "a,b", ""), res("get", "", "pods", "", "c"), false},
		{"named list", rule("list", "", "pods", "a", ""), res("list", "", "pods", "", ""), false},
		{"url exact", rule("get", "-", "", "", "/healthz"), path("get", "/healthz"), true},
		{"url other", rule("get", "-", "", "", "/healthz"), path("get", "/healthz/ping"), false},
		{"url prefix", rule("get", "-", "", "", "/healthz/*"), path("get", "/healthz/ping"), true},
		{"url prefix stars trimmed", rule("get", "-", "", "", "/api**"), path("get", "/apis/x"), true},
		{"url star", rule("get", "-", "", "", "*"), path("get", "/anything"), true},
		{"url verb", rule("post", "-", "", "", "*"), path("get", "/x"), false},
		{"resource rule not a url", rule("get", "*", "*", "", ""), path("get", "/x"), false},
		{"url rule not a resource", rule("get", "-", "", "", "*"), res("get", "", "pods", "", ""), false},
	} {
		if got := RuleAllows(c.a, &c.rule); got != c.want {
			t.Errorf("%s: RuleAllows = %v, want %v", c.name, got, c.want)
		}
		if got := RulesAllow([]PolicyRule{rule("x", "-", "", "", ""), c.rule}, c.a); got != c.want {
			t.Errorf("%s: RulesAllow = %v, want %v", c.name, got, c.want)
		}
		r := c.rule
		rr := []security.ResourceRule{{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames}}
		if got := ResourceRulesAllow(rr, c.a); got != (c.want && c.a.ResourceRequest) {
			t.Errorf("%s: ResourceRulesAllow = %v, want %v", c.name, got, c.want && c.a.ResourceRequest)
		}
	}
}

func TestSubjectMatches(t *testing.T) {
	alice := &security.User{Name: "alice", Groups: []string{"dev", security.AllAuthenticated}}
	sa := &security.User{Name: "system:serviceaccount:ns1:bot", Groups: []string{"system:serviceaccounts"}}
	for _, c := range []struct {
		name string
		u    *security.User
		s    Subject
		ns   string
		want bool
	}{
		{"user", alice, Subject{Kind: KindUser, Name: "alice"}, "", true},
		{"other user", alice, Subject{Kind: KindUser, Name: "bob"}, "", false},
		{"group", alice, Subject{Kind: KindGroup, Name: "dev"}, "", true},
		{"group by user name", alice, Subject{Kind: KindGroup, Name: "alice"}, "", false},
		{"user by group name", alice, Subject{Kind: KindUser, Name: "dev"}, "", false},
		{"sa", sa, Subject{Kind: KindServiceAccount, Name: "bot", Namespace: "ns1"}, "", true},
		{"sa other ns", sa, Subject{Kind: KindServiceAccount, Name: "bot", Namespace: "ns2"}, "ns1", false},
		{"sa binding ns", sa, Subject{Kind: KindServiceAccount, Name: "bot"}, "ns1", true},
		{"sa other binding ns", sa, Subject{Kind: KindServiceAccount, Name: "bot"}, "ns2", false},
		{"sa no ns in cluster binding", sa, Subject{Kind: KindServiceAccount, Name: "bot"}, "", false},
		{"sa as user", sa, Subject{Kind: KindUser, Name: "system:serviceaccount:ns1:bot"}, "", true},
		{"unknown kind", alice, Subject{Kind: "Robot", Name: "alice"}, "", false},
	} {
		if got := subjectMatches(c.u, &c.s, c.ns); got != c.want {
			t.Errorf("%s: subjectMatches = %v, want %v", c.name, got, c.want)
		}
	}
}

// fixture is a small policy: alice may read configmaps in ns1 by a role
// binding, everyone authenticated may read /healthz by a cluster role
// binding, and a service account is bound in ns1 with no namespace.
func fixture() *Authorizer {
	a := New(brand)
	a.PutRole(&Role{Name: "health", Rules: []PolicyRule{rule("get", "-", "", "", "/healthz")}})
	a.PutRole(&Role{Namespace: "ns1", Name: "cm-reader", Rules: []PolicyRule{rule("get,list", "", "configmaps", "", "")}})
	a.PutRole(&Role{Name: "pod-reader", Rules: []PolicyRule{rule("get", "", "pods", "", ""), rule("get", "-", "", "", "/pods")}})
	a.PutBinding(&Binding{Name: "health", RoleRef: RoleRef{Kind: KindClusterRole, Name: "health"},
		Subjects: []Subject{{Kind: KindGroup, Name: security.AllAuthenticated}}})
	a.PutBinding(&Binding{Namespace: "ns1", Name: "alice-cm", RoleRef: RoleRef{Kind: KindRole, Name: "cm-reader"},
		Subjects: []Subject{{Kind: KindUser, Name: "bob"}, {Kind: KindUser, Name: "alice"}}})
	a.PutBinding(&Binding{Namespace: "ns1", Name: "bot-pods", RoleRef: RoleRef{Kind: KindClusterRole, Name: "pod-reader"},
		Subjects: []Subject{{Kind: KindServiceAccount, Name: "bot"}}})
	a.PutBinding(&Binding{Namespace: "ns1", Name: "ghost", RoleRef: RoleRef{Kind: KindRole, Name: "missing"},
		Subjects: []Subject{{Kind: KindGroup, Name: "dev"}}})
	a.PutBinding(&Binding{Name: "ghost", RoleRef: RoleRef{Kind: KindClusterRole, Name: "missing"},
		Subjects: []Subject{{Kind: KindGroup, Name: "dev"}}})
	return a
}

func TestAuthorize(t *testing.T) {
	a := fixture()
	alice := &security.User{Name: "alice", Groups: []string{security.AllAuthenticated}}
	dev := &security.User{Name: "carol", Groups: []string{"dev", security.AllAuthenticated}}
	bot := &security.User{Name: "system:serviceaccount:ns1:bot"}
	g := brand.Group("rbac.authorization")
	in := func(u *security.User, ns string, at security.Attributes) security.Attributes {
		at.User, at.Namespace = u, ns
		return at
	}
	for _, c := range []struct {
		name   string
		a      security.Attributes
		want   security.Decision
		reason string
	}{
		{"role binding", in(alice, "ns1", res("list", "", "configmaps", "", "")), security.DecisionAllow,
			`RBAC: allowed by RoleBinding "alice-cm/ns1" of Role "cm-reader" to User "alice"`},
		{"other namespace", in(alice, "ns2", res("list", "", "configmaps", "", "")), security.DecisionNoOpinion, ""},
		{"cluster scope", in(alice, "", res("list", "", "configmaps", "", "")), security.DecisionNoOpinion, ""},
		{"group cluster binding", in(alice, "", path("get", "/healthz")), security.DecisionAllow,
			`RBAC: allowed by ClusterRoleBinding "health" of ClusterRole "health" to Group "system:authenticated"`},
		{"sa in binding namespace", in(bot, "ns1", res("get", "", "pods", "", "p")), security.DecisionAllow,
			`RBAC: allowed by RoleBinding "bot-pods/ns1" of ClusterRole "pod-reader" to ServiceAccount "bot/ns1"`},
		{"role binding grants no urls", in(bot, "", path("get", "/pods")), security.DecisionNoOpinion, ""},
		{"missing roles", in(dev, "ns1", res("get", "", "secrets", "", "s")), security.DecisionNoOpinion,
			fmt.Sprintf(`RBAC: [clusterrole.%s "missing" not found, role.%s "missing" not found]`, g, g)},
		{"one missing role", in(dev, "", res("get", "", "secrets", "", "s")), security.DecisionNoOpinion,
			fmt.Sprintf(`RBAC: clusterrole.%s "missing" not found`, g)},
		{"no user", res("get", "", "pods", "", ""), security.DecisionNoOpinion, ""},
	} {
		d, reason, err := a.Authorize(context.Background(), c.a)
		if d != c.want || reason != c.reason || err != nil {
			t.Errorf("%s: got %v %q %v, want %v %q", c.name, d, reason, err, c.want, c.reason)
		}
	}
}

func TestIndexFollowsChanges(t *testing.T) {
	a := fixture()
	alice := &security.User{Name: "alice"}
	list := res("list", "", "configmaps", "", "")
	list.User, list.Namespace = alice, "ns1"
	allowed := func() bool {
		d, _, _ := a.Authorize(context.Background(), list)
		return d == security.DecisionAllow
	}
	if !allowed() {
		t.Fatal("alice not allowed by her binding")
	}
	// Replacing the binding with one for bob only drops alice's entry.
	a.PutBinding(&Binding{Namespace: "ns1", Name: "alice-cm", RoleRef: RoleRef{Kind: KindRole, Name: "cm-reader"},
		Subjects: []Subject{{Kind: KindUser, Name: "bob"}}})
	if allowed() {
		t.Fatal("alice allowed after her subject was removed")
	}
	a.ReplaceBindings(true, []*Binding{{Namespace: "ns1", Name: "x", RoleRef: RoleRef{Kind: KindRole, Name: "cm-reader"},
		Subjects: []Subject{{Kind: KindUser, Name: "alice"}}}})
	if !allowed() {
		t.Fatal("alice not allowed after relist")
	}
	a.DeleteRole("ns1", "cm-reader")
	if allowed() {
		t.Fatal("alice allowed by a deleted role")
	}
	a.PutRole(&Role{Namespace: "ns1", Name: "cm-reader", Rules: []PolicyRule{rule("list", "", "configmaps", "", "")}})
	a.DeleteBinding("ns1", "x")
	if allowed() {
		t.Fatal("alice allowed by a deleted binding")
	}
	// Left: the two cluster role bindings' groups.
	if len(a.bySubject) != 2 {
		t.Errorf("index keeps %d subject keys, want 2 (no leftovers): %v", len(a.bySubject), a.bySubject)
	}
}

func TestRulesFor(t *testing.T) {
	a := fixture()
	dev := &security.User{Name: "bob", Groups: []string{"dev", security.AllAuthenticated}}
	rules, incomplete, err := a.RulesFor(context.Background(), dev, "ns1")
	g := brand.Group("rbac.authorization")
	wantErr := fmt.Sprintf(`[clusterrole.%s "missing" not found, role.%s "missing" not found]`, g, g)
	if incomplete || err == nil || err.Error() != wantErr {
		t.Errorf("incomplete %v, err %v; want false, %s", incomplete, err, wantErr)
	}
	got := fmt.Sprintf("%v", rules)
	want := "{[{[get list] [] [configmaps] []}] [{[get] [/healthz]}]}"
	if got != want {
		t.Errorf("rules = %s, want %s", got, want)
	}
	bot := &security.User{Name: "system:serviceaccount:ns1:bot"}
	rules, _, err = a.RulesFor(context.Background(), bot, "ns1")
	if got, want := fmt.Sprintf("%v", rules), "{[{[get] [] [pods] []}] [{[get] [/pods]}]}"; got != want || err != nil {
		t.Errorf("sa rules = %s, %v; want %s", got, err, want)
	}
	if rules, _, _ = a.RulesFor(context.Background(), bot, ""); len(rules.Resource)+len(rules.NonResource) != 0 {
		t.Errorf("sa has cluster rules %v", rules)
	}
}

func TestConfirmNoEscalation(t *testing.T) {
	alice := &security.User{Name: "alice", Groups: []string{security.AllAuthenticated}}
	head := `user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n"
	for _, c := range []struct {
		name       string
		owner, req []PolicyRule
		resolveErr error
		want       string
	}{
		{"covered", []PolicyRule{rule("get,list", "", "secrets", "", "")}, []PolicyRule{rule("list", "", "secrets", "", "")}, nil, ""},
		{"star covers", []PolicyRule{rule("*", "*", "*", "", "")}, []PolicyRule{rule("get", "apps", "deployments", "web", ""), rule("get", "", "pods/log", "", "")}, nil, ""},
		{"star sub covers", []PolicyRule{rule("get", "", "*/log", "", "")}, []PolicyRule{rule("get", "", "pods/log", "", "")}, nil, ""},
		{"url prefix covers", []PolicyRule{rule("get", "-", "", "", "/logs/*")}, []PolicyRule{rule("get", "-", "", "", "/logs/a")}, nil, ""},
		{"named owner does not cover all", []PolicyRule{rule("get", "", "secrets", "a", "")}, []PolicyRule{rule("get", "", "secrets", "", "")}, nil,
			head + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"compacted and sorted", []PolicyRule{rule("get", "", "configmaps", "", "")},
			[]PolicyRule{rule("get,list", "", "secrets", "", ""), rule("delete", "apps", "deployments", "web", ""), rule("get", "", "configmaps", "", "")}, nil,
			head + `{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}` + "\n" +
				`{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["delete"]}`},
		{"urls", nil, []PolicyRule{rule("get,post", "-", "", "", "/a,/b")}, nil,
			head + `{NonResourceURLs:["/a"], Verbs:["get"]}` + "\n" + `{NonResourceURLs:["/a"], Verbs:["post"]}` + "\n" +
				`{NonResourceURLs:["/b"], Verbs:["get"]}` + "\n" + `{NonResourceURLs:["/b"], Verbs:["post"]}`},
		{"resolution errors", nil, []PolicyRule{rule("get", "", "pods", "", "")}, fmt.Errorf(`role.x "r" not found`),
			head + `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}; resolution errors: [role.x "r" not found]`},
	} {
		err := ConfirmNoEscalation(alice, c.owner, c.resolveErr, c.req)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestCompactString(t *testing.T) {
	for _, c := range []struct {
		r    PolicyRule
		want string
	}{
		{rule("get", "", "pods", "", ""), `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`},
		{rule("get,watch", "apps,batch", "jobs", "a", ""), `{APIGroups:["apps" "batch"], Resources:["jobs"], ResourceNames:["a"], Verbs:["get" "watch"]}`},
		{rule("get", "-", "", "", "/x*"), `{NonResourceURLs:["/x*"], Verbs:["get"]}`},
		{PolicyRule{}, `{}`},
	} {
		if got := CompactString(c.r); got != c.want {
			t.Errorf("CompactString(%v) = %s, want %s", c.r, got, c.want)
		}
	}
}

func TestCompact(t *testing.T) {
	in := []PolicyRule{
		rule("get", "", "pods", "", ""), rule("get", "", "pods", "a,b", ""), rule("list", "", "pods", "", ""),
		rule("get", "", "pods", "a", ""), rule("watch", "", "pods", "a", ""), rule("get", "-", "", "", "/x"),
	}
	var got []string
	for _, r := range Compact(in) {
		got = append(got, CompactString(r))
	}
	want := []string{
		`{APIGroups:[""], Resources:["pods"], ResourceNames:["a" "b"], Verbs:["get"]}`,
		`{NonResourceURLs:["/x"], Verbs:["get"]}`,
		`{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`,
		`{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get" "watch"]}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Compact:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDecode(t *testing.T) {
	r, err := DecodeRole([]byte(`{"metadata":{"name":"r","namespace":"n"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}],"aggregationRule":{"clusterRoleSelectors":[]}}`))
	if err != nil || r.Name != "r" || r.Namespace != "n" || len(r.Rules) != 1 || !r.Aggregated || r.Rules[0].Resources[0] != "pods" {
		t.Errorf("DecodeRole = %+v, %v", r, err)
	}
	b, err := DecodeBinding([]byte(`{"metadata":{"name":"b"},"roleRef":{"kind":"ClusterRole","name":"c"},"subjects":[{"kind":"User","name":"u"}]}`))
	if err != nil || b.Name != "b" || b.RoleRef.Name != "c" || len(b.Subjects) != 1 {
		t.Errorf("DecodeBinding = %+v, %v", b, err)
	}
	if _, err := DecodeBinding([]byte(`{"subjects":{}}`)); err == nil {
		t.Error("DecodeBinding accepted a bad object")
	}
}

// FuzzDecode feeds stored-object decoding anything: an error, never a
// panic, and a decoded binding can be indexed and decided on.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"b","namespace":"n"},"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"ServiceAccount","name":"s"}]}`))
	f.Add([]byte(`{"metadata":{"name":"r"},"rules":[{"verbs":["*"],"nonResourceURLs":["/x*"]}],"aggregationRule":null}`))
	f.Add([]byte(`{"rules":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a := New(brand)
		if r, err := DecodeRole(data); err == nil {
			a.PutRole(r)
		}
		if b, err := DecodeBinding(data); err == nil {
			a.PutBinding(b)
			u := &security.User{Name: "system:serviceaccount:n:s", Groups: []string{"g"}}
			a.Authorize(context.Background(), security.Attributes{User: u, Namespace: b.Namespace, Verb: "get", ResourceRequest: true})
			a.PolicyRulesFor(u, b.Namespace)
			a.DeleteBinding(b.Namespace, b.Name)
			if len(a.bySubject) != 0 {
				t.Fatalf("index keeps %v after delete", a.bySubject)
			}
		}
	})
}

// BenchmarkAuthorize decides a request of a user bound by one role binding
// among 10,000 bindings of other users, half cluster-wide.
func BenchmarkAuthorize(b *testing.B) {
	a := New(brand)
	a.PutRole(&Role{Name: "view", Rules: []PolicyRule{rule("get,list,watch", "", "configmaps,secrets,pods", "", "")}})
	for i := range 10000 {
		ns := ""
		if i%2 == 0 {
			ns = fmt.Sprintf("ns%d", i%100)
		}
		a.PutBinding(&Binding{Namespace: ns, Name: fmt.Sprintf("b%d", i), RoleRef: RoleRef{Kind: KindClusterRole, Name: "view"},
			Subjects: []Subject{{Kind: KindUser, Name: fmt.Sprintf("user%d", i)}}})
	}
	a.PutBinding(&Binding{Namespace: "ns1", Name: "alice", RoleRef: RoleRef{Kind: KindClusterRole, Name: "view"},
		Subjects: []Subject{{Kind: KindUser, Name: "alice"}}})
	attr := res("get", "", "configmaps", "", "cm1")
	attr.Namespace = "ns1"
	attr.User = &security.User{Name: "alice", Groups: []string{security.AllAuthenticated}}
	b.ReportAllocs()
	for b.Loop() {
		if d, _, _ := a.Authorize(context.Background(), attr); d != security.DecisionAllow {
			b.Fatal("not allowed")
		}
	}
}

// TestConcurrentUpdates decides while bindings and roles change (run with
// -race): every decision sees a whole binding, before or after a change.
func TestConcurrentUpdates(t *testing.T) {
	a := fixture()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			name := fmt.Sprintf("b%d", i%50)
			a.PutBinding(&Binding{Namespace: "ns1", Name: name, RoleRef: RoleRef{Kind: KindRole, Name: "cm-reader"},
				Subjects: []Subject{{Kind: KindUser, Name: "alice"}}})
			a.PutRole(&Role{Namespace: "ns1", Name: "cm-reader", Rules: []PolicyRule{rule("get,list", "", "configmaps", "", "")}})
			if i%3 == 0 {
				a.DeleteBinding("ns1", name)
			}
		}
	}()
	attr := res("list", "", "configmaps", "", "")
	attr.User, attr.Namespace = &security.User{Name: "alice"}, "ns1"
	for {
		select {
		case <-done:
			return
		default:
		}
		if d, _, _ := a.Authorize(context.Background(), attr); d != security.DecisionAllow {
			t.Fatal("alice's original binding stopped allowing")
		}
		a.RulesFor(context.Background(), attr.User, "ns1")
	}
}

// TestCoversWholeRules checks that Covers, which skips breaking down a
// rule one owner rule covers whole, finds exactly the parts that checking
// every part finds, in the same order.
func TestCoversWholeRules(t *testing.T) {
	byParts := func(owner, requested []PolicyRule) []PolicyRule {
		var missing []PolicyRule
		for _, r := range requested {
			for _, sub := range Breakdown(r) {
				covered := false
				for _, o := range owner {
					if ruleCovers(&o, &sub) {
						covered = true
					}
				}
				if !covered {
					missing = append(missing, sub)
				}
			}
		}
		return missing
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(vocab ...string) []string {
		var out []string
		for _, v := range vocab {
			if rng.IntN(3) == 0 {
				out = append(out, v)
			}
		}
		return out
	}
	random := func() PolicyRule {
		return PolicyRule{Verbs: pick("get", "list", "*"), APIGroups: pick("", "apps", "*"), Resources: pick("pods", "pods/log", "*/log", "*"),
			ResourceNames: pick("a", "b"), NonResourceURLs: pick("/a", "/b", "/*")}
	}
	// The case that needs care: an owner naming objects covers a rule
	// with names and URLs whole, but not its URL parts.
	cases := [][2][]PolicyRule{{
		{rule("get", "", "pods", "a", "/a")},
		{rule("get", "", "pods", "a", "/a")},
	}}
	for range 20000 {
		var c [2][]PolicyRule
		for i := range c {
			for range rng.IntN(4) {
				c[i] = append(c[i], random())
			}
		}
		cases = append(cases, c)
	}
	for _, c := range cases {
		ok, got := Covers(c[0], c[1])
		want := byParts(c[0], c[1])
		if fmt.Sprint(got) != fmt.Sprint(want) || ok != (len(want) == 0) {
			t.Fatalf("Covers(%v, %v) = %v, %v; want %v", c[0], c[1], ok, got, want)
		}
	}
}

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// recordingChain answers every question with one decision and remembers
// what it was asked.
type recordingChain struct {
	d      security.Decision
	reason string
	err    error
	asked  *security.Attributes
	rules  security.Rules
	ruleNS *string
}

func (c recordingChain) Authorize(_ context.Context, a security.Attributes) (security.Decision, string, error) {
	*c.asked = a
	return c.d, c.reason, c.err
}

func (c recordingChain) RulesFor(_ context.Context, u *security.User, ns string) (security.Rules, bool, error) {
	*c.ruleNS = u.Name + "@" + ns
	return c.rules, true, c.err
}

func decodeReview(t *testing.T, s string) registry.Object {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The attributes a review asks about, and the status it answers with.
func TestAccessReviewDecisions(t *testing.T) {
	t.Parallel()
	var asked security.Attributes
	var ns string
	alice := registry.Requester{Name: "alice", Groups: []string{"system:authenticated"}}
	for _, c := range []struct {
		name   string
		kind   string
		body   string
		d      security.Decision
		reason string
		err    error
		want   security.Attributes
		status string
	}{
		{
			name: "SAR allowed, version defaults to every version, the user is the spec's without added groups",
			kind: "SubjectAccessReview",
			body: `{"spec":{"user":"bob","uid":"u1","extra":{"k":["v"]},"resourceAttributes":{"namespace":"ns","verb":"get","group":"apps","resource":"deployments","subresource":"scale","name":"d"}}}`,
			d:    security.DecisionAllow, reason: "because",
			want: security.Attributes{User: &security.User{Name: "bob", UID: "u1", Extra: map[string][]string{"k": {"v"}}}, ResourceRequest: true,
				Verb: "get", Namespace: "ns", APIGroup: "apps", APIVersion: "*", Resource: "deployments", Subresource: "scale", Name: "d"},
			status: `{"allowed":true,"reason":"because"}`,
		},
		{
			name: "SAR denied with an error",
			kind: "SubjectAccessReview",
			body: `{"spec":{"groups":["g1"],"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}`,
			d:    security.DecisionDeny, reason: "no", err: errors.New("webhook down"),
			want:   security.Attributes{User: &security.User{Groups: []string{"g1"}}, Path: "/healthz", Verb: "get"},
			status: `{"allowed":false,"denied":true,"evaluationError":"webhook down","reason":"no"}`,
		},
		{
			name: "SSAR is the caller's; no opinion is not allowed and not denied",
			kind: "SelfSubjectAccessReview",
			body: `{"spec":{"resourceAttributes":{"verb":"list","resource":"pods","version":"v1"}}}`,
			d:    security.DecisionNoOpinion,
			want: security.Attributes{User: &security.User{Name: "alice", Groups: []string{"system:authenticated"}}, ResourceRequest: true,
				Verb: "list", APIVersion: "v1", Resource: "pods"},
			status: `{"allowed":false}`,
		},
		{
			name: "raw selectors parsed",
			kind: "SelfSubjectAccessReview",
			body: `{"spec":{"resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{"rawSelector":"spec.nodeName=n1"},"labelSelector":{"rawSelector":"app in (b,a),!x"}}}}`,
			d:    security.DecisionAllow,
			want: security.Attributes{User: &security.User{Name: "alice", Groups: []string{"system:authenticated"}}, ResourceRequest: true,
				Verb: "list", APIVersion: "*", Resource: "pods",
				FieldSelector: []security.SelectorRequirement{{Key: "spec.nodeName", Operator: "In", Values: []string{"n1"}}},
				LabelSelector: []security.SelectorRequirement{{Key: "app", Operator: "In", Values: []string{"a", "b"}}, {Key: "x", Operator: "DoesNotExist"}}},
			status: `{"allowed":true}`,
		},
		{
			name: "selectors that do not parse are left out and reported",
			kind: "SelfSubjectAccessReview",
			body: `{"spec":{"resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{"rawSelector":"key in value"},"labelSelector":{"rawSelector":"&"}}}}`,
			d:    security.DecisionDeny, err: errors.New("e"),
			want: security.Attributes{User: &security.User{Name: "alice", Groups: []string{"system:authenticated"}}, ResourceRequest: true,
				Verb: "list", APIVersion: "*", Resource: "pods"},
			status: `{"allowed":false,"denied":true,"evaluationError":"e; spec.resourceAttributes.fieldSelector ignored due to parse error; spec.resourceAttributes.labelSelector ignored due to parse error"}`,
		},
		{
			name: "requirements: those a selector cannot say are left out",
			kind: "SelfSubjectAccessReview",
			body: `{"spec":{"resourceAttributes":{"verb":"list","resource":"pods",` +
				`"fieldSelector":{"requirements":[{"key":"a","operator":"In","values":["1"]},{"key":"b","operator":"NotIn","values":["2"]},{"key":"c","operator":"In","values":["1","2"]},{"key":"d","operator":"Exists"}]},` +
				`"labelSelector":{"requirements":[{"key":"a","operator":"In","values":["2","1","2"]},{"key":"b","operator":"Exists"},{"key":"c","operator":"Gt","values":["1"]}]}}}}`,
			d: security.DecisionAllow,
			want: security.Attributes{User: &security.User{Name: "alice", Groups: []string{"system:authenticated"}}, ResourceRequest: true,
				Verb: "list", APIVersion: "*", Resource: "pods",
				FieldSelector: []security.SelectorRequirement{{Key: "a", Operator: "In", Values: []string{"1"}}, {Key: "b", Operator: "NotIn", Values: []string{"2"}}},
				LabelSelector: []security.SelectorRequirement{{Key: "a", Operator: "In", Values: []string{"1", "2"}}, {Key: "b", Operator: "Exists"}}},
			status: `{"allowed":true,"evaluationError":"spec.resourceAttributes.fieldSelector partially ignored due to parse error; spec.resourceAttributes.labelSelector partially ignored due to parse error"}`,
		},
		{
			name:   "LSAR in its namespace",
			kind:   "LocalSubjectAccessReview",
			body:   `{"metadata":{"namespace":"ns1"},"spec":{"user":"bob","resourceAttributes":{"namespace":"ns1","verb":"get","resource":"pods"}}}`,
			d:      security.DecisionAllow,
			want:   security.Attributes{User: &security.User{Name: "bob"}, ResourceRequest: true, Verb: "get", Namespace: "ns1", APIVersion: "*", Resource: "pods"},
			status: `{"allowed":true}`,
		},
	} {
		asked = security.Attributes{}
		ar := accessReviews{group: "authorization.example", sv: Services{Authorizer: recordingChain{d: c.d, reason: c.reason, err: c.err, asked: &asked, ruleNS: &ns}}}
		hooks := map[string]registry.Answer{
			"SubjectAccessReview": ar.subjectAccessReview, "SelfSubjectAccessReview": ar.selfSubjectAccessReview,
			"LocalSubjectAccessReview": ar.localSubjectAccessReview,
		}
		got, err := hooks[c.kind](context.Background(), registry.AnswerRequest{Who: alice, HasUser: true, Namespace: "ns1", Object: decodeReview(t, c.body)})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(asked, c.want) {
			t.Errorf("%s: asked\n%+v\nwant\n%+v", c.name, asked, c.want)
		}
		if s, _ := json.Marshal(got["status"]); string(s) != c.status {
			t.Errorf("%s: status %s, want %s", c.name, s, c.status)
		}
	}
}

// Invalid reviews are refused with upstream's field errors, in its order.
func TestAccessReviewValidation(t *testing.T) {
	t.Parallel()
	var asked security.Attributes
	var ns string
	ar := accessReviews{group: "authorization.example", sv: Services{Authorizer: recordingChain{asked: &asked, ruleNS: &ns}}}
	who := registry.Requester{Name: "alice"}
	for _, c := range []struct {
		kind, body string
		want       []string
	}{
		{"SelfSubjectAccessReview", `{"spec":{}}`,
			[]string{`spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`}},
		{"SubjectAccessReview", `{"spec":{}}`,
			[]string{`spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`,
				`spec.user: Invalid value: "": at least one of user or group must be specified`}},
		{"SubjectAccessReview", `{"metadata":{"name":"x","creationTimestamp":null},"spec":{"user":"u","resourceAttributes":{},"nonResourceAttributes":{"path":"/a","verb":"get"}}}`,
			[]string{`spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/a", Verb:"get"}: cannot be specified in combination with resourceAttributes`,
				`metadata: Invalid value: map[string]interface {}{"name":"x"}: must be empty`}},
		{"SelfSubjectAccessReview", `{"metadata":{"labels":{"a":"b"}},"spec":{"resourceAttributes":{}}}`,
			[]string{`metadata: Invalid value: map[string]interface {}{"labels":map[string]interface {}{"a":"b"}}: must be empty`}},
		{"LocalSubjectAccessReview", `{"metadata":{"namespace":"ns1","name":"x"},"spec":{"user":"u","resourceAttributes":{"namespace":"other"}}}`,
			[]string{`metadata: Invalid value: map[string]interface {}{"name":"x", "namespace":"ns1"}: must be empty except for namespace`,
				`spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace`}},
		{"LocalSubjectAccessReview", `{"metadata":{"namespace":"ns1"},"spec":{"groups":["g"],"nonResourceAttributes":{"path":"/a"}}}`,
			[]string{`spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/a", Verb:""}: disallowed on this kind of request`}},
		{"SelfSubjectAccessReview", `{"spec":{"resourceAttributes":{"fieldSelector":{"rawSelector":"foo","requirements":[{}]},"labelSelector":{}}}}`,
			[]string{`spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "foo": may not specified at the same time as requirements`,
				`spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified`,
				`spec.resourceAttributes.labelSelector.requirements: Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required`}},
		{"SelfSubjectAccessReview", `{"spec":{"resourceAttributes":{"fieldSelector":{}}}}`,
			[]string{`spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required`}},
		{"SelfSubjectAccessReview", `{"spec":{"resourceAttributes":{"fieldSelector":{"requirements":[{"key":"k","operator":"In"},{"key":"k","operator":"Exists","values":["v"]},{"key":"k","operator":"fake","values":["v"]}]}}}}`,
			[]string{"spec.resourceAttributes.fieldSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
				"spec.resourceAttributes.fieldSelector.requirements[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"}},
		{"SelfSubjectAccessReview", `{"spec":{"resourceAttributes":{"labelSelector":{"requirements":[{"key":""},{"key":"()foo"},{"key":"k","operator":"NotIn","values":[]},{"key":"k","operator":"DoesNotExist","values":["v"]},{"key":"k","operator":"In","values":["a b"]}]}}}}`,
			[]string{`spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: "": name part must be non-empty`,
				`spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`spec.resourceAttributes.labelSelector.requirements[1].key: Invalid value: "()foo": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				"spec.resourceAttributes.labelSelector.requirements[2].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
				"spec.resourceAttributes.labelSelector.requirements[3].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
				`spec.resourceAttributes.labelSelector.requirements[4].values[0]: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
	} {
		hooks := map[string]registry.Answer{
			"SubjectAccessReview": ar.subjectAccessReview, "SelfSubjectAccessReview": ar.selfSubjectAccessReview,
			"LocalSubjectAccessReview": ar.localSubjectAccessReview,
		}
		_, err := hooks[c.kind](context.Background(), registry.AnswerRequest{Who: who, HasUser: true, Namespace: "ns1", Object: decodeReview(t, c.body)})
		st := apierr.FromError(err).Status
		var got []string
		if st.Details != nil {
			for _, cause := range st.Details.Causes {
				got = append(got, cause.Field+": "+cause.Message)
			}
		}
		if st.Code != 422 || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %d\n%s\nwant\n%s", c.kind, c.body, st.Code, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
		if prefix := `.authorization.example "" is invalid: `; !strings.HasPrefix(st.Message, prefix) {
			t.Errorf("%s: message %q", c.kind, st.Message)
		}
	}
}

// A rules review lists the chain's rules for the caller, in a new object.
func TestSelfSubjectRulesReview(t *testing.T) {
	t.Parallel()
	var asked security.Attributes
	var ns string
	rules := security.Rules{
		Resource:    []security.ResourceRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"p"}}},
		NonResource: []security.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
	}
	ar := accessReviews{group: "authorization.example", sv: Services{Authorizer: recordingChain{asked: &asked, ruleNS: &ns, rules: rules, err: errors.New("partial")}}}
	got, err := ar.selfSubjectRulesReview(context.Background(), registry.AnswerRequest{Who: registry.Requester{Name: "alice"}, HasUser: true, Object: decodeReview(t, `{"spec":{"namespace":"ns1"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"creationTimestamp":null},"spec":{},"status":{"evaluationError":"partial","incomplete":true,` +
		`"nonResourceRules":[{"nonResourceURLs":["/healthz"],"verbs":["get"]}],"resourceRules":[{"apiGroups":[""],"resourceNames":["p"],"resources":["pods"],"verbs":["get"]}]}}`
	if s, _ := json.Marshal(got); string(s) != want || ns != "alice@ns1" {
		t.Errorf("got %s for %s, want %s", s, ns, want)
	}
	for _, c := range []struct {
		req  registry.AnswerRequest
		want string
	}{
		{registry.AnswerRequest{HasUser: true, Object: decodeReview(t, `{"spec":{}}`)}, "no namespace on request"},
		{registry.AnswerRequest{Object: decodeReview(t, `{"spec":{"namespace":"ns1"}}`)}, "no user present on request"},
	} {
		_, err := ar.selfSubjectRulesReview(context.Background(), c.req)
		if st := apierr.FromError(err).Status; st.Code != 400 || st.Message != c.want {
			t.Errorf("%d %q, want 400 %q", st.Code, st.Message, c.want)
		}
	}
}

// Any decoded body is answered or refused with a 4xx, never a panic.
func FuzzAccessReviews(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"user":"u","resourceAttributes":{"fieldSelector":{"rawSelector":"a=b"},"labelSelector":{"requirements":[{"key":"a","operator":"In","values":["b"]}]}}}}`,
		`{"metadata":{"namespace":"ns1"},"spec":{"groups":["g"],"nonResourceAttributes":{"path":"/x"}}}`,
		`{"spec":{"resourceAttributes":{"fieldSelector":{"requirements":[null,1,{"values":[2]}]},"labelSelector":"x"},"extra":{"k":"v"}}}`,
		`{"spec":{"namespace":"ns1"},"metadata":[]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var obj map[string]any
		if json.Unmarshal([]byte(body), &obj) != nil || obj == nil {
			return
		}
		var asked security.Attributes
		var ns string
		ar := accessReviews{group: "authorization.example", sv: Services{Authorizer: recordingChain{d: security.DecisionAllow, asked: &asked, ruleNS: &ns}}}
		for _, hook := range []registry.Answer{ar.subjectAccessReview, ar.selfSubjectAccessReview, ar.localSubjectAccessReview, ar.selfSubjectRulesReview} {
			var copied map[string]any
			_ = json.Unmarshal([]byte(body), &copied)
			_, err := hook(context.Background(), registry.AnswerRequest{Who: registry.Requester{Name: "u"}, HasUser: true, Namespace: "ns1", Object: copied})
			if err != nil {
				if code := apierr.FromError(err).Status.Code; code < 400 || code >= 500 {
					t.Errorf("%s: %v (%d)", body, err, code)
				}
			}
		}
	})
}

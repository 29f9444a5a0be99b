package filters

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
)

// authorizeThrough runs a request through RequestInfo, a fixed user and
// Authorize; the authorizer records what it was asked.
func authorizeThrough(t *testing.T, method, target string, z security.AuthorizerFunc) *httptest.ResponseRecorder {
	t.Helper()
	return authorizeThroughGate(t, true, method, target, z)
}

// authorizeThroughGate is authorizeThrough with AuthorizeWithSelectors
// as given.
func authorizeThroughGate(t *testing.T, withSelectors bool, method, target string, z security.AuthorizerFunc) *httptest.ResponseRecorder {
	t.Helper()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	writeErr := func(w http.ResponseWriter, r *http.Request, err error) {
		st := apierr.FromError(err).Status
		w.WriteHeader(int(st.Code))
		_ = json.NewEncoder(w).Encode(st)
	}
	h := RequestInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(WithUser(r.Context(), &security.User{Name: "alice<&>"}))
		Authorize(next, z, withSelectors, config.Brands["plat"], slog.New(slog.DiscardHandler), writeErr).ServeHTTP(w, r)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

// Collection reads hand their parsed selectors to the authorizers.
func TestAuthorizeSelectors(t *testing.T) {
	t.Parallel()
	in := func(k string, v ...string) security.SelectorRequirement {
		return security.SelectorRequirement{Key: k, Operator: "In", Values: v}
	}
	for _, c := range []struct {
		method, target string
		fields, labels []security.SelectorRequirement
	}{
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1,status.phase!%3DRunning&labelSelector=app%3Dweb,tier+in+(b,a),!x,y,v!%3D1,n+notin+(z),g%3E3",
			[]security.SelectorRequirement{in("spec.nodeName", "n1"), {Key: "status.phase", Operator: "NotIn", Values: []string{"Running"}}},
			[]security.SelectorRequirement{in("app", "web"), {Key: "n", Operator: "NotIn", Values: []string{"z"}}, in("tier", "a", "b"),
				{Key: "v", Operator: "NotIn", Values: []string{"1"}}, {Key: "x", Operator: "DoesNotExist"}, {Key: "y", Operator: "Exists"}}},
		{"DELETE", "/api/v1/namespaces/ns/pods?labelSelector=app%3D%3Dweb", nil, []security.SelectorRequirement{in("app", "web")}},
		{"GET", "/api/v1/namespaces/ns/pods?watch=1&fieldSelector=metadata.name%3Dp1", []security.SelectorRequirement{in("metadata.name", "p1")}, nil},
		// Unparsable selectors are left out; the handler refuses them.
		{"GET", "/api/v1/pods?fieldSelector=a%3Db%3Dc&labelSelector=a+in+(b", nil, nil},
		// Not a collection read, or the path form: no selectors.
		{"GET", "/api/v1/namespaces/ns/pods/p1?labelSelector=a%3Db", nil, nil},
		{"GET", "/api/v1/watch/namespaces/ns/pods?labelSelector=a%3Db", nil, nil},
	} {
		var got security.Attributes
		authorizeThrough(t, c.method, c.target, func(_ context.Context, a security.Attributes) (security.Decision, string, error) {
			got = a
			return security.DecisionAllow, "", nil
		})
		if !reflect.DeepEqual(got.FieldSelector, c.fields) || !reflect.DeepEqual(got.LabelSelector, c.labels) {
			t.Errorf("%s %s: fields %+v labels %+v, want %+v %+v", c.method, c.target, got.FieldSelector, got.LabelSelector, c.fields, c.labels)
		}
	}
}

// A refusal is a 403 whose details name the group, resource and object,
// leaving out the empty ones; the user's name is HTML-escaped, the
// authorizer's reason is not.
func TestAuthorizeForbidden(t *testing.T) {
	t.Parallel()
	deny := func(context.Context, security.Attributes) (security.Decision, string, error) {
		return security.DecisionNoOpinion, "no <rule>", nil
	}
	for _, c := range []struct{ method, target, want string }{
		{"GET", "/api/v1/namespaces/ns/configmaps",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden: User \"alice\u0026lt;\u0026amp;\u0026gt;\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"ns\": no \u003crule\u003e","reason":"Forbidden","details":{"kind":"configmaps"},"code":403}`},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/d1/scale",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \"d1\" is forbidden: User \"alice\u0026lt;\u0026amp;\u0026gt;\" cannot get resource \"deployments/scale\" in API group \"apps\" in the namespace \"ns\": no \u003crule\u003e","reason":"Forbidden","details":{"name":"d1","group":"apps","kind":"deployments"},"code":403}`},
		{"GET", "/apis",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"alice\u0026lt;\u0026amp;\u0026gt;\" cannot get path \"/apis\": no \u003crule\u003e","reason":"Forbidden","details":{},"code":403}`},
	} {
		rec := authorizeThrough(t, c.method, c.target, deny)
		if rec.Code != 403 {
			t.Errorf("%s: code %d", c.target, rec.Code)
			continue
		}
		var st apierr.Status
		_ = json.Unmarshal(rec.Body.Bytes(), &st)
		var want apierr.Status
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st, want) {
			t.Errorf("%s: status\n%s\nwant\n%s", c.target, rec.Body, c.want)
		}
	}
}

// An authorizer error without an allow, and a URL naming a verb with
// nothing after it, are plain-text 500s.
func TestAuthorizeInternalErrors(t *testing.T) {
	t.Parallel()
	failing := func(context.Context, security.Attributes) (security.Decision, string, error) {
		return security.DecisionNoOpinion, "", errors.New("webhook <down>")
	}
	for _, c := range []struct {
		target string
		z      security.AuthorizerFunc
		want   string
	}{
		{"/api/v1/pods?x=a&y=b", failing, `Internal Server Error: "/api/v1/pods?x=a&amp;y=b": webhook &lt;down&gt;` + "\n"},
		{"/api/v1/watch", nil, `Internal Server Error: "/api/v1/watch": failed to create RequestInfo: unable to determine kind and namespace from url, /api/v1/watch` + "\n"},
	} {
		rec := authorizeThrough(t, "GET", c.target, c.z)
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != 500 || string(body) != c.want {
			t.Errorf("%s: %d %q, want 500 %q", c.target, rec.Code, body, c.want)
		}
	}
}

// With AuthorizeWithSelectors off the authorizers see no selectors.
func TestAuthorizeSelectorsGateOff(t *testing.T) {
	t.Parallel()
	var got security.Attributes
	rec := authorizeThroughGate(t, false, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Dweb",
		func(_ context.Context, a security.Attributes) (security.Decision, string, error) {
			got = a
			return security.DecisionAllow, "", nil
		})
	if rec.Code != http.StatusTeapot || got.Resource != "pods" || got.FieldSelector != nil || got.LabelSelector != nil {
		t.Errorf("code %d, attributes %+v", rec.Code, got)
	}
}

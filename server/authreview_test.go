package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The review resources of authentication.<domain>/v1 answer who a token or
// the caller is, and store nothing.
func TestTokenReview(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/apis/" + platBrand.Group("authentication") + "/v1/tokenreviews"
	review := func(token string, extra ...string) map[string]any {
		body := `{"apiVersion":"` + platBrand.Group("authentication") + `/v1","kind":"TokenReview","spec":{"token":"` + token + `"` + strings.Join(extra, "") + `}}`
		return e.do("POST", base, body).mustCode(t, 201).obj(t)
	}
	got := review(adminToken)
	// The API audiences default to the service-account issuer.
	const api = "https://plat.default.svc.cluster.local"
	want := `{"audiences":["` + api + `"],"authenticated":true,"user":{"groups":["system:masters","system:authenticated"],"uid":"admin-uid","username":"admin"}}`
	if s := jsonOf(t, got["status"]); s != want {
		t.Errorf("admin token: status %s, want %s", s, want)
	}
	// A static token is valid for the API audiences only.
	if s := jsonOf(t, review(adminToken, `,"audiences":["vault","`+api+`"]`)["status"]); s != want {
		t.Errorf("admin token for vault and the API: status %s, want %s", s, want)
	}
	if s := jsonOf(t, review(adminToken, `,"audiences":["vault"]`)["status"]); s != `{"error":"invalid bearer token","user":{}}` {
		t.Errorf("admin token for vault: status %s", s)
	}
	if mf := jsonOf(t, path(got, "metadata.managedFields")); !strings.Contains(mf, `"fieldsV1":{"f:spec":{"f:token":{}}}`) || !strings.Contains(mf, `"manager":"platd-test","operation":"Update"`) {
		t.Errorf("managedFields %s", mf)
	}
	if ts, ok := path(got, "metadata").(map[string]any)["creationTimestamp"]; !ok || ts != nil {
		t.Errorf("creationTimestamp %v, want null", ts)
	}
	got = review("not-a-valid-token")
	if s := jsonOf(t, got["status"]); s != `{"error":"invalid bearer token","user":{}}` {
		t.Errorf("bogus token: status %s", s)
	}
	if s := jsonOf(t, got["spec"]); s != `{"token":"not-a-valid-token"}` {
		t.Errorf("spec not echoed: %s", s)
	}
	e.do("POST", base, `{"spec":{}}`).mustCode(t, 400).mustMessage(t, "token is required for TokenReview in authentication")
	e.do("POST", base+"?dryRun=All", `{"spec":{"token":"`+aliceToken+`"}}`).mustCode(t, 201)
	e.do("GET", base, nil).mustCode(t, 405)
	e.do("POST", "/apis/"+platBrand.Group("authentication")+"/v1/namespaces/default/tokenreviews", `{"spec":{"token":"x"}}`).mustCode(t, 404)
	e.do("POST", base+"?fieldValidation=Strict", `{"spec":{"token":"x","bogus":1}}`).mustCode(t, 400).
		mustMessage(t, `TokenReview in version "v1" cannot be handled as a TokenReview: strict decoding error: unknown field "spec.bogus"`)
}

func TestSelfSubjectReview(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/apis/" + platBrand.Group("authentication") + "/v1/selfsubjectreviews"
	body := `{"apiVersion":"` + platBrand.Group("authentication") + `/v1","kind":"SelfSubjectReview"}`
	for _, c := range []struct {
		token, want string
	}{
		{adminToken, `{"userInfo":{"groups":["system:masters","system:authenticated"],"uid":"admin-uid","username":"admin"}}`},
		{aliceToken, `{"userInfo":{"groups":["system:authenticated"],"uid":"alice-uid","username":"alice"}}`},
	} {
		got := e.send(req{method: "POST", path: base, body: body, token: c.token}).mustCode(t, 201).obj(t)
		if s := jsonOf(t, got["status"]); s != c.want {
			t.Errorf("status %s, want %s", s, c.want)
		}
		if got["kind"] != "SelfSubjectReview" || got["apiVersion"] != platBrand.Group("authentication")+"/v1" {
			t.Errorf("kind %v apiVersion %v", got["kind"], got["apiVersion"])
		}
		ts, _ := path(got, "metadata.creationTimestamp").(string)
		if at, err := time.Parse(time.RFC3339, ts); err != nil || time.Since(at) > time.Minute {
			t.Errorf("creationTimestamp %q", ts)
		}
		if path(got, "metadata.managedFields") != nil {
			t.Errorf("a new object carries the request's managedFields: %v", got["metadata"])
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A service-account token is reviewed with its audiences and credential id.
func TestTokenReviewServiceAccountToken(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"robot"}}`).mustCode(t, 201)
	tr := e.do("POST", "/api/v1/namespaces/default/serviceaccounts/robot/token", `{"spec":{"audiences":["vault","https://plat.default.svc.cluster.local"]}}`).mustCode(t, 201).obj(t)
	token, _ := path(tr, "status.token").(string)
	review := func(auds string) map[string]any {
		body := `{"spec":{"token":"` + token + `"` + auds + `}}`
		return e.do("POST", "/apis/"+platBrand.Group("authentication")+"/v1/tokenreviews", body).mustCode(t, 201).obj(t)
	}
	got := review("")
	if path(got, "status.authenticated") != true || path(got, "status.user.username") != "system:serviceaccount:default:robot" ||
		jsonOf(t, path(got, "status.audiences")) != `["https://plat.default.svc.cluster.local"]` ||
		jsonOf(t, path(got, "status.user.groups")) != `["system:serviceaccounts","system:serviceaccounts:default","system:authenticated"]` {
		t.Errorf("review: %s", jsonOf(t, got["status"]))
	}
	if cid := jsonOf(t, path(got, "status.user.extra")); !strings.Contains(cid, `"`+platBrand.Group("authentication")+`/credential-id":["JTI=`) {
		t.Errorf("extra %s", cid)
	}
	if got := review(`,"audiences":["vault"]`); jsonOf(t, path(got, "status.audiences")) != `["vault"]` {
		t.Errorf("review for vault: %s", jsonOf(t, got["status"]))
	}
	got = review(`,"audiences":["db"]`)
	want := `{"error":"[invalid bearer token, token audiences [\"vault\" \"https://plat.default.svc.cluster.local\"] is invalid for the target audiences [\"db\"]]","user":{}}`
	if s := jsonOf(t, got["status"]); s != want {
		t.Errorf("review for db:\n got  %s\n want %s", s, want)
	}
}

package server_test

import (
	"testing"

	"platd/config"
)

func TestImpersonation(t *testing.T) {
	t.Parallel()
	e := start(t)
	whoami := "/apis/" + platBrand.Group("authentication") + "/v1/selfsubjectreviews"
	as := func(h map[string]string) string {
		t.Helper()
		got := e.send(req{method: "POST", path: whoami, body: `{}`, token: aliceToken, header: h}).mustCode(t, 201).obj(t)
		return jsonOf(t, path(got, "status.userInfo"))
	}
	for _, c := range []struct {
		name   string
		header map[string]string
		want   string
	}{
		{"user", map[string]string{"Impersonate-User": "bob"},
			`{"groups":["system:authenticated"],"username":"bob"}`},
		{"user and groups", map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "dev"},
			`{"groups":["dev","system:authenticated"],"username":"bob"}`},
		{"unauthenticated group kept alone", map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:unauthenticated"},
			`{"groups":["system:unauthenticated"],"username":"bob"}`},
		{"anonymous", map[string]string{"Impersonate-User": "system:anonymous"},
			`{"groups":["system:unauthenticated"],"username":"system:anonymous"}`},
		{"service account", map[string]string{"Impersonate-User": "system:serviceaccount:ns1:robot"},
			`{"groups":["system:serviceaccounts","system:serviceaccounts:ns1","system:authenticated"],"username":"system:serviceaccount:ns1:robot"}`},
		{"service account with groups", map[string]string{"Impersonate-User": "system:serviceaccount:ns1:robot", "Impersonate-Group": "g"},
			`{"groups":["g","system:authenticated"],"username":"system:serviceaccount:ns1:robot"}`},
		{"not a service account name", map[string]string{"Impersonate-User": "system:serviceaccount:NS:robot"},
			`{"groups":["system:authenticated"],"username":"system:serviceaccount:NS:robot"}`},
		{"uid and extras", map[string]string{"Impersonate-User": "bob", "Impersonate-Uid": "u-1", "Impersonate-Extra-Scopes": "view",
			"Impersonate-Extra-Acme.com%2Fteam": "blue"},
			`{"extra":{"acme.com/team":["blue"],"scopes":["view"]},"groups":["system:authenticated"],"uid":"u-1","username":"bob"}`},
	} {
		if got := as(c.header); got != c.want {
			t.Errorf("%s: userInfo %s, want %s", c.name, got, c.want)
		}
	}

	// Groups, extras or a UID without a user: a plain-text 500.
	r := e.send(req{method: "GET", path: "/api/v1/namespaces?limit=1", token: aliceToken, header: map[string]string{"Impersonate-Group": "g", "Impersonate-Uid": "u"}}).mustCode(t, 500)
	want := `Internal Server Error: "/api/v1/namespaces?limit=1": requested [{Group  g    } {UID  u  ` + platBrand.Group("authentication") + `/v1  }] without impersonating a user` + "\n"
	if string(r.body) != want {
		t.Errorf("body %q\nwant %q", r.body, want)
	}
}

func TestImpersonationForbidden(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.AuthorizationModes = []string{config.ModeAlwaysDeny} })
	const deny = ": Everything is forbidden."
	for _, c := range []struct {
		header map[string]string
		msg    string
	}{
		{map[string]string{"Impersonate-User": "system:admin"},
			`users "system:admin" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope` + deny},
		{map[string]string{"Impersonate-User": "system:serviceaccount:ns:x"},
			`serviceaccounts "x" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns"` + deny},
	} {
		e.send(req{method: "GET", path: "/api/v1/namespaces", token: aliceToken, header: c.header}).mustCode(t, 403).mustMessage(t, c.msg)
	}
	// system:masters may impersonate anyone; each attribute is checked
	// with the impersonated groups only once they apply.
	got := e.do("POST", "/apis/"+platBrand.Group("authentication")+"/v1/selfsubjectreviews", `{}`, "Impersonate-User", "bob", "Impersonate-Group", "system:masters").mustCode(t, 201).obj(t)
	if s := jsonOf(t, path(got, "status.userInfo")); s != `{"groups":["system:masters","system:authenticated"],"username":"bob"}` {
		t.Errorf("admin as bob: %s", s)
	}
	// Checked as the impersonated user: bob is not in system:masters.
	e.do("GET", "/api/v1/namespaces", nil, "Impersonate-User", "bob").mustCode(t, 403).
		mustMessage(t, `namespaces is forbidden: User "bob" cannot list resource "namespaces" in API group "" at the cluster scope`+deny)
}

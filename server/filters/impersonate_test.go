package filters

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
)

// Each attribute is authorized on its own, as the original user; the first
// refused one is the 403.
func TestImpersonateChecksEachAttribute(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	var asked []string
	refuse := ""
	authz := security.AuthorizerFunc(func(_ context.Context, a security.Attributes) (security.Decision, string, error) {
		key := a.Resource + "/" + a.Subresource + ":" + a.Name
		asked = append(asked, a.User.Name+" "+a.Verb+" "+a.APIGroup+" "+key)
		if key == refuse {
			return security.DecisionNoOpinion, "", nil
		}
		return security.DecisionAllow, "", nil
	})
	var msg string
	writeErr := func(w http.ResponseWriter, _ *http.Request, err error) {
		st := apierr.FromError(err).Status
		msg = st.Message
		w.WriteHeader(int(st.Code))
	}
	var seen *http.Request
	h := Impersonate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r }), authz, b, slog.Default(), writeErr)
	alice := &security.User{Name: "alice", Groups: []string{"system:authenticated"}}
	send := func() *httptest.ResponseRecorder {
		asked, seen, msg = nil, nil, ""
		r := httptest.NewRequest("GET", "/api", nil)
		r.Header.Set("Impersonate-User", "system:serviceaccount:ns:sa")
		r.Header.Add("Impersonate-Group", "g1")
		r.Header.Add("Impersonate-Group", "g2")
		r.Header.Add("Impersonate-Extra-Scopes", "a")
		r.Header.Add("Impersonate-Extra-Scopes", "b")
		r.Header.Set("Impersonate-Uid", "u1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(WithUser(r.Context(), alice)))
		return w
	}
	if w := send(); w.Code != 200 {
		t.Fatalf("code %d", w.Code)
	}
	want := "alice impersonate  serviceaccounts/:sa|alice impersonate  groups/:g1|alice impersonate  groups/:g2|" +
		"alice impersonate " + b.Group("authentication") + " userextras/scopes:a|alice impersonate " + b.Group("authentication") + " userextras/scopes:b|" +
		"alice impersonate " + b.Group("authentication") + " uids/:u1"
	if got := strings.Join(asked, "|"); got != want {
		t.Errorf("checks\n got %s\nwant %s", got, want)
	}
	u := UserFrom(seen.Context())
	if u.Name != "system:serviceaccount:ns:sa" || strings.Join(u.Groups, ",") != "g1,g2,system:authenticated" || u.UID != "u1" || strings.Join(u.Extra["scopes"], ",") != "a,b" {
		t.Errorf("impersonated user %+v", u)
	}
	if OriginalUserFrom(seen.Context()) != alice {
		t.Errorf("original user lost")
	}
	for k := range seen.Header {
		if strings.HasPrefix(k, "Impersonate-") {
			t.Errorf("header %s reached the handler", k)
		}
	}
	for _, c := range []struct{ refuse, msg string }{
		{"userextras/scopes:b", `userextras.` + b.Group("authentication") + ` "b" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "` + b.Group("authentication") + `" at the cluster scope`},
		{"uids/:u1", `uids.` + b.Group("authentication") + ` "u1" is forbidden: User "alice" cannot impersonate resource "uids" in API group "` + b.Group("authentication") + `" at the cluster scope`},
		{"groups/:g2", `groups "g2" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope`},
	} {
		refuse = c.refuse
		if w := send(); w.Code != 403 || msg != c.msg || seen != nil {
			t.Errorf("refusing %s: code %d, message %q\nwant %q", c.refuse, w.Code, msg, c.msg)
		}
	}
}

func FuzzImpersonationRequests(f *testing.F) {
	f.Add("bob", "g", "Scopes", "v", "u")
	f.Add("system:serviceaccount:ns:sa", "", "acme.com%2fx", "v", "")
	f.Add("", "g", "", "", "")
	f.Add("system:serviceaccount::", "", "%zz", "", "")
	f.Fuzz(func(t *testing.T, user, group, extraKey, extraValue, uid string) {
		h := http.Header{}
		for k, v := range map[string]string{"Impersonate-User": user, "Impersonate-Group": group, "Impersonate-Uid": uid} {
			if v != "" {
				h[k] = []string{v}
			}
		}
		if extraKey != "" {
			h[http.CanonicalHeaderKey("Impersonate-Extra-"+extraKey)] = []string{extraValue}
		}
		asks, err := ImpersonationRequests(h, fuzzBrand.Group("authentication"))
		if err != nil {
			if user != "" || !strings.Contains(err.Error(), "without impersonating a user") {
				t.Fatalf("error %v for user %q", err, user)
			}
			return
		}
		if user == "" && len(asks) > 0 {
			t.Fatalf("impersonation without a user: %v", asks)
		}
		for _, a := range asks {
			if a.kind == "ServiceAccount" && user != serviceAccountUserPrefix+a.namespace+":"+a.name {
				t.Fatalf("service account %v from %q", a, user)
			}
		}
	})
}

// fuzzBrand spells the authentication group of the fuzzed requests.
var fuzzBrand, _ = config.LookupBrand("plat")

package filters

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"platd/security"
	"platd/server/apierr"
)

func TestAuthenticateFilter(t *testing.T) {
	t.Parallel()
	authn := security.AuthenticatorFunc(func(r *http.Request) (*security.User, bool, error) {
		switch r.Header.Get("Authorization") {
		case "":
			return security.AnonymousUser(), true, nil
		case "Bearer good":
			return &security.User{Name: "me@example.com"}, true, nil
		case "Bearer admin":
			return &security.User{Name: "admin"}, true, nil
		}
		return nil, false, security.ErrInvalidBearerToken
	})
	m := NewAuthMetrics(fuzzBrand.SystemNamespace)
	var seen http.Header
	var who *security.User
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen, who = r.Header.Clone(), UserFrom(r.Context()) })
	writeErr := func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(int(apierr.FromError(err).Status.Code))
	}
	h := Authenticate(context.Background(), next, authn, slog.Default(), writeErr, m, nil)
	for _, c := range []struct {
		auth string
		code int
		user string
	}{
		{"Bearer good", 200, "me@example.com"},
		{"Bearer admin", 200, "admin"},
		{"Bearer bad", 401, ""},
		{"", 200, security.Anonymous},
	} {
		seen, who = nil, nil
		r := httptest.NewRequest("GET", "/healthz", nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		r.Header.Set("X-Remote-User", "mallory")
		r.Header.Set("X-Remote-Group", "system:masters")
		r.Header.Set("x-remote-extra-scopes", "all")
		r.Header.Set("X-Remote-Uid", "0")
		r.Header.Set("X-Other", "kept")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.code {
			t.Errorf("%q: code %d, want %d", c.auth, w.Code, c.code)
			continue
		}
		if c.code != 200 {
			if seen != nil {
				t.Errorf("%q: handler ran", c.auth)
			}
			continue
		}
		if who == nil || who.Name != c.user {
			t.Errorf("%q: user %+v, want %s", c.auth, who, c.user)
		}
		for _, k := range []string{"Authorization", "X-Remote-User", "X-Remote-Group", "X-Remote-Extra-Scopes", "X-Remote-Uid"} {
			if seen.Get(k) != "" {
				t.Errorf("%q: handler saw %s", c.auth, k)
			}
		}
		if seen.Get("X-Other") != "kept" {
			t.Errorf("%q: other header dropped", c.auth)
		}
	}
	got := m.Snapshot()
	if got.Attempts[AuthSuccess] != 3 || got.Attempts[AuthError] != 1 || got.Attempts[AuthFailure] != 0 {
		t.Errorf("attempts %v", got.Attempts)
	}
	if got.UserRequests["email_id"] != 1 || got.UserRequests["admin"] != 1 || got.UserRequests["other"] != 1 {
		t.Errorf("user requests %v", got.UserRequests)
	}
}

// An anonymous HTTP/2 client is told to close its connection; an
// authenticated one keeps it.
func TestAuthenticateAnonymousHTTP2(t *testing.T) {
	t.Parallel()
	authn := security.AuthenticatorFunc(func(r *http.Request) (*security.User, bool, error) {
		if r.Header.Get("Authorization") == "" {
			return security.AnonymousUser(), true, nil
		}
		return &security.User{Name: "alice"}, true, nil
	})
	h := Authenticate(context.Background(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), authn, slog.Default(), nil, nil, nil)
	for _, c := range []struct {
		auth  string
		proto int
		close bool
	}{{"", 2, true}, {"", 1, false}, {"Bearer x", 2, false}} {
		r := httptest.NewRequest("GET", "/healthz", nil)
		r.ProtoMajor = c.proto
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("Connection") == "close"; got != c.close {
			t.Errorf("%q over HTTP/%d: Connection close %v, want %v", c.auth, c.proto, got, c.close)
		}
	}
}

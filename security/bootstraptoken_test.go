package security

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const testBootstrapType = "bootstrap.example/token"

type fakeBootstrapSecrets struct {
	byName map[string]*BootstrapTokenSecret
	err    error
	asked  []string
}

func (f *fakeBootstrapSecrets) BootstrapTokenSecret(_ context.Context, name string) (*BootstrapTokenSecret, error) {
	f.asked = append(f.asked, name)
	return f.byName[name], f.err
}

func TestBootstrapTokenAuthenticator(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	valid := func() *BootstrapTokenSecret {
		return &BootstrapTokenSecret{Type: testBootstrapType, Data: map[string][]byte{
			BootstrapTokenIDKey:              []byte("abcdef"),
			BootstrapTokenSecretKey:          []byte("0123456789abcdef"),
			"usage-bootstrap-authentication": []byte("true"),
		}}
	}
	with := func(change func(s *BootstrapTokenSecret)) *BootstrapTokenSecret {
		s := valid()
		change(s)
		return s
	}
	const token = "abcdef.0123456789abcdef"
	tests := []struct {
		name       string
		token      string
		secret     *BootstrapTokenSecret
		wantUser   string
		wantGroups []string
	}{
		{name: "valid", token: token, secret: valid(), wantUser: "system:bootstrap:abcdef", wantGroups: []string{"system:bootstrappers"}},
		{name: "future expiration", token: token, secret: with(func(s *BootstrapTokenSecret) {
			s.Data["expiration"] = []byte(now.Add(time.Second).Format(time.RFC3339))
		}), wantUser: "system:bootstrap:abcdef", wantGroups: []string{"system:bootstrappers"}},
		{name: "extra groups sorted and deduplicated", token: token, secret: with(func(s *BootstrapTokenSecret) {
			s.Data["auth-extra-groups"] = []byte("system:bootstrappers:z,system:bootstrappers:a-1:b,system:bootstrappers:z")
		}), wantUser: "system:bootstrap:abcdef", wantGroups: []string{"system:bootstrappers", "system:bootstrappers:a-1:b", "system:bootstrappers:z"}},
		// Every rejection below is silent.
		{name: "not a bootstrap token", token: "some-static-token", secret: valid()},
		{name: "upper case", token: "ABCDEF.0123456789abcdef", secret: valid()},
		{name: "short secret", token: "abcdef.0123456789abcde", secret: valid()},
		{name: "no secret", token: token},
		{name: "being deleted", token: token, secret: with(func(s *BootstrapTokenSecret) { s.Deleting = true })},
		{name: "wrong type", token: token, secret: with(func(s *BootstrapTokenSecret) { s.Type = "Opaque" })},
		{name: "no data", token: token, secret: with(func(s *BootstrapTokenSecret) { s.Data = nil })},
		{name: "wrong secret", token: "abcdef.0123456789abcdee", secret: valid()},
		{name: "secret missing", token: token, secret: with(func(s *BootstrapTokenSecret) { delete(s.Data, "token-secret") })},
		{name: "token id differs", token: token, secret: with(func(s *BootstrapTokenSecret) { s.Data["token-id"] = []byte("abcdeg") })},
		{name: "token id missing", token: token, secret: with(func(s *BootstrapTokenSecret) { delete(s.Data, "token-id") })},
		{name: "expired", token: token, secret: with(func(s *BootstrapTokenSecret) {
			s.Data["expiration"] = []byte(now.Add(-time.Second).Format(time.RFC3339))
		})},
		{name: "expires now", token: token, secret: with(func(s *BootstrapTokenSecret) { s.Data["expiration"] = []byte(now.Format(time.RFC3339)) })},
		{name: "unparseable expiration", token: token, secret: with(func(s *BootstrapTokenSecret) { s.Data["expiration"] = []byte("tomorrow") })},
		{name: "no authentication usage", token: token, secret: with(func(s *BootstrapTokenSecret) { delete(s.Data, "usage-bootstrap-authentication") })},
		{name: "authentication usage not exactly true", token: token, secret: with(func(s *BootstrapTokenSecret) {
			s.Data["usage-bootstrap-authentication"] = []byte("True")
		})},
		{name: "invalid extra group", token: token, secret: with(func(s *BootstrapTokenSecret) {
			s.Data["auth-extra-groups"] = []byte("system:bootstrappers:ok,system:masters")
		})},
		{name: "empty extra group entry", token: token, secret: with(func(s *BootstrapTokenSecret) {
			s.Data["auth-extra-groups"] = []byte("system:bootstrappers:ok,")
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeBootstrapSecrets{byName: map[string]*BootstrapTokenSecret{}}
			if tt.secret != nil {
				src.byName["bootstrap-token-abcdef"] = tt.secret
			}
			a := NewBootstrapTokenAuthenticator(src, testBootstrapType, func() time.Time { return now }, nil)
			u, ok, err := a.AuthenticateToken(context.Background(), tt.token)
			if err != nil {
				t.Fatalf("error %v; rejections must be silent", err)
			}
			if tt.wantUser == "" {
				if ok || u != nil {
					t.Fatalf("accepted as %+v", u)
				}
				return
			}
			if !ok || u.Name != tt.wantUser || !slices.Equal(u.Groups, tt.wantGroups) || u.UID != "" || u.Extra != nil {
				t.Fatalf("got %+v ok=%v, want %s %v", u, ok, tt.wantUser, tt.wantGroups)
			}
			if !slices.Equal(src.asked, []string{"bootstrap-token-abcdef"}) {
				t.Fatalf("looked up %v", src.asked)
			}
		})
	}
}

func TestBootstrapTokenAuthenticatorLookupError(t *testing.T) {
	boom := errors.New("store closed")
	a := NewBootstrapTokenAuthenticator(&fakeBootstrapSecrets{err: boom}, testBootstrapType, nil, nil)
	if _, ok, err := a.AuthenticateToken(context.Background(), "abcdef.0123456789abcdef"); ok || !errors.Is(err, boom) {
		t.Fatalf("ok=%v err=%v, want the lookup error", ok, err)
	}
	// A token of another form never reaches the lookup.
	if _, ok, err := a.AuthenticateToken(context.Background(), "x"); ok || err != nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
}

func TestBootstrapTokenExpiration(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		value     string
		remaining time.Duration
		expired   bool
	}{
		{"", 0, false},
		{"2026-01-02T03:04:06Z", time.Second, false},
		{"2026-01-02T04:04:05+01:00", 0, true},
		{"2026-01-02T03:04:04Z", 0, true},
		{"2026-01-02", 0, true},
	} {
		r, e := BootstrapTokenExpiration(tt.value, now)
		if r != tt.remaining || e != tt.expired {
			t.Errorf("%q: got %v %v, want %v %v", tt.value, r, e, tt.remaining, tt.expired)
		}
	}
}

func TestValidateBootstrapGroup(t *testing.T) {
	for g, ok := range map[string]bool{
		"system:bootstrappers:a":                           true,
		"system:bootstrappers:kubeadm:default-node-token":  true,
		"system:bootstrappers:" + strings.Repeat("a", 256): true,
		"system:bootstrappers:" + strings.Repeat("a", 257): false,
		"system:bootstrappers:":                            false,
		"system:bootstrappers":                             false,
		"system:bootstrappers:a-":                          false,
		"system:bootstrappers:A":                           false,
		"system:masters":                                   false,
	} {
		err := ValidateBootstrapGroup(g)
		if (err == nil) != ok {
			t.Errorf("%q: err=%v, want ok=%v", g, err, ok)
		}
	}
	err := ValidateBootstrapGroup("system:masters")
	want := `bootstrap group "system:masters" is invalid (must match \Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestParseBootstrapTokenSecretName(t *testing.T) {
	for name, want := range map[string]string{"bootstrap-token-abc123": "abc123", "bootstrap-token-abc12": "", "bootstrap-token-abc1234": "", "x-abc123": ""} {
		id, ok := ParseBootstrapTokenSecretName(name)
		if id != want || ok != (want != "") {
			t.Errorf("%q: got %q %v", name, id, ok)
		}
	}
}

var (
	tokenPattern = regexp.MustCompile(BootstrapTokenPattern)
	groupPattern = regexp.MustCompile(BootstrapGroupPattern)
)

// FuzzParseBootstrapToken checks the hand-written parsers against the
// published patterns.
func FuzzParseBootstrapToken(f *testing.F) {
	for _, s := range []string{"abcdef.0123456789abcdef", "abcdef.0123456789abcdeF", "abcdef:0123456789abcdef", "", ".", "system:bootstrappers:a-b", "system:bootstrappers:-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, secret, ok := ParseBootstrapToken(s)
		m := tokenPattern.FindStringSubmatch(s)
		if ok != (m != nil) || (ok && (id != m[1] || secret != m[2])) {
			t.Fatalf("%q: got %q %q %v, pattern says %q", s, id, secret, ok, m)
		}
		if got, want := ValidateBootstrapGroup(s) == nil, groupPattern.MatchString(s); got != want {
			t.Fatalf("%q: group valid=%v, pattern says %v", s, got, want)
		}
	})
}

func TestSignDetachedJWS(t *testing.T) {
	content := []byte("apiVersion: v1\nkind: Config\n")
	sig, err := SignDetachedJWS(content, "abcdef", "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	// The exact form joining clients recompute: header {"alg","kid"},
	// empty payload segment, HMAC-SHA256 keyed with the token secret.
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","kid":"abcdef"}`))
	mac := hmac.New(sha256.New, []byte("0123456789abcdef"))
	mac.Write([]byte(header + "." + enc.EncodeToString(content)))
	if want := header + ".." + enc.EncodeToString(mac.Sum(nil)); sig != want {
		t.Fatalf("signature\n got %s\nwant %s", sig, want)
	}
	if err := VerifyDetachedJWS(sig, content, "abcdef", "0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	if err := VerifyDetachedJWS(sig, append(content, ' '), "abcdef", "0123456789abcdef"); err == nil {
		t.Fatal("changed content verified")
	}
	if err := VerifyDetachedJWS(sig, content, "abcdef", "0123456789abcdee"); err == nil {
		t.Fatal("wrong secret verified")
	}
}

func TestMarshalClusterInfo(t *testing.T) {
	b, err := MarshalClusterInfo("https://127.0.0.1:6443", []byte("PEM"))
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: UEVN
    server: https://127.0.0.1:6443
  name: ""
contexts: null
current-context: ""
kind: Config
preferences: {}
users: null
`
	if string(b) != want {
		t.Fatalf("got\n%s\nwant\n%s", b, want)
	}
}

package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ptr(s string) *string { return &s }

// validJWT is an entry that passes every rule; cases change one thing.
func validJWT() JWTAuthenticator {
	return JWTAuthenticator{
		Issuer:        Issuer{URL: "https://issuer.example.com", Audiences: []string{"platd"}},
		ClaimMappings: ClaimMappings{Username: PrefixedClaimOrExpression{Claim: "sub", Prefix: ptr("")}},
	}
}

func testCAPEM(t *testing.T) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestValidateAuthenticationConfig(t *testing.T) {
	t.Parallel()
	b := Brands["kubernetes"]
	ca := testCAPEM(t)
	cases := []struct {
		name   string
		mutate func(c *AuthenticationConfiguration)
		want   []string
	}{
		{"valid", func(c *AuthenticationConfiguration) {}, nil},
		{"valid with CA, discovery and claim rule", func(c *AuthenticationConfiguration) {
			c.JWT[0].Issuer.CertificateAuthority = ca
			c.JWT[0].Issuer.DiscoveryURL = "https://internal.example/.well-known/openid-configuration"
			c.JWT[0].ClaimValidationRules = []ClaimValidationRule{{Claim: "hd", RequiredValue: "example.com"}, {Expression: "true", Message: "m"}}
		}, nil},
		{"too many", func(c *AuthenticationConfiguration) {
			for i := 1; i <= MaxJWTAuthenticators; i++ {
				j := validJWT()
				j.Issuer.URL = fmt.Sprintf("https://issuer%d.example.com", i)
				c.JWT = append(c.JWT, j)
			}
		}, []string{"jwt: Too many: 65: must have at most 64 items"}},
		{"duplicate issuer and discovery URL", func(c *AuthenticationConfiguration) {
			c.JWT[0].Issuer.DiscoveryURL = "https://d.example/x"
			c.JWT = append(c.JWT, c.JWT[0])
		}, []string{`jwt[1].issuer.url: Duplicate value: "https://issuer.example.com"`, `jwt[1].issuer.discoveryURL: Duplicate value: "https://d.example/x"`}},
		{"empty url", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.URL = "" },
			[]string{"jwt[0].issuer.url: Required value: URL is required"}},
		{"disallowed issuer", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.URL = "https://sa.example" },
			[]string{`jwt[0].issuer.url: Invalid value: "https://sa.example": URL must not overlap with disallowed issuers: [https://sa.example https://sa2.example]`}},
		{"not https", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.URL = "http://issuer.example.com" },
			[]string{`jwt[0].issuer.url: Invalid value: "http://issuer.example.com": URL scheme must be https`}},
		{"userinfo", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.URL = "https://u:p@issuer.example.com" },
			[]string{`jwt[0].issuer.url: Invalid value: "https://u:p@issuer.example.com": URL must not contain a username or password`}},
		{"query and fragment", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.URL = "https://issuer.example.com?a=b#f" },
			[]string{`jwt[0].issuer.url: Invalid value: "https://issuer.example.com?a=b#f": URL must not contain a query`,
				`jwt[0].issuer.url: Invalid value: "https://issuer.example.com?a=b#f": URL must not contain a fragment`}},
		{"unparseable url", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.URL = "https://a b\x7f" },
			[]string{`jwt[0].issuer.url: Invalid value: "https://a b\x7f": parse "https://a b\x7f": net/url: invalid control character in URL`}},
		{"discoveryURL equals url", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.DiscoveryURL = "https://issuer.example.com/" },
			[]string{`jwt[0].issuer.discoveryURL: Invalid value: "https://issuer.example.com/": discoveryURL must be different from URL`}},
		{"discoveryURL not https", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.DiscoveryURL = "http://d.example" },
			[]string{`jwt[0].issuer.discoveryURL: Invalid value: "http://d.example": URL scheme must be https`}},
		{"no audiences", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.Audiences = nil },
			[]string{"jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required"}},
		{"empty and duplicate audience", func(c *AuthenticationConfiguration) {
			c.JWT[0].Issuer.Audiences = []string{"", "a", "a"}
			c.JWT[0].Issuer.AudienceMatchPolicy = AudienceMatchAny
		}, []string{"jwt[0].issuer.audiences[0]: Required value: audience can't be empty", `jwt[0].issuer.audiences[2]: Duplicate value: "a"`}},
		{"multiple audiences need MatchAny", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.Audiences = []string{"a", "b"} },
			[]string{`jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences`}},
		{"single audience bad policy", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.AudienceMatchPolicy = "MatchAll" },
			[]string{`jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchAll": audienceMatchPolicy must be empty or MatchAny for single audience`}},
		{"bad CA", func(c *AuthenticationConfiguration) { c.JWT[0].Issuer.CertificateAuthority = "not a pem" },
			[]string{`jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates`}},
		{"claim rule: both, neither", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimValidationRules = []ClaimValidationRule{{Claim: "a", Expression: "true"}, {}}
		}, []string{`jwt[0].claimValidationRules[0]: Invalid value: "a": claim and expression can't both be set`,
			"jwt[0].claimValidationRules[1]: Required value: claim or expression is required"}},
		{"claim rule: message with claim, duplicate claim", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimValidationRules = []ClaimValidationRule{{Claim: "a", Message: "m"}, {Claim: "a"}}
		}, []string{`jwt[0].claimValidationRules[0].message: Invalid value: "m": message can't be set when claim is set`,
			`jwt[0].claimValidationRules[1].claim: Duplicate value: "a"`}},
		{"claim rule: requiredValue with expression, duplicate expression", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimValidationRules = []ClaimValidationRule{{Expression: "true", RequiredValue: "v"}, {Expression: "true"}}
		}, []string{`jwt[0].claimValidationRules[0].requiredValue: Invalid value: "v": requiredValue can't be set when expression is set`,
			`jwt[0].claimValidationRules[1].expression: Duplicate value: "true"`}},
		{"username: both", func(c *AuthenticationConfiguration) { c.JWT[0].ClaimMappings.Username.Expression = "claims.sub" },
			[]string{`jwt[0].claimMappings.username: Invalid value: "": claim and expression can't both be set`,
				`jwt[0].claimMappings.username.prefix: Invalid value: "": prefix can't be set when expression is set`}},
		{"username: neither", func(c *AuthenticationConfiguration) { c.JWT[0].ClaimMappings.Username = PrefixedClaimOrExpression{} },
			[]string{"jwt[0].claimMappings.username: Required value: claim or expression is required"}},
		{"username: claim without prefix", func(c *AuthenticationConfiguration) { c.JWT[0].ClaimMappings.Username.Prefix = nil },
			[]string{"jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"}},
		{"groups: both, and claim without prefix", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.Groups = PrefixedClaimOrExpression{Claim: "g", Expression: "claims.g"}
		}, []string{`jwt[0].claimMappings.groups: Invalid value: "": claim and expression can't both be set`,
			"jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"}},
		{"groups: expression with prefix", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.Groups = PrefixedClaimOrExpression{Expression: "claims.g", Prefix: ptr("p:")}
		}, []string{`jwt[0].claimMappings.groups.prefix: Invalid value: "p:": prefix can't be set when expression is set`}},
		{"uid: both", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.UID = ClaimOrExpression{Claim: "u", Expression: "claims.u"}
		},
			[]string{`jwt[0].claimMappings.uid: Invalid value: "": claim and expression can't both be set`}},
		{"extra: not domain-prefixed", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.Extra = []ExtraMapping{{Key: "foo", ValueExpression: "claims.x"}}
		}, []string{`jwt[0].claimMappings.extra[0].key: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")`}},
		{"extra: bad host and path", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.Extra = []ExtraMapping{{Key: "-x.org/a b", ValueExpression: "claims.x"}}
		}, []string{`jwt[0].claimMappings.extra[0].key: Invalid value: "-x.org": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`jwt[0].claimMappings.extra[0].key: Invalid value: "a b": Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')`}},
		{"extra: uppercase", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.Extra = []ExtraMapping{{Key: "example.org/Foo", ValueExpression: "claims.x"}}
		}, []string{`jwt[0].claimMappings.extra[0].key: Invalid value: "example.org/Foo": key must be lowercase`}},
		{"extra: reserved domains", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.Extra = []ExtraMapping{
				{Key: b.Domain + "/a", ValueExpression: "claims.x"},
				{Key: "sub." + b.LongDomain + "/a", ValueExpression: "claims.x"},
			}
		}, []string{
			`jwt[0].claimMappings.extra[0].key: Invalid value: "` + b.Domain + `/a": ` + b.Domain + `, ` + b.LongDomain + ` and their subdomains are reserved for Kubernetes use`,
			`jwt[0].claimMappings.extra[1].key: Invalid value: "sub.` + b.LongDomain + `/a": ` + b.Domain + `, ` + b.LongDomain + ` and their subdomains are reserved for Kubernetes use`}},
		{"extra: duplicate key, missing valueExpression", func(c *AuthenticationConfiguration) {
			c.JWT[0].ClaimMappings.Extra = []ExtraMapping{{Key: "example.org/a"}, {Key: "example.org/a", ValueExpression: "claims.x"}}
		}, []string{"jwt[0].claimMappings.extra[0].valueExpression: Required value: valueExpression is required",
			`jwt[0].claimMappings.extra[1].key: Duplicate value: "example.org/a"`}},
		{"user rule: missing and duplicate expression", func(c *AuthenticationConfiguration) {
			c.JWT[0].UserValidationRules = []UserValidationRule{{Message: "m"}, {Expression: "true"}, {Expression: "true"}}
		}, []string{"jwt[0].userValidationRules[0].expression: Required value: expression is required",
			`jwt[0].userValidationRules[2].expression: Duplicate value: "true"`}},
		{"anonymous conditions while disabled", func(c *AuthenticationConfiguration) {
			c.Anonymous = &AnonymousAuthConfig{Conditions: []AnonymousAuthCondition{{Path: "/livez"}}}
		}, []string{`anonymous.conditions: Invalid value: [{/livez}]: enabled should be set to true when conditions are defined`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &AuthenticationConfiguration{JWT: []JWTAuthenticator{validJWT()}}
			tc.mutate(c)
			errs := ValidateAuthenticationConfig(c, []string{"https://sa2.example", "https://sa.example"}, b)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestReservedExtraKeyMessagePlat(t *testing.T) {
	t.Parallel()
	b := Brands["plat"]
	want := b.Domain + " and its subdomains are reserved for Plat use"
	if got := reservedExtraKeyMessage(b); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFieldErrorsAggregate(t *testing.T) {
	t.Parallel()
	one := FieldErrors{required("a", "x")}
	if one.Error() != "a: Required value: x" {
		t.Fatal(one.Error())
	}
	two := append(one, duplicate("b", "v"))
	if two.Error() != `[a: Required value: x, b: Duplicate value: "v"]` {
		t.Fatal(two.Error())
	}
}

func TestDecodeAuthenticationConfig(t *testing.T) {
	t.Parallel()
	b := Brands["plat"]
	av := AuthenticationConfigAPIVersions(b)
	head := "apiVersion: " + av[0] + "\nkind: AuthenticationConfiguration\n"
	cases := []struct {
		name, in, wantErr string
	}{
		{"v1beta1", head + "jwt:\n- issuer:\n    url: https://a\n    audiences: [x]\n  claimMappings:\n    username:\n      claim: sub\n      prefix: \"\"\n", ""},
		{"v1alpha1", "apiVersion: " + av[1] + "\nkind: AuthenticationConfiguration\njwt: []\n", ""},
		{"json", `{"apiVersion":"` + av[0] + `","kind":"AuthenticationConfiguration","jwt":[]}`, ""},
		{"unknown top field", head + "jwts: []\n", `strict decoding error: unknown field "jwts"`},
		{"unknown nested fields", head + "jwt:\n- issuer:\n    url: https://a\n    bogus: 1\n  claimMappings:\n    username:\n      claimz: x\n", `strict decoding error: unknown field "jwt[0].claimMappings.username.claimz", unknown field "jwt[0].issuer.bogus"`},
		{"duplicate key", head + "jwt: []\njwt: []\n", `key "jwt" already set in map`},
		{"yaml syntax names the line", head + "jwt:\n  - issuer: [\n", "line "},
		{"wrong type names the field", head + "jwt:\n- issuer:\n    audiences: 5\n", "jwt[0].issuer.audiences: must be a list, got a number"},
		{"wrong element type names the index", head + "jwt:\n- issuer:\n    audiences: [a, 5]\n  claimMappings: {username: {prefix: [x]}}\n", "jwt[0].issuer.audiences[1]: must be a string, got a number, jwt[0].claimMappings.username.prefix: must be a string, got a list"},
		{"wrong top type", head + "jwt: {}\n", "jwt: must be a list, got an object"},
		{"wrong apiVersion", "apiVersion: v1\nkind: AuthenticationConfiguration\n", `no kind "AuthenticationConfiguration" is registered for version "v1"`},
		{"wrong kind", "apiVersion: " + av[0] + "\nkind: Other\n", `no kind "Other" is registered`},
		{"not an object", "- a\n", "expected an object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeAuthenticationConfig([]byte(tc.in), b)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestOptionsAuthenticationConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "authn.yaml")
	b := Brands["plat"]
	if err := os.WriteFile(path, []byte("apiVersion: "+AuthenticationConfigAPIVersions(b)[0]+"\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: http://a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := func() Options {
		return Options{DataDir: dir, BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, Brand: b, HistoryRetention: time.Minute}
	}
	cases := []struct {
		name   string
		mutate func(o *Options)
		want   []string
	}{
		{"both flags and file", func(o *Options) {
			o.AuthenticationConfigFile = path
			o.OIDC = OIDCFlags{IssuerURL: "https://a", ClientID: "c"}
		}, []string{"authentication-config file and oidc-* flags are mutually exclusive",
			`--authentication-config ` + path + `: invalid authentication config: [jwt[0].issuer.url: Invalid value: "http://a": URL scheme must be https`}},
		{"a non-default username claim counts as an oidc flag", func(o *Options) {
			o.AuthenticationConfigFile = path
			o.OIDC = OIDCFlags{UsernameClaim: "email"}
		}, []string{"authentication-config file and oidc-* flags are mutually exclusive"}},
		{"issuer without client id", func(o *Options) { o.OIDC = OIDCFlags{IssuerURL: "https://a"} },
			[]string{"oidc-issuer-url and oidc-client-id must be specified together"}},
		{"unsupported alg", func(o *Options) {
			o.OIDC = OIDCFlags{IssuerURL: "https://a", ClientID: "c", SigningAlgs: []string{"HS256"}}
		},
			[]string{`oidc: unsupported signing alg: "HS256"`}},
		{"missing file", func(o *Options) { o.AuthenticationConfigFile = filepath.Join(dir, "nope") },
			[]string{"--authentication-config: invalid authentication configuration: open " + filepath.Join(dir, "nope")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			tc.mutate(&o)
			err := o.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestOIDCFlagsConversion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		flags      OIDCFlags
		wantPrefix string
	}{
		{"default prefix is the issuer", OIDCFlags{IssuerURL: "https://a", ClientID: "c", UsernameClaim: "sub"}, "https://a#"},
		{"email claim has no prefix", OIDCFlags{IssuerURL: "https://a", ClientID: "c", UsernameClaim: "email"}, ""},
		{"dash disables the prefix", OIDCFlags{IssuerURL: "https://a", ClientID: "c", UsernamePrefix: "-"}, ""},
		{"explicit prefix", OIDCFlags{IssuerURL: "https://a", ClientID: "c", UsernamePrefix: "oidc:"}, "oidc:"},
	}
	for _, tc := range cases {
		a, err := tc.flags.JWTAuthenticator()
		if err != nil {
			t.Fatal(err)
		}
		if got := *a.ClaimMappings.Username.Prefix; got != tc.wantPrefix {
			t.Errorf("%s: prefix %q, want %q", tc.name, got, tc.wantPrefix)
		}
		if len(a.Issuer.Audiences) != 1 || a.Issuer.Audiences[0] != "c" {
			t.Errorf("%s: audiences %v", tc.name, a.Issuer.Audiences)
		}
	}
	f := OIDCFlags{IssuerURL: "https://a", ClientID: "c", GroupsClaim: "g", GroupsPrefix: "p:", RequiredClaims: []string{"b=2", "a=1"}}
	a, _ := f.JWTAuthenticator()
	if a.ClaimMappings.Username.Claim != DefaultOIDCUsernameClaim || a.ClaimMappings.Groups.Claim != "g" || *a.ClaimMappings.Groups.Prefix != "p:" {
		t.Errorf("mappings %+v", a.ClaimMappings)
	}
	if len(a.ClaimValidationRules) != 2 || a.ClaimValidationRules[0] != (ClaimValidationRule{Claim: "a", RequiredValue: "1"}) {
		t.Errorf("rules %+v", a.ClaimValidationRules)
	}
	if errs := ValidateAuthenticationConfig(&AuthenticationConfiguration{JWT: []JWTAuthenticator{a}}, nil, Brands["plat"]); len(errs) > 0 {
		t.Errorf("converted flags invalid: %v", errs)
	}
}

func FuzzDecodeAuthenticationConfig(f *testing.F) {
	b := Brands["plat"]
	head := "apiVersion: " + AuthenticationConfigAPIVersions(b)[0] + "\nkind: AuthenticationConfiguration\n"
	f.Add(head + "jwt:\n- issuer:\n    url: https://a\n    audiences: [x]\n  claimMappings:\n    username:\n      claim: sub\n      prefix: \"\"\n")
	f.Add(head + "jwt:\n- issuer: {url: 'https://a?x#y', audiences: ['', a, a], certificateAuthority: x}\n  claimMappings: {extra: [{key: A/b}]}\n")
	f.Add(head + "anonymous: {enabled: false, conditions: [{path: /x}]}\n")
	f.Add("{}")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := DecodeAuthenticationConfig([]byte(in), b)
		if err != nil {
			return
		}
		for _, e := range ValidateAuthenticationConfig(c, []string{"https://sa"}, b) {
			if e.Field == "" || e.Error() == "" {
				t.Fatalf("error without field: %+v", e)
			}
		}
	})
}

func TestOptionsAnonymousFromFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "authn.yaml")
	b := Brands["plat"]
	body := "apiVersion: " + AuthenticationConfigAPIVersions(b)[0] + "\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n  - path: /readyz\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{DataDir: dir, BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysDeny}, Brand: b, HistoryRetention: time.Minute, AuthenticationConfigFile: path}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !o.AnonymousAuth || strings.Join(o.AnonymousPaths, ",") != "/livez,/readyz" {
		t.Fatalf("anonymous %v paths %v", o.AnonymousAuth, o.AnonymousPaths)
	}
	o.AnonymousAuthSet = true
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file") {
		t.Fatalf("flag and file: %v", err)
	}
	o.AnonymousAuthSet = false
	o.AuthorizationModes = []string{ModeAlwaysAllow}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "anonymous.enabled=true in --authentication-config is not allowed with the AlwaysAllow authorizer") {
		t.Fatalf("anonymous with AlwaysAllow: %v", err)
	}
}

func TestOIDCIssuerMustNotBeServiceAccountIssuer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := Brands["plat"]
	o := Options{DataDir: dir, BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, Brand: b, HistoryRetention: time.Minute,
		OIDC:            OIDCFlags{IssuerURL: "https://sa.example", ClientID: "c"},
		ServiceAccounts: ServiceAccountOptions{Issuers: []string{"https://sa.example"}}}
	err := o.Validate()
	if want := `--oidc-*: jwt[0].issuer.url: Invalid value: "https://sa.example": URL must not overlap with disallowed issuers: [https://sa.example]`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestAuthenticationConfigAPIVersionFollowsBrand(t *testing.T) {
	t.Parallel()
	k, p := Brands["kubernetes"], Brands["plat"]
	for _, v := range AuthenticationConfigAPIVersions(k) {
		in := []byte("apiVersion: " + v + "\nkind: AuthenticationConfiguration\n")
		if _, err := DecodeAuthenticationConfig(in, k); err != nil {
			t.Errorf("%s in its brand: %v", v, err)
		}
		if _, err := DecodeAuthenticationConfig(in, p); err == nil || !strings.Contains(err.Error(), "no kind") {
			t.Errorf("%s in the other brand: %v", v, err)
		}
	}
	if got := AuthenticationConfigAPIVersions(k); got[0] != "apiserver.config."+k.Domain+"/v1beta1" || got[1] != "apiserver.config."+k.Domain+"/v1alpha1" {
		t.Errorf("versions %v", got)
	}
}

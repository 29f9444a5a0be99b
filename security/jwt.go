package security

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"platd/config"
)

// jwtNotBeforeLeeway is the clock skew allowed on nbf, as upstream's.
const jwtNotBeforeLeeway = 5 * time.Minute

// jwtAllAlgs is every algorithm a JWT authenticator can be configured
// with; the parser accepts them all so an unconfigured one gets
// upstream's message rather than the library's.
var jwtAllAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512,
}

// JWTAuthenticator authenticates bearer JWTs of one issuer per one entry of
// the authentication configuration. Safe for concurrent use.
type JWTAuthenticator struct {
	cfg      config.JWTAuthenticator
	algs     []string
	brand    config.Brand
	provider *jwtProvider
	now      func() time.Time

	username, groups, uid *compiledExpr
	extra                 []extraExpr
	claimRules            []ruleExpr
	userRules             []ruleExpr
	needClaims            bool
	counters              jwtCounters
}

type extraExpr struct {
	key string
	*compiledExpr
}

type ruleExpr struct {
	message string
	*compiledExpr
}

// JWTOptions are what a JWT authenticator needs besides its entry.
type JWTOptions struct {
	Brand config.Brand
	// SigningAlgs are the accepted JWS algorithms (--oidc-signing-algs).
	SigningAlgs []string
	// DisallowedIssuers are the service-account issuers.
	DisallowedIssuers []string
	// CELLibraries are function libraries added to the expression
	// environments (the server passes the platform's URL, regex, lists,
	// quantity, IP/CIDR and format libraries).
	CELLibraries []cel.EnvOption
}

// BuildJWTAuthenticators validates the whole configuration, compiles its
// expressions and returns one authenticator per jwt entry. Nothing runs
// until Start. The error is config.FieldErrors when the content is
// invalid.
func BuildJWTAuthenticators(c *config.AuthenticationConfiguration, o JWTOptions) ([]*JWTAuthenticator, error) {
	errs := config.ValidateAuthenticationConfig(c, o.DisallowedIssuers, o.Brand)
	envs, err := newJWTCELEnvs(o.CELLibraries)
	if err != nil {
		return nil, err
	}
	var out []*JWTAuthenticator
	for i := range c.JWT {
		a, ferrs := newJWTAuthenticator(envs, c.JWT[i], fmt.Sprintf("jwt[%d]", i), o)
		errs = append(errs, ferrs...)
		out = append(out, a)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, a := range out {
		p, err := newJWTProvider(a.cfg.Issuer.URL, a.cfg.Issuer.DiscoveryURL, []byte(a.cfg.Issuer.CertificateAuthority))
		if err != nil {
			return nil, err
		}
		a.provider = p
	}
	return out, nil
}

func newJWTAuthenticator(envs *jwtCELEnvs, e config.JWTAuthenticator, path string, o JWTOptions) (*JWTAuthenticator, config.FieldErrors) {
	algs := o.SigningAlgs
	if len(algs) == 0 {
		algs = config.DefaultOIDCSigningAlgs
	}
	a := &JWTAuthenticator{cfg: e, algs: slices.Clone(algs), brand: o.Brand, now: time.Now}
	var errs config.FieldErrors
	compile := func(expr, field string, user bool, want *cel.Type) *compiledExpr {
		c, err := envs.compile(expr, user, want)
		if err != nil {
			errs = append(errs, &config.FieldError{Type: config.FieldInvalid, Field: field, Value: expr, Detail: err.Error()})
			return nil
		}
		return c
	}
	seen := map[string]bool{}
	for i, r := range e.ClaimValidationRules {
		if r.Expression == "" || r.Claim != "" || seen[r.Expression] {
			continue
		}
		seen[r.Expression] = true
		if c := compile(r.Expression, fmt.Sprintf("%s.claimValidationRules[%d].expression", path, i), false, cel.BoolType); c != nil {
			a.claimRules = append(a.claimRules, ruleExpr{r.Message, c})
		}
	}
	m := e.ClaimMappings
	mp := path + ".claimMappings"
	if m.Username.Expression != "" && m.Username.Claim == "" {
		a.username = compile(m.Username.Expression, mp+".username.expression", false, nil)
	}
	if m.Groups.Expression != "" && m.Groups.Claim == "" {
		a.groups = compile(m.Groups.Expression, mp+".groups.expression", false, nil)
	}
	if m.UID.Expression != "" && m.UID.Claim == "" {
		a.uid = compile(m.UID.Expression, mp+".uid.expression", false, nil)
	}
	seenKeys := map[string]bool{}
	for i, x := range m.Extra {
		if x.ValueExpression == "" || seenKeys[x.Key] {
			continue
		}
		seenKeys[x.Key] = true
		if c := compile(x.ValueExpression, fmt.Sprintf("%s.extra[%d].valueExpression", mp, i), false, nil); c != nil {
			a.extra = append(a.extra, extraExpr{x.Key, c})
		}
	}
	if selectsClaim(a.username, "email") {
		verified := selectsClaim(a.username, "email_verified")
		for _, x := range a.extra {
			verified = verified || selectsClaim(x.compiledExpr, "email_verified")
		}
		for _, r := range a.claimRules {
			verified = verified || selectsClaim(r.compiledExpr, "email_verified")
		}
		if !verified {
			errs = append(errs, &config.FieldError{Type: config.FieldInvalid, Field: mp + ".username.expression", Value: m.Username.Expression,
				Detail: "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression"})
		}
	}
	seen = map[string]bool{}
	for i, r := range e.UserValidationRules {
		if r.Expression == "" || seen[r.Expression] {
			continue
		}
		seen[r.Expression] = true
		if c := compile(r.Expression, fmt.Sprintf("%s.userValidationRules[%d].expression", path, i), true, cel.BoolType); c != nil {
			a.userRules = append(a.userRules, ruleExpr{r.Message, c})
		}
	}
	a.needClaims = a.username != nil || a.groups != nil || a.uid != nil || len(a.extra) > 0 || len(a.claimRules) > 0
	return a, errs
}

// Start runs discovery in the background until it succeeds or ctx ends.
func (a *JWTAuthenticator) Start(ctx context.Context) { go a.provider.run(ctx) }

// Issuer is the configured issuer URL.
func (a *JWTAuthenticator) Issuer() string { return a.cfg.Issuer.URL }

// Healthy returns nil once discovery succeeded, else why not.
func (a *JWTAuthenticator) Healthy() error { return a.provider.healthy() }

// untrustedIssuer reads iss from a token's payload without verifying it.
func untrustedIssuer(token string) (string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", false
	}
	// Google's tokens name the issuer without a scheme.
	if c.Issuer == "accounts.google.com" {
		return "https://accounts.google.com", true
	}
	return c.Issuer, true
}

// AuthenticateToken implements TokenAuthenticator: tokens of other issuers
// and tokens that are not JWTs are not this authenticator's (ok=false, no
// error).
func (a *JWTAuthenticator) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	if iss, ok := untrustedIssuer(token); !ok || iss != a.cfg.Issuer.URL {
		return nil, false, nil
	}
	start := time.Now()
	u, err := a.authenticate(ctx, token)
	a.counters.record(err == nil, time.Since(start))
	if err != nil {
		return nil, false, err
	}
	return u, true, nil
}

func (a *JWTAuthenticator) authenticate(ctx context.Context, token string) (*User, error) {
	if !a.provider.initialized() {
		return nil, ErrJWTNotInitialized
	}
	claims, err := a.verify(ctx, token)
	if err != nil {
		return nil, fmt.Errorf("oidc: verify token: %w", err)
	}
	if err := a.expandGroups(ctx, claims); err != nil {
		return nil, fmt.Errorf("oidc: could not expand distributed claims: %w", err)
	}
	return a.mapUser(claims)
}

// idClaims are the registered claims the verifier checks.
type idClaims struct {
	Issuer    string       `json:"iss"`
	Audience  audienceList `json:"aud"`
	Expiry    numericDate  `json:"exp"`
	NotBefore *numericDate `json:"nbf"`
}

type audienceList []string

func (l *audienceList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = audienceList{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*l = list
	return nil
}

type numericDate time.Time

func (d *numericDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	f, err := n.Float64()
	if err != nil {
		return err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
		return fmt.Errorf("numeric date out of range: %s", n)
	}
	sec, frac := math.Modf(f)
	*d = numericDate(time.Unix(int64(sec), int64(frac*1e9)))
	return nil
}

// verify checks, in upstream's order, shape, issuer, audience, expiry,
// algorithm and signature, and returns the payload's claims.
func (a *JWTAuthenticator) verify(ctx context.Context, token string) (map[string]json.RawMessage, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("oidc: malformed jwt, expected 3 parts got %d", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("oidc: malformed jwt payload: %w", err)
	}
	var std idClaims
	if err := json.Unmarshal(payload, &std); err != nil {
		return nil, fmt.Errorf("oidc: failed to unmarshal claims: %w", err)
	}
	if std.Issuer != a.cfg.Issuer.URL {
		return nil, fmt.Errorf("oidc: id token issued by a different provider, expected %q got %q", a.cfg.Issuer.URL, std.Issuer)
	}
	if auds := a.cfg.Issuer.Audiences; len(auds) == 1 && !slices.Contains(std.Audience, auds[0]) {
		return nil, fmt.Errorf("oidc: expected audience %q got %q", auds[0], []string(std.Audience))
	}
	now := a.now()
	if exp := time.Time(std.Expiry); exp.Before(now) {
		return nil, expiredError{fmt.Sprintf("oidc: token is expired (Token Expiry: %v)", exp)}
	}
	if std.NotBefore != nil {
		if nbf := time.Time(*std.NotBefore); now.Add(jwtNotBeforeLeeway).Before(nbf) {
			return nil, fmt.Errorf("oidc: current time %v before the nbf (not before) time: %v", now, nbf)
		}
	}
	jws, err := jose.ParseSigned(token, jwtAllAlgs)
	if err != nil {
		return nil, fmt.Errorf("oidc: malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("oidc: multiple signatures on id token not supported")
	}
	if alg := jws.Signatures[0].Header.Algorithm; !slices.Contains(a.algs, alg) {
		return nil, fmt.Errorf("oidc: id token signed with unsupported algorithm, expected %q got %q", a.algs, alg)
	}
	verified, err := a.provider.verify(ctx, jws)
	if err != nil {
		return nil, err
	}
	// The signature covers the payload that was checked above; a
	// mismatch would mean the parser and the verifier disagree.
	if !bytes.Equal(verified, payload) {
		return nil, errors.New("oidc: internal error, payload parsed did not match previous payload")
	}
	if auds := a.cfg.Issuer.Audiences; len(auds) > 1 && !slices.ContainsFunc(auds, func(s string) bool { return slices.Contains(std.Audience, s) }) {
		sorted := slices.Sorted(slices.Values(auds))
		return nil, fmt.Errorf("oidc: expected audience in %q got %q", sorted, []string(std.Audience))
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, fmt.Errorf("oidc: failed to unmarshal claims: %w", err)
	}
	return claims, nil
}

// claimString decodes a claim that must be a string.
func claimString(claims map[string]json.RawMessage, name string) (string, error) {
	raw, ok := claims[name]
	if !ok {
		return "", errors.New("claim not present")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// celClaims is the claims map as CEL sees it: integers stay integers.
func celClaims(claims map[string]json.RawMessage) (map[string]any, error) {
	out := make(map[string]any, len(claims))
	for k, raw := range claims {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out[k] = celJSON(v)
	}
	return out, nil
}

func celJSON(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case []any:
		for i := range t {
			t[i] = celJSON(t[i])
		}
	case map[string]any:
		for k := range t {
			t[k] = celJSON(t[k])
		}
	}
	return v
}

func (a *JWTAuthenticator) mapUser(claims map[string]json.RawMessage) (*User, error) {
	var vars map[string]any
	if a.needClaims {
		cc, err := celClaims(claims)
		if err != nil {
			return nil, fmt.Errorf("oidc: could not convert claims to structured value: %w", err)
		}
		vars = map[string]any{"claims": cc}
	}
	u := &User{}
	var err error
	if u.Name, err = a.mapUsername(claims, vars); err != nil {
		return nil, err
	}
	if u.Groups, err = a.mapGroups(claims, vars); err != nil {
		return nil, err
	}
	if u.UID, err = a.mapUID(claims, vars); err != nil {
		return nil, err
	}
	if jti, err := claimString(claims, "jti"); err == nil && jti != "" {
		u.Extra = map[string][]string{CredentialIDKey(a.brand): {"JTI=" + jti}}
	}
	for _, x := range a.extra {
		v, err := x.eval(vars)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating extra claim expression: %s: %w", x.expr, err)
		}
		vals, err := stringList(v)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating extra claim expression: %s: %w", x.expr, err)
		}
		if len(vals) == 0 {
			continue
		}
		if u.Extra == nil {
			u.Extra = map[string][]string{}
		}
		u.Extra[x.key] = vals
	}
	for _, r := range a.cfg.ClaimValidationRules {
		if r.Claim == "" {
			continue
		}
		if _, ok := claims[r.Claim]; !ok {
			return nil, fmt.Errorf("oidc: required claim %s not present in ID token", r.Claim)
		}
		got, err := claimString(claims, r.Claim)
		if err != nil {
			return nil, fmt.Errorf("oidc: parse claim %s: %w", r.Claim, err)
		}
		if got != r.RequiredValue {
			return nil, fmt.Errorf("oidc: required claim %s value does not match. Got = %s, want = %s", r.Claim, got, r.RequiredValue)
		}
	}
	if err := checkRules(a.claimRules, vars); err != nil {
		return nil, fmt.Errorf("oidc: error evaluating claim validation expression: %w", err)
	}
	if len(a.userRules) > 0 {
		cu := celUserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
		if cu.Groups == nil {
			cu.Groups = []string{}
		}
		if cu.Extra == nil {
			cu.Extra = map[string][]string{}
		}
		if err := checkRules(a.userRules, map[string]any{"user": cu}); err != nil {
			return nil, fmt.Errorf("oidc: error evaluating user info validation rule: %w", err)
		}
	}
	return u, nil
}

func checkRules(rules []ruleExpr, vars map[string]any) error {
	for _, r := range rules {
		v, err := r.eval(vars)
		if err != nil {
			return err
		}
		b, ok := v.(types.Bool)
		if !ok {
			return errors.New("validation expression must return a boolean")
		}
		if !b {
			return fmt.Errorf("validation expression '%s' failed: %s", r.expr, r.message)
		}
	}
	return nil
}

func (a *JWTAuthenticator) mapUsername(claims map[string]json.RawMessage, vars map[string]any) (string, error) {
	if a.username != nil {
		v, err := a.username.eval(vars)
		if err != nil {
			return "", fmt.Errorf("oidc: error evaluating username claim expression: %w", err)
		}
		s, ok := v.(types.String)
		if !ok {
			return "", errors.New("oidc: error evaluating username claim expression: username claim expression must return a string")
		}
		if s == "" {
			return "", errors.New("oidc: empty username via CEL expression is not allowed")
		}
		return string(s), nil
	}
	claim := a.cfg.ClaimMappings.Username.Claim
	name, err := claimString(claims, claim)
	if err != nil {
		return "", fmt.Errorf("oidc: parse username claims %q: %w", claim, err)
	}
	if claim == "email" {
		if raw, ok := claims["email_verified"]; ok {
			var verified bool
			if err := json.Unmarshal(raw, &verified); err != nil {
				return "", fmt.Errorf("oidc: parse 'email_verified' claim: %w", err)
			}
			if !verified {
				return "", errors.New("oidc: email not verified")
			}
		}
	}
	if p := a.cfg.ClaimMappings.Username.Prefix; p != nil {
		name = *p + name
	}
	return name, nil
}

func (a *JWTAuthenticator) mapGroups(claims map[string]json.RawMessage, vars map[string]any) ([]string, error) {
	if claim := a.cfg.ClaimMappings.Groups.Claim; claim != "" {
		if raw, ok := claims[claim]; ok {
			// A single string is accepted as one group.
			var groups audienceList
			if err := groups.UnmarshalJSON(raw); err != nil {
				return nil, fmt.Errorf("oidc: parse groups claim %q: %w", claim, err)
			}
			if p := a.cfg.ClaimMappings.Groups.Prefix; p != nil && *p != "" {
				for i := range groups {
					groups[i] = *p + groups[i]
				}
			}
			return groups, nil
		}
	}
	if a.groups == nil {
		return nil, nil
	}
	v, err := a.groups.eval(vars)
	if err != nil {
		return nil, fmt.Errorf("oidc: error evaluating group claim expression: %w", err)
	}
	groups, err := stringList(v)
	if err != nil {
		return nil, fmt.Errorf("oidc: error evaluating group claim expression: %w", err)
	}
	return groups, nil
}

func (a *JWTAuthenticator) mapUID(claims map[string]json.RawMessage, vars map[string]any) (string, error) {
	if claim := a.cfg.ClaimMappings.UID.Claim; claim != "" {
		uid, err := claimString(claims, claim)
		if err != nil {
			return "", fmt.Errorf("oidc: parse uid claim %q: %w", claim, err)
		}
		return uid, nil
	}
	if a.uid == nil {
		return "", nil
	}
	v, err := a.uid.eval(vars)
	if err != nil {
		return "", fmt.Errorf("oidc: error evaluating uid claim expression: %w", err)
	}
	s, ok := v.(types.String)
	if !ok {
		return "", errors.New("oidc: error evaluating uid claim expression: uid claim expression must return a string")
	}
	return string(s), nil
}

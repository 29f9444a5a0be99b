package config

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// OIDCFlags are the legacy --oidc-* flags; they describe one JWT
// authenticator.
type OIDCFlags struct {
	IssuerURL      string
	ClientID       string
	CAFile         string
	UsernameClaim  string
	UsernamePrefix string
	GroupsClaim    string
	GroupsPrefix   string
	SigningAlgs    []string
	// RequiredClaims are key=value pairs.
	RequiredClaims []string
}

// DefaultOIDCUsernameClaim is --oidc-username-claim's default.
const DefaultOIDCUsernameClaim = "sub"

// SupportedSigningAlgs are the JWS algorithms --oidc-signing-algs accepts.
var SupportedSigningAlgs = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"}

// DefaultOIDCSigningAlgs is --oidc-signing-algs' default; it also applies
// to the authenticators of --authentication-config.
var DefaultOIDCSigningAlgs = []string{"RS256"}

// Configured reports whether any --oidc-* flag differs from its default;
// such flags cannot be combined with --authentication-config.
func (f *OIDCFlags) Configured() bool {
	algs := f.SigningAlgs
	return f.IssuerURL != "" || f.ClientID != "" || f.CAFile != "" ||
		(f.UsernameClaim != "" && f.UsernameClaim != DefaultOIDCUsernameClaim) ||
		f.UsernamePrefix != "" || f.GroupsClaim != "" || f.GroupsPrefix != "" ||
		len(f.RequiredClaims) > 0 || (len(algs) > 0 && !slices.Equal(algs, DefaultOIDCSigningAlgs))
}

// Algorithms returns the signing algorithms accepted, the default if none
// was given.
func (f *OIDCFlags) Algorithms() []string {
	if len(f.SigningAlgs) == 0 {
		return slices.Clone(DefaultOIDCSigningAlgs)
	}
	return slices.Clone(f.SigningAlgs)
}

// Validate checks the flags alone, with upstream's texts.
func (f *OIDCFlags) Validate() []string {
	var errs []string
	if (f.IssuerURL != "") != (f.ClientID != "") {
		errs = append(errs, "oidc-issuer-url and oidc-client-id must be specified together")
	}
	for _, alg := range f.SigningAlgs {
		if !slices.Contains(SupportedSigningAlgs, alg) {
			errs = append(errs, fmt.Sprintf("oidc: unsupported signing alg: %q", alg))
		}
	}
	for _, kv := range f.RequiredClaims {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			errs = append(errs, fmt.Sprintf("--oidc-required-claim %q: must be key=value", kv))
		}
	}
	return errs
}

// JWTAuthenticator converts the flags into the one file entry they stand
// for. The CA file is read here.
func (f *OIDCFlags) JWTAuthenticator() (JWTAuthenticator, error) {
	a := JWTAuthenticator{Issuer: Issuer{URL: f.IssuerURL, Audiences: []string{f.ClientID}}}
	if f.CAFile != "" {
		ca, err := os.ReadFile(f.CAFile)
		if err != nil {
			return a, fmt.Errorf("--oidc-ca-file: %w", err)
		}
		a.Issuer.CertificateAuthority = string(ca)
	}
	claim := f.UsernameClaim
	if claim == "" {
		claim = DefaultOIDCUsernameClaim
	}
	// The flags default the prefix to "<issuer>#" unless the claim is
	// email; "-" turns prefixing off.
	prefix := f.UsernamePrefix
	switch {
	case prefix == "-":
		prefix = ""
	case prefix == "" && claim != "email":
		prefix = f.IssuerURL + "#"
	}
	a.ClaimMappings.Username = PrefixedClaimOrExpression{Claim: claim, Prefix: &prefix}
	if f.GroupsClaim != "" {
		gp := f.GroupsPrefix
		a.ClaimMappings.Groups = PrefixedClaimOrExpression{Claim: f.GroupsClaim, Prefix: &gp}
	}
	req := map[string]string{}
	for _, kv := range f.RequiredClaims {
		k, v, _ := strings.Cut(kv, "=")
		req[k] = v
	}
	keys := make([]string, 0, len(req))
	for k := range req {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.ClaimValidationRules = append(a.ClaimValidationRules, ClaimValidationRule{Claim: k, RequiredValue: req[k]})
	}
	return a, nil
}

// validateJWTAuthn checks the OIDC flags and the authentication
// configuration file as far as that is possible without compiling its
// expressions (the server does that at start).
func (o *Options) validateJWTAuthn() []string {
	errs := o.OIDC.Validate()
	if o.AuthenticationConfigFile != "" && o.OIDC.Configured() {
		errs = append(errs, "authentication-config file and oidc-* flags are mutually exclusive")
	}
	if len(errs) == 0 && o.OIDC.Configured() {
		a, err := o.OIDC.JWTAuthenticator()
		if err != nil {
			return append(errs, err.Error())
		}
		if ferrs := ValidateAuthenticationConfig(&AuthenticationConfiguration{JWT: []JWTAuthenticator{a}}, o.ServiceAccounts.Issuers, o.Brand); len(ferrs) > 0 {
			errs = append(errs, fmt.Sprintf("--oidc-*: %v", ferrs))
		}
	}
	if o.AuthenticationConfigFile != "" && !o.FeatureGates.Enabled(StructuredAuthenticationConfiguration) {
		return append(errs, "set --feature-gates="+StructuredAuthenticationConfiguration+"=true to use authentication-config file")
	}
	if o.AuthenticationConfigFile != "" {
		c, _, err := LoadAuthenticationConfig(o.AuthenticationConfigFile, o.Brand)
		if err != nil {
			return append(errs, "--authentication-config: "+err.Error())
		}
		ferrs := ValidateAuthenticationConfig(c, o.ServiceAccounts.Issuers, o.Brand)
		if c.Anonymous != nil && !o.FeatureGates.Enabled(AnonymousAuthConfigurableEndpoints) {
			ferrs = append(ferrs, &FieldError{Type: FieldForbidden, Field: "anonymous",
				Detail: "anonymous is not supported when " + AnonymousAuthConfigurableEndpoints + " feature gate is disabled"})
		}
		if len(ferrs) > 0 {
			errs = append(errs, fmt.Sprintf("--authentication-config %s: invalid authentication config: %v", o.AuthenticationConfigFile, ferrs))
		}
		errs = append(errs, o.applyAnonymous(c.Anonymous)...)
	}
	return errs
}

// applyAnonymous takes the file's anonymous section in place of
// --anonymous-auth. It is read at start only.
func (o *Options) applyAnonymous(a *AnonymousAuthConfig) []string {
	if a == nil {
		return nil
	}
	if o.AnonymousAuthSet {
		return []string{"anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file"}
	}
	o.AnonymousAuth = a.Enabled
	o.AnonymousPaths = nil
	for _, c := range a.Conditions {
		o.AnonymousPaths = append(o.AnonymousPaths, c.Path)
	}
	if o.AnonymousAuth && slices.Contains(o.AuthorizationModes, ModeAlwaysAllow) {
		return []string{"anonymous.enabled=true in --authentication-config is not allowed with the AlwaysAllow authorizer: every request without credentials would be allowed; choose another --authorization-mode, or set anonymous.enabled to false"}
	}
	return nil
}

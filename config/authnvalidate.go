package config

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"platd/server/validation"
)

// ValidateAuthenticationConfig checks every rule of the file that needs
// no expression compiler; the security package adds the CEL checks when
// it builds the authenticators. disallowedIssuers are the service-account
// issuers, which no JWT authenticator may claim.
func ValidateAuthenticationConfig(c *AuthenticationConfiguration, disallowedIssuers []string, b Brand) FieldErrors {
	var errs FieldErrors
	if len(c.JWT) > MaxJWTAuthenticators {
		errs = append(errs, &FieldError{Type: FieldTooMany, Field: "jwt", Value: len(c.JWT),
			Detail: fmt.Sprintf("must have at most %d items", MaxJWTAuthenticators)})
	}
	disallowed := map[string]bool{}
	for _, d := range disallowedIssuers {
		disallowed[d] = true
	}
	issuers, discovery := map[string]bool{}, map[string]bool{}
	for i := range c.JWT {
		a := &c.JWT[i]
		p := fmt.Sprintf("jwt[%d]", i)
		errs = append(errs, validateJWT(a, p, disallowed, b)...)
		if issuers[a.Issuer.URL] {
			errs = append(errs, duplicate(p+".issuer.url", a.Issuer.URL))
		}
		issuers[a.Issuer.URL] = true
		if a.Issuer.DiscoveryURL != "" {
			if discovery[a.Issuer.DiscoveryURL] {
				errs = append(errs, duplicate(p+".issuer.discoveryURL", a.Issuer.DiscoveryURL))
			}
			discovery[a.Issuer.DiscoveryURL] = true
		}
	}
	if c.Anonymous != nil {
		if !c.Anonymous.Enabled && len(c.Anonymous.Conditions) > 0 {
			errs = append(errs, invalid("anonymous.conditions", c.Anonymous.Conditions, "enabled should be set to true when conditions are defined"))
		}
	}
	return errs
}

func validateJWT(a *JWTAuthenticator, p string, disallowed map[string]bool, b Brand) FieldErrors {
	var errs FieldErrors
	is := p + ".issuer"
	if a.Issuer.URL == "" {
		errs = append(errs, required(is+".url", "URL is required"))
	} else {
		errs = append(errs, validateIssuerURL(a.Issuer.URL, disallowed, is+".url")...)
	}
	if d := a.Issuer.DiscoveryURL; d != "" {
		if a.Issuer.URL != "" && strings.TrimRight(a.Issuer.URL, "/") == strings.TrimRight(d, "/") {
			errs = append(errs, invalid(is+".discoveryURL", d, "discoveryURL must be different from URL"))
		}
		errs = append(errs, validateIssuerURL(d, nil, is+".discoveryURL")...)
	}
	errs = append(errs, validateAudiences(a.Issuer.Audiences, a.Issuer.AudienceMatchPolicy, is)...)
	if ca := a.Issuer.CertificateAuthority; ca != "" {
		if err := checkCABundle([]byte(ca)); err != nil {
			errs = append(errs, invalid(is+".certificateAuthority", "<omitted>", err.Error()))
		}
	}
	errs = append(errs, validateClaimRules(a.ClaimValidationRules, p+".claimValidationRules")...)
	errs = append(errs, validateMappings(&a.ClaimMappings, p+".claimMappings", b)...)
	seen := map[string]bool{}
	for i, r := range a.UserValidationRules {
		fp := fmt.Sprintf("%s.userValidationRules[%d].expression", p, i)
		if r.Expression == "" {
			errs = append(errs, required(fp, "expression is required"))
			continue
		}
		if seen[r.Expression] {
			errs = append(errs, duplicate(fp, r.Expression))
		}
		seen[r.Expression] = true
	}
	return errs
}

func validateIssuerURL(s string, disallowed map[string]bool, field string) FieldErrors {
	var errs FieldErrors
	if disallowed[s] {
		list := make([]string, 0, len(disallowed))
		for d := range disallowed {
			list = append(list, d)
		}
		sort.Strings(list)
		errs = append(errs, invalid(field, s, fmt.Sprintf("URL must not overlap with disallowed issuers: %s", list)))
	}
	u, err := url.Parse(s)
	if err != nil {
		return append(errs, invalid(field, s, err.Error()))
	}
	if u.Scheme != "https" {
		errs = append(errs, invalid(field, s, "URL scheme must be https"))
	}
	if u.User != nil {
		errs = append(errs, invalid(field, s, "URL must not contain a username or password"))
	}
	if u.RawQuery != "" {
		errs = append(errs, invalid(field, s, "URL must not contain a query"))
	}
	if u.Fragment != "" {
		errs = append(errs, invalid(field, s, "URL must not contain a fragment"))
	}
	return errs
}

func validateAudiences(auds []string, policy, is string) FieldErrors {
	field := is + ".audiences"
	if len(auds) == 0 {
		return FieldErrors{required(field, "at least one "+field+" is required")}
	}
	var errs FieldErrors
	seen := map[string]bool{}
	for i, a := range auds {
		fp := fmt.Sprintf("%s[%d]", field, i)
		if a == "" {
			errs = append(errs, required(fp, "audience can't be empty"))
		}
		if seen[a] {
			errs = append(errs, duplicate(fp, a))
		}
		seen[a] = true
	}
	if len(auds) > 1 && policy != AudienceMatchAny {
		errs = append(errs, invalid(is+".audienceMatchPolicy", policy, "audienceMatchPolicy must be MatchAny for multiple audiences"))
	}
	if len(auds) == 1 && policy != "" && policy != AudienceMatchAny {
		errs = append(errs, invalid(is+".audienceMatchPolicy", policy, "audienceMatchPolicy must be empty or MatchAny for single audience"))
	}
	return errs
}

// checkCABundle requires at least one parseable certificate, with
// upstream's error texts.
func checkCABundle(data []byte) error {
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("data does not contain any valid RSA or ECDSA certificates")
	}
	return nil
}

func validateClaimRules(rules []ClaimValidationRule, field string) FieldErrors {
	var errs FieldErrors
	claims, exprs := map[string]bool{}, map[string]bool{}
	for i, r := range rules {
		fp := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case r.Claim != "" && r.Expression != "":
			errs = append(errs, invalid(fp, r.Claim, "claim and expression can't both be set"))
		case r.Claim == "" && r.Expression == "":
			errs = append(errs, required(fp, "claim or expression is required"))
		case r.Claim != "":
			if r.Message != "" {
				errs = append(errs, invalid(fp+".message", r.Message, "message can't be set when claim is set"))
			}
			if claims[r.Claim] {
				errs = append(errs, duplicate(fp+".claim", r.Claim))
			}
			claims[r.Claim] = true
		default:
			if r.RequiredValue != "" {
				errs = append(errs, invalid(fp+".requiredValue", r.RequiredValue, "requiredValue can't be set when expression is set"))
			}
			if exprs[r.Expression] {
				errs = append(errs, duplicate(fp+".expression", r.Expression))
			}
			exprs[r.Expression] = true
		}
	}
	return errs
}

func validatePrefixed(m PrefixedClaimOrExpression, field string, needed bool) FieldErrors {
	var errs FieldErrors
	switch {
	case m.Claim != "" && m.Expression != "":
		errs = append(errs, invalid(field, "", "claim and expression can't both be set"))
	case m.Claim == "" && m.Expression == "" && needed:
		errs = append(errs, required(field, "claim or expression is required"))
	}
	if m.Expression != "" && m.Prefix != nil {
		errs = append(errs, invalid(field+".prefix", *m.Prefix, "prefix can't be set when expression is set"))
	}
	if m.Claim != "" && m.Prefix == nil {
		errs = append(errs, required(field+".prefix", "prefix is required when claim is set. It can be set to an empty string to disable prefixing"))
	}
	return errs
}

func validateMappings(m *ClaimMappings, field string, b Brand) FieldErrors {
	errs := validatePrefixed(m.Username, field+".username", true)
	errs = append(errs, validatePrefixed(m.Groups, field+".groups", false)...)
	if m.UID.Claim != "" && m.UID.Expression != "" {
		errs = append(errs, invalid(field+".uid", "", "claim and expression can't both be set"))
	}
	seen := map[string]bool{}
	for i, x := range m.Extra {
		fp := fmt.Sprintf("%s.extra[%d]", field, i)
		errs = append(errs, validateDomainPrefixedPath(fp+".key", x.Key)...)
		if x.Key != strings.ToLower(x.Key) {
			errs = append(errs, invalid(fp+".key", x.Key, "key must be lowercase"))
		}
		if reservedExtraKey(x.Key, b) {
			errs = append(errs, invalid(fp+".key", x.Key, reservedExtraKeyMessage(b)))
		}
		if seen[x.Key] {
			errs = append(errs, duplicate(fp+".key", x.Key))
			continue
		}
		seen[x.Key] = true
		if x.ValueExpression == "" {
			errs = append(errs, required(fp+".valueExpression", "valueExpression is required"))
		}
	}
	return errs
}

// reservedExtraKey reports whether key's domain is one of the brand's
// domains or a subdomain of one.
func reservedExtraKey(key string, b Brand) bool {
	host, _, _ := strings.Cut(key, "/")
	for _, d := range []string{b.Domain, b.LongDomain} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

func reservedExtraKeyMessage(b Brand) string {
	owner := strings.ToUpper(b.Name[:1]) + b.Name[1:]
	if b.Domain == b.LongDomain {
		return fmt.Sprintf("%s and its subdomains are reserved for %s use", b.Domain, owner)
	}
	return fmt.Sprintf("%s, %s and their subdomains are reserved for %s use", b.Domain, b.LongDomain, owner)
}

const httpPathFmt = `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`

var httpPathRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^" + httpPathFmt + "$") })

// validateDomainPrefixedPath requires "<dns subdomain>/<path>", with
// upstream's messages.
func validateDomainPrefixedPath(field, s string) FieldErrors {
	host, path, ok := strings.Cut(s, "/")
	if !ok || host == "" || path == "" {
		return FieldErrors{invalid(field, s, `must be a domain-prefixed path (such as "acme.io/foo")`)}
	}
	var errs FieldErrors
	for _, msg := range validation.IsDNS1123Subdomain(host) {
		errs = append(errs, invalid(field, host, msg))
	}
	if !httpPathRe().MatchString(path) {
		errs = append(errs, invalid(field, path, "Invalid path (regex used for validation is '"+httpPathFmt+"')"))
	}
	return errs
}

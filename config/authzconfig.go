package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"platd/server/validation"
)

// AuthorizationConfigurationKind is the kind of an --authorization-config
// file.
const AuthorizationConfigurationKind = "AuthorizationConfiguration"

// Authorization webhook defaults, as upstream's: an allowed answer is
// remembered five minutes, any other thirty seconds (a revoked grant
// outlives its revocation at most that long), and v1beta1 is what
// webhooks written against older servers speak.
const (
	DefaultAuthzWebhookAuthorizedTTL   = 5 * time.Minute
	DefaultAuthzWebhookUnauthorizedTTL = 30 * time.Second
	DefaultAuthzWebhookVersion         = "v1beta1"
	// LegacyAuthzWebhookTimeout bounds a call of the webhook the flags
	// configure; the file's timeout may not exceed it.
	LegacyAuthzWebhookTimeout = 30 * time.Second
)

// MaxAuthzMatchConditions is the most matchConditions one webhook may have.
const MaxAuthzMatchConditions = 64

// Webhook failure policies and connection types of the file.
const (
	FailurePolicyNoOpinion     = "NoOpinion"
	FailurePolicyDeny          = "Deny"
	ConnectionInClusterConfig  = "InClusterConfig"
	ConnectionKubeConfigFile   = "KubeConfigFile"
	authorizationConfigFlag    = "authorization-config"
	authorizationWebhookPrefix = "authorization-webhook-"
)

// ErrAuthorizationConfig is wrapped by every error of loading an
// authorization configuration file.
var ErrAuthorizationConfig = errors.New("invalid authorization configuration")

// Duration is a time.Duration written as a Go duration string ("3s").
type Duration struct{ time.Duration }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Duration.String()) }

// AuthorizationConfiguration is the --authorization-config file. The v1,
// v1beta1 and v1alpha1 shapes hold the same fields.
type AuthorizationConfiguration struct {
	APIVersion  string                    `json:"apiVersion"`
	Kind        string                    `json:"kind"`
	Authorizers []AuthorizerConfiguration `json:"authorizers"`
}

// AuthorizerConfiguration is one authorizer of the chain, in order.
type AuthorizerConfiguration struct {
	// Type is an authorization mode name (ModeRBAC...).
	Type string `json:"type"`
	// Name is the lower-cased type for built-in types, free (a DNS
	// subdomain) for webhooks; metrics carry it.
	Name    string                `json:"name"`
	Webhook *WebhookConfiguration `json:"webhook,omitempty"`
}

// WebhookConfiguration configures one webhook authorizer.
type WebhookConfiguration struct {
	AuthorizedTTL                            Duration                `json:"authorizedTTL"`
	UnauthorizedTTL                          Duration                `json:"unauthorizedTTL"`
	Timeout                                  Duration                `json:"timeout"`
	SubjectAccessReviewVersion               string                  `json:"subjectAccessReviewVersion"`
	MatchConditionSubjectAccessReviewVersion string                  `json:"matchConditionSubjectAccessReviewVersion"`
	FailurePolicy                            string                  `json:"failurePolicy"`
	ConnectionInfo                           WebhookConnectionInfo   `json:"connectionInfo"`
	MatchConditions                          []WebhookMatchCondition `json:"matchConditions"`
}

// WebhookConnectionInfo says how to reach the webhook.
type WebhookConnectionInfo struct {
	Type           string  `json:"type"`
	KubeConfigFile *string `json:"kubeConfigFile,omitempty"`
}

// WebhookMatchCondition is a CEL expression over the request that must be
// true for the webhook to be asked.
type WebhookMatchCondition struct {
	Expression string `json:"expression"`
}

// AuthorizationConfigAPIVersions lists the apiVersions a file may declare.
func AuthorizationConfigAPIVersions(b Brand) []string {
	g := b.Group("apiserver.config")
	return []string{g + "/v1", g + "/v1beta1", g + "/v1alpha1"}
}

// LoadAuthorizationConfig reads, decodes and defaults path strictly and
// returns the bytes read (for change detection, also on error). It does
// not validate: see ValidateAuthorizationConfig.
func LoadAuthorizationConfig(path string, b Brand) (*AuthorizationConfiguration, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrAuthorizationConfig, err)
	}
	c, err := DecodeAuthorizationConfig(data, b)
	if err != nil {
		return nil, data, fmt.Errorf("%w: %s: %w", ErrAuthorizationConfig, path, err)
	}
	return c, data, nil
}

// DecodeAuthorizationConfig decodes YAML or JSON strictly (unknown and
// duplicate fields are errors) and fills the webhook TTL defaults.
func DecodeAuthorizationConfig(data []byte, b Brand) (*AuthorizationConfiguration, error) {
	var c AuthorizationConfiguration
	if err := decodeStrict(data, &c, AuthorizationConfigurationKind, AuthorizationConfigAPIVersions(b)); err != nil {
		return nil, err
	}
	for i := range c.Authorizers {
		if w := c.Authorizers[i].Webhook; w != nil {
			if w.AuthorizedTTL.Duration == 0 {
				w.AuthorizedTTL.Duration = DefaultAuthzWebhookAuthorizedTTL
			}
			if w.UnauthorizedTTL.Duration == 0 {
				w.UnauthorizedTTL.Duration = DefaultAuthzWebhookUnauthorizedTTL
			}
		}
	}
	return &c, nil
}

// AuthorizerName is the name a non-webhook authorizer must have in the
// file: its type lower-cased.
func AuthorizerName(typ string) string { return strings.ToLower(typ) }

// MatchConditionChecker compiles one match-condition expression; a
// non-nil result is the problem, its Field left for the caller to fill.
type MatchConditionChecker func(expr string) *FieldError

// ValidateAuthorizationConfig checks c with upstream's rules and messages;
// check compiles match conditions (the expression compiler lives with the
// authorizer), nil skips that.
func ValidateAuthorizationConfig(c *AuthorizationConfiguration, check MatchConditionChecker) FieldErrors {
	var errs FieldErrors
	if len(c.Authorizers) == 0 {
		errs = append(errs, required("authorizers", "at least one authorization mode must be defined"))
	}
	known := slices.Sorted(slices.Values(AuthorizationModeNames))
	types, names := map[string]bool{}, map[string]bool{}
	for i, a := range c.Authorizers {
		p := fmt.Sprintf("authorizers[%d]", i)
		switch {
		case a.Type == "":
			errs = append(errs, required(p+".type", ""))
			continue
		case !slices.Contains(known, a.Type):
			errs = append(errs, notSupported(p+".type", a.Type, known))
			continue
		case types[a.Type] && a.Type != ModeWebhook:
			errs = append(errs, duplicate(p+".type", a.Type))
			continue
		}
		types[a.Type] = true
		switch {
		case a.Name == "":
			errs = append(errs, required(p+".name", ""))
		case names[a.Name]:
			errs = append(errs, duplicate(p+".name", a.Name))
		default:
			if problems := validation.IsDNS1123Subdomain(a.Name); len(problems) > 0 {
				errs = append(errs, invalid(p+".name", a.Name, "authorizer name is invalid: "+strings.Join(problems, ", ")))
			}
		}
		names[a.Name] = true
		if a.Type == ModeWebhook {
			if a.Webhook == nil {
				errs = append(errs, required(p+".webhook", "required when type=Webhook"))
				continue
			}
			errs = append(errs, validateAuthzWebhook(a.Webhook, p, check)...)
		} else if a.Webhook != nil {
			errs = append(errs, invalid(p+".webhook", "non-null", "may only be specified when type=Webhook"))
		}
	}
	return errs
}

func validateAuthzWebhook(w *WebhookConfiguration, p string, check MatchConditionChecker) FieldErrors {
	var errs FieldErrors
	if d := w.Timeout.Duration; d == 0 {
		errs = append(errs, required(p+".timeout", ""))
	} else if d < 0 || d > LegacyAuthzWebhookTimeout {
		errs = append(errs, invalid(p+".timeout", d.String(), "must be > 0s and <= 30s"))
	}
	for _, ttl := range []struct {
		name string
		d    time.Duration
	}{{"authorizedTTL", w.AuthorizedTTL.Duration}, {"unauthorizedTTL", w.UnauthorizedTTL.Duration}} {
		if ttl.d == 0 {
			errs = append(errs, required(p+"."+ttl.name, ""))
		} else if ttl.d < 0 {
			errs = append(errs, invalid(p+"."+ttl.name, ttl.d.String(), "must be > 0s"))
		}
	}
	switch w.SubjectAccessReviewVersion {
	case "":
		errs = append(errs, required(p+".subjectAccessReviewVersion", ""))
	case "v1", "v1beta1":
	default:
		errs = append(errs, notSupported(p+".subjectAccessReviewVersion", w.SubjectAccessReviewVersion, []string{"v1", "v1beta1"}))
	}
	switch w.MatchConditionSubjectAccessReviewVersion {
	case "":
		if len(w.MatchConditions) > 0 {
			errs = append(errs, required(p+".matchConditionSubjectAccessReviewVersion", "required if match conditions are specified"))
		}
	case "v1":
	default:
		errs = append(errs, notSupported(p+".matchConditionSubjectAccessReviewVersion", w.MatchConditionSubjectAccessReviewVersion, []string{"v1"}))
	}
	switch w.FailurePolicy {
	case "":
		errs = append(errs, required(p+".failurePolicy", ""))
	case FailurePolicyNoOpinion, FailurePolicyDeny:
	default:
		errs = append(errs, notSupported(p+".failurePolicy", w.FailurePolicy, []string{FailurePolicyNoOpinion, FailurePolicyDeny}))
	}
	ci, kf := w.ConnectionInfo, p+".connectionInfo.kubeConfigFile"
	switch ci.Type {
	case "":
		errs = append(errs, required(p+".connectionInfo.type", ""))
	case ConnectionInClusterConfig:
		if ci.KubeConfigFile != nil {
			errs = append(errs, invalid(kf, *ci.KubeConfigFile, "can only be set when type=KubeConfigFile"))
		}
	case ConnectionKubeConfigFile:
		switch {
		case ci.KubeConfigFile == nil || *ci.KubeConfigFile == "":
			errs = append(errs, required(kf, ""))
		case !filepath.IsAbs(*ci.KubeConfigFile):
			errs = append(errs, invalid(kf, *ci.KubeConfigFile, "must be an absolute path"))
		default:
			if info, err := os.Stat(*ci.KubeConfigFile); err != nil {
				errs = append(errs, invalid(kf, *ci.KubeConfigFile, fmt.Sprintf("error loading file: %v", err)))
			} else if !info.Mode().IsRegular() {
				errs = append(errs, invalid(kf, *ci.KubeConfigFile, "must be a regular file"))
			}
		}
	default:
		// Upstream prints the whole connectionInfo value here; its type
		// is what was wrong.
		errs = append(errs, notSupported(p+".connectionInfo.type", ci.Type, []string{ConnectionInClusterConfig, ConnectionKubeConfigFile}))
	}
	if len(w.MatchConditions) > MaxAuthzMatchConditions {
		errs = append(errs, &FieldError{Type: FieldTooMany, Field: p + ".matchConditions", Value: len(w.MatchConditions),
			Detail: fmt.Sprintf("must have at most %d items", MaxAuthzMatchConditions)})
		return errs
	}
	seen := map[string]bool{}
	for i, mc := range w.MatchConditions {
		f := fmt.Sprintf("%s.matchConditions[%d].expression", p, i)
		switch {
		case strings.TrimSpace(mc.Expression) == "":
			errs = append(errs, required(f, ""))
		case seen[mc.Expression]:
			errs = append(errs, duplicate(f, mc.Expression))
		default:
			seen[mc.Expression] = true
			if check != nil {
				if fe := check(mc.Expression); fe != nil {
					fe.Field = f
					errs = append(errs, fe)
				}
			}
		}
	}
	return errs
}

// AuthorizationWebhook is the --authorization-webhook-* flags.
type AuthorizationWebhook struct {
	// ConfigFile is the kubeconfig naming the webhook.
	ConfigFile string
	// Version is the SubjectAccessReview version sent: "v1" or "v1beta1".
	Version string
	// AuthorizedTTL and UnauthorizedTTL are how long allowed and other
	// answers are remembered.
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// Set lists the flags given on the command line (without "--"): with
	// --authorization-config none may be.
	Set []string
}

// validateAuthorization checks the authorization flags against each other
// and the --authorization-config file: upstream's texts.
func (o *Options) validateAuthorization() []string {
	var errs []string
	w := &o.AuthorizationWebhook
	if w.Version == "" {
		w.Version = DefaultAuthzWebhookVersion
	}
	if w.AuthorizedTTL == 0 && !slices.Contains(w.Set, "authorization-webhook-cache-authorized-ttl") {
		w.AuthorizedTTL = DefaultAuthzWebhookAuthorizedTTL
	}
	if w.UnauthorizedTTL == 0 && !slices.Contains(w.Set, "authorization-webhook-cache-unauthorized-ttl") {
		w.UnauthorizedTTL = DefaultAuthzWebhookUnauthorizedTTL
	}
	if o.AuthorizationConfigFile != "" {
		if o.AuthorizationModesSet || len(w.Set) > 0 {
			errs = append(errs, fmt.Sprintf("--%s can not be specified when --authorization-mode or --%s* flags are defined", authorizationConfigFlag, authorizationWebhookPrefix))
		}
		return errs
	}
	if w.Version != "v1" && w.Version != "v1beta1" {
		errs = append(errs, fmt.Sprintf("--authorization-webhook-version: unsupported authorization webhook version %q, supported versions are %q, %q", w.Version, "v1", "v1beta1"))
	}
	if w.AuthorizedTTL < 0 || w.UnauthorizedTTL < 0 {
		errs = append(errs, "--authorization-webhook-cache-authorized-ttl and --authorization-webhook-cache-unauthorized-ttl must not be negative")
	}
	webhook := slices.Contains(o.AuthorizationModes, ModeWebhook)
	if webhook && w.ConfigFile == "" {
		errs = append(errs, "authorization-mode Webhook's authorization config file not passed")
	}
	if !webhook && w.ConfigFile != "" {
		errs = append(errs, "cannot specify --authorization-webhook-config-file without mode Webhook")
	}
	return errs
}

// authzDurationType is Duration's type: the strict decoder's type check
// expects a string for it.
var authzDurationType = reflect.TypeOf(Duration{})

// AnonymousAllowAll is the problem of an AlwaysAllow authorizer in the
// file while anonymous requests are let in ("" when there is none): every
// anonymous request would be allowed, which --authorization-mode refuses
// too. A reload that adds one is refused for the same reason.
func (c *AuthorizationConfiguration) AnonymousAllowAll(anonymous bool) string {
	if !anonymous || !slices.ContainsFunc(c.Authorizers, func(a AuthorizerConfiguration) bool { return a.Type == ModeAlwaysAllow }) {
		return ""
	}
	return "--anonymous-auth=true cannot be combined with an AlwaysAllow authorizer in --authorization-config: every request without credentials would be allowed; choose another authorizer, or start platd with --anonymous-auth=false"
}

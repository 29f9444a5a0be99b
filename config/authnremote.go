package config

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Token webhook defaults, as upstream's: a two-minute cache absorbs the
// repeated requests of one client without keeping a revoked token alive
// for long, and v1beta1 is what webhooks written against older servers
// speak.
const (
	DefaultTokenWebhookCacheTTL = 2 * time.Minute
	DefaultTokenWebhookVersion  = "v1beta1"
)

// TokenWebhook is the --authentication-token-webhook-* flags.
type TokenWebhook struct {
	// ConfigFile is the kubeconfig naming the webhook; "" disables it.
	ConfigFile string
	// CacheTTL is how long accepted and rejected tokens are remembered.
	CacheTTL time.Duration
	// Version is the TokenReview version sent: "v1" or "v1beta1".
	Version string
}

// RequestHeader is the --requestheader-* flags of the authenticating
// proxy.
type RequestHeader struct {
	// ClientCAFile verifies the proxy's client certificate; "" disables
	// the authenticator.
	ClientCAFile string
	// AllowedNames are the accepted common names of the proxy's
	// certificate; empty accepts any certificate ClientCAFile verifies.
	AllowedNames []string
	// UsernameHeaders, UIDHeaders and GroupHeaders name the headers that
	// carry the user; ExtraHeadersPrefix the prefixes of user-extra ones.
	UsernameHeaders    []string
	UIDHeaders         []string
	GroupHeaders       []string
	ExtraHeadersPrefix []string
}

// Standard header names an aggregated server expects a front proxy to use.
const (
	standardUserHeader   = "X-Remote-User"
	standardUIDHeader    = "X-Remote-Uid"
	standardGroupHeader  = "X-Remote-Group"
	standardExtraPrefix  = "X-Remote-Extra-"
	aggregationWarningFn = "--%s is set without specifying the standard %s header%s - API aggregation will not work"
)

// validate returns the problems of the token webhook flags.
func (w *TokenWebhook) validate() []string {
	var errs []string
	if w.Version == "" {
		w.Version = DefaultTokenWebhookVersion
	}
	if w.Version != "v1" && w.Version != "v1beta1" {
		errs = append(errs, fmt.Sprintf("unsupported authentication webhook version %q, supported versions are %q, %q", w.Version, "v1", "v1beta1"))
	}
	if w.CacheTTL < 0 {
		errs = append(errs, fmt.Sprintf("--authentication-token-webhook-cache-ttl %s must not be negative", w.CacheTTL))
	}
	return errs
}

// validate returns the problems of the request-header flags and logs the
// warnings upstream gives for lists that lack the standard names.
func (h *RequestHeader) validate() []string {
	var errs []string
	for _, l := range []struct {
		flag   string
		values []string
	}{
		{"requestheader-username-headers", h.UsernameHeaders},
		{"requestheader-uid-headers", h.UIDHeaders},
		{"requestheader-group-headers", h.GroupHeaders},
		{"requestheader-extra-headers-prefix", h.ExtraHeadersPrefix},
		{"requestheader-allowed-names", h.AllowedNames},
	} {
		if slices.ContainsFunc(l.values, func(v string) bool { return strings.TrimSpace(v) == "" }) {
			errs = append(errs, fmt.Sprintf("empty value in %q", l.flag))
		}
	}
	// platd serves the uid headers as if upstream's RemoteRequestHeaderUID
	// gate were on, with that gate's rule.
	if len(h.UIDHeaders) > 0 && !hasFold(h.UIDHeaders, standardUIDHeader) {
		errs = append(errs, fmt.Sprintf(aggregationWarningFn, "requestheader-uid-headers", standardUIDHeader, ""))
	}
	if len(h.UsernameHeaders) > 0 && !hasFold(h.UsernameHeaders, standardUserHeader) {
		slog.Warn(fmt.Sprintf(aggregationWarningFn, "requestheader-username-headers", standardUserHeader, ""))
	}
	if len(h.GroupHeaders) > 0 && !hasFold(h.GroupHeaders, standardGroupHeader) {
		slog.Warn(fmt.Sprintf(aggregationWarningFn, "requestheader-group-headers", standardGroupHeader, ""))
	}
	if len(h.ExtraHeadersPrefix) > 0 && !hasFold(h.ExtraHeadersPrefix, standardExtraPrefix) {
		slog.Warn(fmt.Sprintf(aggregationWarningFn, "requestheader-extra-headers-prefix", standardExtraPrefix, " prefix"))
	}
	return errs
}

func hasFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(v string) bool { return strings.EqualFold(v, s) })
}

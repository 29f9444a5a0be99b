package server

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/controllers"
	"platd/server/registry"
)

// AuthenticationConfigMap is the ConfigMap in the system namespace that
// tells extension API servers whom this server trusts: its client CA and
// how its authenticating proxy asserts users.
const AuthenticationConfigMap = "extension-apiserver-authentication"

// expiredCAGrace keeps a CA in the published bundle for five minutes past
// its expiry, as upstream does, so clocks a little behind still find it.
const expiredCAGrace = 5 * time.Minute

// remoteAuth is what the token webhook and the authenticating proxy add to
// the authenticator and the TLS configuration.
type remoteAuth struct {
	front  []security.Authenticator
	tokens []security.TokenAuthenticator
	// proxyCA is --requestheader-client-ca-file, re-read when it changes;
	// its certificates are offered to clients in the TLS handshake too.
	proxyCA *security.CAFile
}

// remoteAuthenticators builds the request-header and token webhook
// authenticators the options ask for.
func remoteAuthenticators(o config.Options) (remoteAuth, error) {
	var ra remoteAuth
	if err := ra.trustProxy(o); err != nil {
		return ra, err
	}
	if wh := o.TokenWebhook; wh.ConfigFile != "" {
		kc, err := config.LoadKubeconfigClient(wh.ConfigFile)
		if err != nil {
			return ra, fmt.Errorf("%w: --authentication-token-webhook-config-file: %v", config.ErrInvalid, err)
		}
		t, err := security.NewWebhookTokenAuthenticator(security.WebhookTokenConfig{
			Client: kc, Version: wh.Version, CacheTTL: wh.CacheTTL, Brand: o.Brand, ImplicitAudiences: o.ServiceAccounts.Audiences(),
		})
		if err != nil {
			return ra, fmt.Errorf("%w: --authentication-token-webhook-config-file: %v", config.ErrInvalid, err)
		}
		ra.tokens = append(ra.tokens, t)
	}
	return ra, nil
}

// trustProxy sets the request-header authenticator of
// --requestheader-client-ca-file, none without it.
func (ra *remoteAuth) trustProxy(o config.Options) error {
	ra.front, ra.proxyCA = nil, nil
	rh := o.RequestHeader
	if rh.ClientCAFile == "" {
		return nil
	}
	ca, err := security.LoadCAFile(rh.ClientCAFile)
	if err != nil {
		return fmt.Errorf("%w: --requestheader-client-ca-file: %v", config.ErrInvalid, err)
	}
	ra.proxyCA = ca
	ra.front = []security.Authenticator{security.NewRequestHeaderAuthenticator(security.RequestHeaderConfig{
		CAs: ca.Pool, AllowedNames: rh.AllowedNames, UsernameHeaders: rh.UsernameHeaders, UIDHeaders: rh.UIDHeaders,
		GroupHeaders: rh.GroupHeaders, ExtraHeaderPrefixes: rh.ExtraHeadersPrefix,
	}, o.Brand)}
	return nil
}

// proxyCAPEM is the proxy CA bundle's current content, nil without one.
func (ra remoteAuth) proxyCAPEM() []byte {
	if ra.proxyCA == nil {
		return nil
	}
	return ra.proxyCA.PEM()
}

// authenticationTrust is this server's part of AuthenticationConfigMap.
type authenticationTrust struct {
	clientCA []byte
	proxyCA  []byte
	rh       config.RequestHeader
}

// authenticationTrustObject is AuthenticationConfigMap as this server
// keeps it: its settings merged with what the stored object holds, as
// upstream merges them (several servers may share one cluster): lists are
// unions, CA bundles the union of their unexpired certificates. The merge
// happens at start and when a CA file changes; in between the object is
// repaired to it when changed or deleted. ok is false when ConfigMaps are
// not served.
func (s *Server) authenticationTrustObject(t authenticationTrust) (w controllers.Wanted, ok bool, err error) {
	d := s.reg.ByKind("", "v1", "ConfigMap")
	if d == nil {
		return w, false, nil
	}
	ns := s.opts.Brand.SystemNamespace
	have := map[string]string{}
	cur, err := s.rest.Get(d, ns, AuthenticationConfigMap)
	switch {
	case err == nil:
		if m, ok := cur["data"].(map[string]any); ok {
			for k, v := range m {
				if str, ok := v.(string); ok {
					have[k] = str
				}
			}
		}
	case apierr.ReasonOf(err) != apierr.ReasonNotFound:
		return w, false, err
	}
	data, err := mergeAuthenticationTrust(have, t, time.Now())
	if err != nil {
		return w, false, fmt.Errorf("merging with the stored %s: %w", AuthenticationConfigMap, err)
	}
	obj := registry.Object{"metadata": map[string]any{"name": AuthenticationConfigMap, "namespace": ns}, "data": stringMap(data)}
	return controllers.Wanted{Descriptor: d, Object: obj, Fields: []string{"data"}}, true, nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// mergeAuthenticationTrust returns the ConfigMap data for have merged with
// t. The request-header keys are written only when a proxy CA is known.
// A key holding something other than a JSON list of strings (or a bundle
// of certificates) is an error: overwriting it would lose another server's
// trust.
func mergeAuthenticationTrust(have map[string]string, t authenticationTrust, now time.Time) (map[string]string, error) {
	out := map[string]string{}
	clientCA, err := mergeBundles(have["client-ca-file"], t.clientCA, now)
	if err != nil {
		return nil, fmt.Errorf("client-ca-file: %w", err)
	}
	if len(clientCA) > 0 {
		out["client-ca-file"] = string(clientCA)
	}
	proxyCA, err := mergeBundles(have["requestheader-client-ca-file"], t.proxyCA, now)
	if err != nil {
		return nil, fmt.Errorf("requestheader-client-ca-file: %w", err)
	}
	if len(proxyCA) == 0 {
		return out, nil
	}
	out["requestheader-client-ca-file"] = string(proxyCA)
	for _, l := range []struct {
		key  string
		mine []string
	}{
		{"requestheader-username-headers", t.rh.UsernameHeaders},
		{"requestheader-uid-headers", t.rh.UIDHeaders},
		{"requestheader-group-headers", t.rh.GroupHeaders},
		{"requestheader-extra-headers-prefix", t.rh.ExtraHeadersPrefix},
		{"requestheader-allowed-names", t.rh.AllowedNames},
	} {
		var existing []string
		if v := have[l.key]; v != "" {
			if err := json.Unmarshal([]byte(v), &existing); err != nil {
				return nil, fmt.Errorf("%s: %w", l.key, err)
			}
		}
		merged := []string{}
		for _, v := range append(existing, l.mine...) {
			if !slices.Contains(merged, v) {
				merged = append(merged, v)
			}
		}
		b, _ := json.Marshal(merged)
		out[l.key] = string(b)
	}
	return out, nil
}

// mergeBundles returns the PEM of the distinct certificates of a then b
// that have not expired (with expiredCAGrace); nil when none remain.
func mergeBundles(a string, b []byte, now time.Time) ([]byte, error) {
	var certs []*x509.Certificate
	for _, bundle := range [][]byte{[]byte(a), b} {
		for rest := bundle; ; {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				break
			}
			if blk.Type != "CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, err
			}
			certs = append(certs, c)
		}
	}
	var out bytes.Buffer
	var seen [][]byte
	for _, c := range certs {
		if !c.NotAfter.After(now.Add(-expiredCAGrace)) || slices.ContainsFunc(seen, func(r []byte) bool { return bytes.Equal(r, c.Raw) }) {
			continue
		}
		seen = append(seen, c.Raw)
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	if out.Len() == 0 {
		return nil, nil
	}
	return out.Bytes(), nil
}

// clientCAPEM is the bundle client certificates are verified against: the
// data directory's CA and the current --client-ca-file content (file is
// nil without one).
func clientCAPEM(ca *security.CA, file *security.CAFile) []byte {
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Certificate().Raw})
	if file != nil {
		out = append(out, file.PEM()...)
	}
	return out
}

// trustRecheck is how often the CA files are looked at for the
// published bundle; a changed file is read at most once a second anyway
// (security.CAFile).
const trustRecheck = time.Second

// followTrust republishes AuthenticationConfigMap when a CA file changes,
// until ctx ends. As upstream, the new bundle is merged with what the
// object holds: a CA added to a file appears, one taken out stays until
// it expires.
func (s *Server) followTrust(ctx context.Context, kept *controllers.Kept, last authenticationTrust) {
	t := time.NewTicker(trustRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.trustNow()
		if bytes.Equal(now.clientCA, last.clientCA) && bytes.Equal(now.proxyCA, last.proxyCA) {
			continue
		}
		w, ok, err := s.authenticationTrustObject(now)
		if err != nil {
			// Tried again at the next tick.
			s.log.Error("publishing the authentication configuration", "configmap", AuthenticationConfigMap, "err", err)
			continue
		}
		last = now
		if ok {
			kept.Set(w)
		}
	}
}

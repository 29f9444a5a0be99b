package security

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"

	"platd/config"
)

// RequestHeaderConfig configures NewRequestHeaderAuthenticator.
type RequestHeaderConfig struct {
	// CAs returns the pool that verifies the proxy's client certificate,
	// read on every request so a reloaded bundle takes effect at once.
	// Required.
	CAs func() *x509.CertPool
	// AllowedNames, when not empty, are the common names the proxy's
	// certificate may have.
	AllowedNames []string
	// UsernameHeaders are tried in order; the first non-empty value is the
	// user name. UIDHeaders likewise for the uid.
	UsernameHeaders []string
	UIDHeaders      []string
	// GroupHeaders: every value of each, in order, is a group.
	GroupHeaders []string
	// ExtraHeaderPrefixes: each header that starts with one becomes a
	// user-extra entry named by the rest of the header name.
	ExtraHeaderPrefixes []string
}

// NewRequestHeaderAuthenticator trusts an authenticating proxy: a request
// over a client certificate the configured CAs verify (with an allowed
// common name) names its user in headers. A request without a client
// certificate, or one that names no user, is ok=false; a certificate that
// fails verification or has a name not allowed is an error, so another
// authenticator may still accept it. The headers are removed from the
// request when it authenticates.
func NewRequestHeaderAuthenticator(cfg RequestHeaderConfig, b config.Brand) Authenticator {
	canon := func(l []string) []string {
		out := make([]string, len(l))
		for i, h := range l {
			out[i] = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(h))
		}
		return out
	}
	return &requestHeader{
		verifier:     NewDynamicX509Authenticator(cfg.CAs, b).(*x509Auth),
		allowedNames: slices.Clone(cfg.AllowedNames),
		users:        canon(cfg.UsernameHeaders),
		uids:         canon(cfg.UIDHeaders),
		groups:       canon(cfg.GroupHeaders),
		prefixes:     slices.Clone(cfg.ExtraHeaderPrefixes),
	}
}

type requestHeader struct {
	verifier            *x509Auth
	allowedNames        []string
	users, uids, groups []string
	prefixes            []string
}

func (h *requestHeader) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	// A request that names no user cannot authenticate here whatever its
	// certificate: most requests over a client certificate are the
	// certificate's own user's, and verifying it against the proxy's CAs
	// (which fail, and are not remembered) would cost each of them a
	// signature check.
	if firstValue(r.Header, h.users) == "" {
		return nil, false, nil
	}
	pool := h.verifier.roots()
	if pool == nil {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	if err := h.verifier.verify(pool, r.TLS.PeerCertificates); err != nil {
		return nil, false, fmt.Errorf("%w: verifying certificate %s failed: %w", ErrCertificateVerify, certIdentifier(leaf), err)
	}
	if len(h.allowedNames) > 0 && !slices.Contains(h.allowedNames, leaf.Subject.CommonName) {
		return nil, false, fmt.Errorf("%w: x509: subject with cn=%s is not in the allowed list", ErrCertificateVerify, leaf.Subject.CommonName)
	}
	u := userFromHeaders(r.Header, h.users, h.uids, h.groups, h.prefixes)
	if u == nil {
		return nil, false, nil
	}
	h.ClearHeaders(r.Header)
	return u, true, nil
}

// userFromHeaders reads the asserted identity; nil when no user header
// has a value. Header name lists must be canonical.
func userFromHeaders(hdr http.Header, users, uids, groups, prefixes []string) *User {
	name := firstValue(hdr, users)
	if name == "" {
		return nil
	}
	u := &User{Name: name, UID: firstValue(hdr, uids)}
	for _, g := range groups {
		for _, v := range hdr[g] {
			if v != "" {
				u.Groups = append(u.Groups, v)
			}
		}
	}
	if len(prefixes) > 0 {
		names := make([]string, 0, len(hdr))
		for k := range hdr {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, p := range prefixes {
			lp := strings.ToLower(p)
			for _, k := range names {
				lk := strings.ToLower(k)
				if !strings.HasPrefix(lk, lp) {
					continue
				}
				key := lk[len(lp):]
				if unescaped, err := url.PathUnescape(key); err == nil {
					key = unescaped
				}
				if u.Extra == nil {
					u.Extra = map[string][]string{}
				}
				u.Extra[key] = append(u.Extra[key], hdr[k]...)
			}
		}
	}
	return u
}

func firstValue(hdr http.Header, names []string) string {
	for _, n := range names {
		if v := hdr.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// ClearHeaders removes every header this authenticator reads.
func (h *requestHeader) ClearHeaders(hdr http.Header) {
	for _, l := range [][]string{h.users, h.uids, h.groups} {
		for _, n := range l {
			hdr.Del(n)
		}
	}
	deletePrefixed(hdr, h.prefixes)
}

func deletePrefixed(hdr http.Header, prefixes []string) {
	for _, p := range prefixes {
		lp := strings.ToLower(p)
		for k := range hdr {
			if strings.HasPrefix(strings.ToLower(k), lp) {
				delete(hdr, k)
			}
		}
	}
}

// headerClearer is implemented by authenticators that read request
// headers which must not reach handlers.
type headerClearer interface {
	ClearHeaders(http.Header)
}

// identityHeaderStripper removes the headers of the configured proxy
// authenticators from every request that authenticates, whichever
// authenticator accepted it, so no handler reads a client's own claim.
// (The standard X-Remote-* names are removed by the authentication
// filter, configured or not.)
type identityHeaderStripper struct {
	next     Authenticator
	clearers []headerClearer
}

func (s identityHeaderStripper) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	u, ok, err := s.next.AuthenticateRequest(r)
	if ok && err == nil {
		for _, c := range s.clearers {
			c.ClearHeaders(r.Header)
		}
	}
	return u, ok, err
}

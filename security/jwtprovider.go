package security

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Timing of the provider connection, as upstream's.
const (
	// jwtProviderTimeout bounds each discovery or JWKS request.
	jwtProviderTimeout = 30 * time.Second
	// jwtDiscoveryRetry is how often discovery is retried until it first
	// succeeds; tokens of the issuer fail until then.
	jwtDiscoveryRetry = 10 * time.Second
	// maxProviderResponse bounds a discovery document or key set read.
	maxProviderResponse = 1 << 20
)

// ErrJWTNotInitialized is returned for tokens of an issuer whose discovery
// has not succeeded yet.
var ErrJWTNotInitialized = errors.New("oidc: authenticator not initialized")

// jwtProvider is one issuer's discovery document and key set. Discovery
// runs in the background until it succeeds; the key set is fetched then
// and again whenever a token's signature matches no cached key.
type jwtProvider struct {
	issuer       string
	discoveryURL string
	client       *http.Client

	mu        sync.Mutex
	jwksURI   string
	keys      []jose.JSONWebKey
	lastErr   error
	refreshCh chan struct{} // non-nil while a key refresh runs
	ready     chan struct{} // closed when discovery succeeded
}

func newJWTProvider(issuer, discoveryURL string, caPEM []byte) (*jwtProvider, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("%w: certificateAuthority holds no certificate", ErrKeyMaterial)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	// As upstream, the environment's proxy settings apply (the clone
	// keeps them); there is no egress selector.
	if discoveryURL == "" {
		discoveryURL = strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	}
	return &jwtProvider{
		issuer: issuer, discoveryURL: discoveryURL,
		client: &http.Client{Transport: tr, Timeout: jwtProviderTimeout},
		ready:  make(chan struct{}),
	}, nil
}

// run discovers the provider, retrying until it succeeds or ctx ends.
func (p *jwtProvider) run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := p.discover(ctx)
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		if err == nil {
			close(p.ready)
			return
		}
		t.Reset(jwtDiscoveryRetry)
	}
}

func (p *jwtProvider) initialized() bool {
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}

// healthy reports why the provider is not usable yet, upstream's text.
func (p *jwtProvider) healthy() error {
	if p.initialized() {
		return nil
	}
	p.mu.Lock()
	err := p.lastErr
	p.mu.Unlock()
	if err == nil {
		err = ErrJWTNotInitialized
	}
	return fmt.Errorf("oidc: authenticator for issuer %q is not healthy: %w", p.issuer, err)
}

func (p *jwtProvider) get(ctx context.Context, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderResponse))
	if err != nil {
		return fmt.Errorf("unable to read response body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("oidc: failed to decode provider discovery object: %w", err)
	}
	return nil
}

func (p *jwtProvider) discover(ctx context.Context) error {
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.get(ctx, p.discoveryURL, &doc); err != nil {
		return err
	}
	if doc.Issuer != p.issuer {
		return fmt.Errorf("oidc: issuer did not match the issuer returned by provider, expected %q got %q", p.issuer, doc.Issuer)
	}
	if doc.JWKSURI == "" {
		return errors.New("oidc: discovery document has no jwks_uri")
	}
	p.mu.Lock()
	p.jwksURI = doc.JWKSURI
	p.mu.Unlock()
	// A failed first key fetch is retried when a token needs the keys.
	_ = p.refreshKeys(ctx)
	return nil
}

// refreshKeys fetches the key set; concurrent callers share one fetch.
func (p *jwtProvider) refreshKeys(ctx context.Context) error {
	p.mu.Lock()
	if ch := p.refreshCh; ch != nil {
		p.mu.Unlock()
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ch := make(chan struct{})
	p.refreshCh = ch
	uri := p.jwksURI
	p.mu.Unlock()

	var set jose.JSONWebKeySet
	err := p.get(ctx, uri, &set)
	p.mu.Lock()
	if err == nil {
		p.keys = set.Keys
	}
	p.refreshCh = nil
	p.mu.Unlock()
	close(ch)
	if err != nil {
		return fmt.Errorf("fetching keys %w", err)
	}
	return nil
}

func (p *jwtProvider) cachedKeys() []jose.JSONWebKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys
}

// verify checks the signature against the cached keys, and against a
// fresh key set if none matched.
func (p *jwtProvider) verify(ctx context.Context, jws *jose.JSONWebSignature) ([]byte, error) {
	kid := jws.Signatures[0].Header.KeyID
	try := func(keys []jose.JSONWebKey) ([]byte, bool) {
		for i := range keys {
			if kid != "" && keys[i].KeyID != kid {
				continue
			}
			if out, err := jws.Verify(&keys[i]); err == nil {
				return out, true
			}
		}
		return nil, false
	}
	if out, ok := try(p.cachedKeys()); ok {
		return out, nil
	}
	if err := p.refreshKeys(ctx); err != nil {
		return nil, fmt.Errorf("failed to verify signature: %w", err)
	}
	if out, ok := try(p.cachedKeys()); ok {
		return out, nil
	}
	return nil, errors.New("failed to verify signature: failed to verify id token signature")
}

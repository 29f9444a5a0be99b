package server

import (
	"crypto/tls"
	"crypto/x509"
	"sync"

	"platd/security"
)

// clientRoots is the pool client certificates are verified against: the
// data directory's CA and the bundle of --client-ca-file, re-read when the
// file changes, as upstream reloads it: a CA taken out of the file stops
// authenticating without a restart. The pool is rebuilt only when the
// file's bundle changes, so its pointer identifies the bundle (the x509
// authenticator's cache relies on that).
type clientRoots struct {
	ca   *x509.Certificate
	file *security.CAFile // nil without --client-ca-file

	mu   sync.Mutex
	from *x509.CertPool
	pool *x509.CertPool
}

// Pool returns the current pool; the caller must not modify it.
func (c *clientRoots) Pool() *x509.CertPool {
	var fp *x509.CertPool
	if c.file != nil {
		fp = c.file.Pool()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool == nil || fp != c.from {
		p := x509.NewCertPool()
		if fp != nil {
			p = fp.Clone()
		}
		p.AddCert(c.ca)
		c.pool, c.from = p, fp
	}
	return c.pool
}

// offerClientCAs makes each TLS handshake offer the current client CAs,
// and the request-header proxy's CA when one is configured: clients pick
// their certificate by the offered list, so a CA missing from it would
// never see its certificates sent. Verification stays with the
// authenticators, each against its own pool.
func offerClientCAs(cfg *tls.Config, roots *clientRoots, proxyCA *security.CAFile) {
	var mu sync.Mutex
	var fromRoots, fromProxy *x509.CertPool
	var offered *tls.Config
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pool := roots.Pool()
		var proxy *x509.CertPool
		if proxyCA != nil {
			proxy = proxyCA.Pool()
		}
		mu.Lock()
		defer mu.Unlock()
		if offered == nil || pool != fromRoots || proxy != fromProxy {
			list := pool
			if proxy != nil {
				list = pool.Clone()
				list.AppendCertsFromPEM(proxyCA.PEM())
			}
			offered = cfg.Clone()
			offered.GetConfigForClient = nil
			offered.ClientCAs = list
			fromRoots, fromProxy = pool, proxy
		}
		return offered, nil
	}
}

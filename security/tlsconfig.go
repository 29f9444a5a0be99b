package security

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"platd/config"
)

// certRecheckInterval bounds how often a handshake stats the serving
// certificate files: often enough that a renewed certificate is served
// within a second, rare enough that a handshake storm costs no I/O.
const certRecheckInterval = time.Second

// TLSPolicy is what the handshake accepts: the zero value is TLS 1.2 or
// newer with config.DefaultTLSCipherSuites.
type TLSPolicy struct {
	// MinVersion is a tls.Version* constant; 0 means TLS 1.2.
	MinVersion uint16
	// CipherSuites are the TLS 1.0-1.2 suites offered, in Go's preference
	// order whatever their order here; nil means the defaults.
	CipherSuites []uint16
}

// ServerTLSConfig returns the serving TLS configuration: versions and
// suites of p, ALPN h2 and http/1.1, and the certificate pair from
// certFile and keyFile, re-read when either file's modification time or
// size changes. With clientCAs set, client certificates are requested but
// not verified in the handshake: the x509 authenticator verifies them, so
// a bad certificate is an HTTP 401 rather than a TLS alert. The pair must
// load now.
func ServerTLSConfig(certFile, keyFile string, clientCAs *x509.CertPool, p TLSPolicy) (*tls.Config, error) {
	r, err := newCertReloader(certFile, keyFile, certRecheckInterval)
	if err != nil {
		return nil, err
	}
	if p.MinVersion == 0 {
		p.MinVersion = tls.VersionTLS12
	}
	if p.CipherSuites == nil {
		p.CipherSuites = config.DefaultTLSCipherSuites(p.MinVersion)
	}
	if err := http2SuiteFor(r.cert, p); err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		MinVersion:   p.MinVersion,
		CipherSuites: slices.Clone(p.CipherSuites),
		// Full-size records from the first byte: large list bodies are the
		// common bulk transfer and small ones fit one record either way.
		DynamicRecordSizingDisabled: true,
		NextProtos:                  []string{"h2", "http/1.1"},
		GetCertificate:              r.getCertificate,
	}
	if clientCAs != nil {
		cfg.ClientAuth = tls.RequestClientCert
		cfg.ClientCAs = clientCAs
	}
	return cfg, nil
}

// http2SuiteFor checks that below TLS 1.3 the suites hold the one HTTP/2
// needs (RFC 7540 §9.2.2) for the serving key's type: an ECDHE_RSA suite
// cannot be negotiated with an ECDSA key, so listing only that one lets
// the server start yet leaves TLS 1.2 clients without HTTP/2 (config
// checks that one of the two is listed; only here is the key known). A
// key of another type later renewed in place is not checked again.
func http2SuiteFor(cert *tls.Certificate, p TLSPolicy) error {
	if p.MinVersion >= tls.VersionTLS13 || cert == nil {
		return nil
	}
	signer, ok := cert.PrivateKey.(crypto.Signer)
	if !ok {
		return nil
	}
	var kind string
	var need uint16
	switch signer.Public().(type) {
	case *rsa.PublicKey:
		kind, need = "RSA", tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
	case *ecdsa.PublicKey, ed25519.PublicKey:
		kind, need = "ECDSA", tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	default:
		return nil
	}
	if slices.Contains(p.CipherSuites, need) {
		return nil
	}
	return fmt.Errorf("%w: --tls-cipher-suites: the serving key is %s, and HTTP/2 below TLS 1.3 needs %s in the list", config.ErrInvalid, kind, tls.CipherSuiteName(need))
}

// LoadCertPool returns a pool of every certificate in the PEM file. A file
// without certificates is an error wrapping ErrNoCertificates.
func LoadCertPool(pemFile string) (*x509.CertPool, error) {
	data, err := os.ReadFile(pemFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: %w", pemFile, ErrNoCertificates)
	}
	return pool, nil
}

// certReloader serves a certificate pair and reloads it when the files
// change. Safe for concurrent use.
type certReloader struct {
	certFile, keyFile string
	interval          time.Duration

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]fileStamp
	checked time.Time
}

// fileStamp is the cheap change signature of a file.
type fileStamp struct {
	mod  time.Time
	size int64
}

func (s fileStamp) same(o fileStamp) bool { return s.mod.Equal(o.mod) && s.size == o.size }

func newCertReloader(certFile, keyFile string, interval time.Duration) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, interval: interval}
	stamp, err := r.stat()
	if err != nil {
		return nil, err
	}
	if err := r.load(stamp); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) stat() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, p := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(p)
		if err != nil {
			return out, err
		}
		out[i] = fileStamp{mod: fi.ModTime(), size: fi.Size()}
	}
	return out, nil
}

// load reads the pair; the caller holds mu or owns r exclusively.
func (r *certReloader) load(stamp [2]fileStamp) error {
	pair, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeyMaterial, err)
	}
	r.cert = &pair
	r.stamp = stamp
	r.checked = time.Now()
	return nil
}

func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.current(), nil
}

// current returns the pair in force, re-reading the files when they
// changed and interval has passed since the last look.
func (r *certReloader) current() *tls.Certificate {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < r.interval {
		return r.cert
	}
	r.checked = time.Now()
	stamp, err := r.stat()
	if err != nil || (stamp[0].same(r.stamp[0]) && stamp[1].same(r.stamp[1])) {
		return r.cert
	}
	if err := r.load(stamp); err != nil {
		// A half-renewed pair keeps the old certificate in service; the
		// next check retries.
		slog.Warn("certificate reload failed", "file", r.certFile, "err", err)
	} else {
		slog.Info("certificate reloaded", "file", r.certFile)
	}
	return r.cert
}

// CertPair is a certificate and key file pair re-read when either file's
// modification time or size changes, looked at no more than once a
// second. A pair that does not load (half renewed) is logged and the
// previous one stays in force. Safe for concurrent use.
type CertPair struct{ r *certReloader }

// LoadCertPair reads the pair at certFile and keyFile, which must load
// now (else an error wrapping ErrKeyMaterial).
func LoadCertPair(certFile, keyFile string) (*CertPair, error) {
	r, err := newCertReloader(certFile, keyFile, certRecheckInterval)
	if err != nil {
		return nil, err
	}
	return &CertPair{r: r}, nil
}

// Current returns the pair in force: the same pointer until the files
// change. The caller must not modify it.
func (p *CertPair) Current() *tls.Certificate { return p.r.current() }

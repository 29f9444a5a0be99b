package security

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"platd/config"
)

// CredentialIDKey is the user-extra key under which authenticators record
// an identifier of the credential used.
func CredentialIDKey(b config.Brand) string {
	return "authentication." + b.LongDomain + "/credential-id"
}

// NewDynamicX509Authenticator authenticates TLS client certificates. The
// leaf is verified for client authentication against the pool roots
// returns, asked on every request so that a reloaded client CA takes effect
// at once, with the rest of the presented chain as intermediates. The
// subject CN becomes the user name (an empty CN is ok=false, no error), the
// subject O values the groups, and the leaf's SHA-256 the credential-id
// extra. A failed verification is an error wrapping ErrCertificateVerify. A
// nil pool from roots disables the authenticator (ok=false); a pool roots
// returns must not be modified.
func NewDynamicX509Authenticator(roots func() *x509.CertPool, b config.Brand) Authenticator {
	return &x509Auth{roots: roots, extraKey: CredentialIDKey(b), now: time.Now,
		verified: map[[sha256.Size]byte]verifiedChain{}, byLeaf: map[*x509.Certificate][sha256.Size]byte{}}
}

// verifiedChainTTL is how long a successful chain verification is reused.
// Verifying an ECDSA chain costs more than serving a small request, and a
// client sends many requests over one certificate; a short TTL bounds how
// long a chain keeps working after its CA pool object is replaced (a new
// pool never matches old entries anyway).
const verifiedChainTTL = time.Minute

// maxVerifiedChains bounds the cache; when full it is emptied, which costs
// only re-verification.
const maxVerifiedChains = 4096

// verifiedChain is a cached successful verification.
type verifiedChain struct {
	pool  *x509.CertPool
	until time.Time
	// leaf is the parsed certificate the entry was made for. A TLS
	// connection presents the same parsed certificate on every request, so
	// a pointer match skips hashing the chain.
	leaf *x509.Certificate
	n    int
}

type x509Auth struct {
	roots    func() *x509.CertPool
	extraKey string
	now      func() time.Time

	mu       sync.Mutex
	verified map[[sha256.Size]byte]verifiedChain
	// byLeaf indexes verified by the parsed leaf of the connection that
	// last used the entry.
	byLeaf map[*x509.Certificate][sha256.Size]byte
}

// chainKey identifies a presented chain.
func chainKey(certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	for _, c := range certs {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(c.Raw)))
		h.Write(n[:])
		h.Write(c.Raw)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// verify checks the chain against pool, reusing a recent success.
func (a *x509Auth) verify(pool *x509.CertPool, certs []*x509.Certificate) error {
	now := a.now()
	a.mu.Lock()
	key, known := a.byLeaf[certs[0]]
	if v, ok := a.verified[key]; known && ok && v.leaf == certs[0] && v.n == len(certs) && v.pool == pool && now.Before(v.until) {
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	key = chainKey(certs)
	a.mu.Lock()
	v, ok := a.verified[key]
	if ok && v.pool == pool && now.Before(v.until) {
		a.byLeaf[certs[0]] = key
		v.leaf, v.n = certs[0], len(certs)
		a.verified[key] = v
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	leaf := certs[0]
	opts := x509.VerifyOptions{
		Roots:       pool,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		CurrentTime: now,
	}
	if len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := leaf.Verify(opts)
	if err != nil {
		return err
	}
	until := now.Add(verifiedChainTTL)
	for _, c := range chains[0] {
		if c.NotAfter.Before(until) {
			until = c.NotAfter
		}
	}
	a.mu.Lock()
	if len(a.verified) >= maxVerifiedChains || len(a.byLeaf) >= maxVerifiedChains {
		clear(a.verified)
		clear(a.byLeaf)
	}
	a.verified[key] = verifiedChain{pool: pool, until: until, leaf: certs[0], n: len(certs)}
	a.byLeaf[certs[0]] = key
	a.mu.Unlock()
	return nil
}

func (a *x509Auth) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	pool := a.roots()
	if pool == nil {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	if err := a.verify(pool, r.TLS.PeerCertificates); err != nil {
		return nil, false, fmt.Errorf("%w: verifying certificate %s failed: %w", ErrCertificateVerify, certIdentifier(leaf), err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, false, nil
	}
	sum := sha256.Sum256(leaf.Raw)
	return &User{
		Name:   leaf.Subject.CommonName,
		Groups: append([]string(nil), leaf.Subject.Organization...),
		Extra:  map[string][]string{a.extraKey: {"X509SHA256=" + hex.EncodeToString(sum[:])}},
	}, true, nil
}

// certIdentifier names a certificate in logs by serial and key ids.
func certIdentifier(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%d, SKID=%s, AKID=%s", c.SerialNumber, colonHex(c.SubjectKeyId), colonHex(c.AuthorityKeyId))
}

func colonHex(b []byte) string {
	if len(b) == 0 {
		return "<none>"
	}
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = fmt.Sprintf("%02X", v)
	}
	return strings.Join(parts, ":")
}

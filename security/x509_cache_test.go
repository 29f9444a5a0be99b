package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"platd/config"
)

// TestX509VerificationCache checks that a cached verification is reused
// only with the same pool and within its lifetime and the certificate's.
func TestX509VerificationCache(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "client-ca")
	b, _ := config.LookupBrand("plat")
	leaf := ca.leaf(t, leafOpts{cn: "alice", notAfter: time.Now().Add(2 * verifiedChainTTL)})
	clock := time.Now()
	a := NewDynamicX509Authenticator(ca.pool, b).(*x509Auth)
	a.now = func() time.Time { return clock }
	req := httptest.NewRequest("GET", "/", nil)
	req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}

	if u, ok, err := a.AuthenticateRequest(req); err != nil || !ok || u.Name != "alice" {
		t.Fatalf("first: %v %v %v", u, ok, err)
	}
	if len(a.verified) != 1 {
		t.Fatalf("cache has %d entries, want 1", len(a.verified))
	}
	// Within the TTL the cached result serves.
	clock = clock.Add(verifiedChainTTL / 2)
	if _, ok, err := a.AuthenticateRequest(req); err != nil || !ok {
		t.Fatalf("cached: %v %v", ok, err)
	}
	// Past the certificate's expiry the chain is verified again and fails,
	// even though an entry exists.
	clock = clock.Add(3 * verifiedChainTTL)
	if _, _, err := a.AuthenticateRequest(req); !errors.Is(err, ErrCertificateVerify) {
		t.Fatalf("expired leaf accepted: %v", err)
	}
	// A different pool never matches the cached entry.
	other := newTestCA(t, "other-ca")
	a2 := NewDynamicX509Authenticator(func() *x509.CertPool { return other.pool() }, b).(*x509Auth)
	a2.verified[chainKey([]*x509.Certificate{leaf})] = verifiedChain{pool: ca.pool(), until: time.Now().Add(time.Hour)}
	if _, _, err := a2.AuthenticateRequest(req); !errors.Is(err, ErrCertificateVerify) {
		t.Fatalf("entry of another pool reused: %v", err)
	}
}

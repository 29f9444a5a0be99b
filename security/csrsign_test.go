package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"net"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

func signingRequest(t *testing.T, tmpl *x509.CertificateRequest) *x509.CertificateRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func issuedCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a certificate PEM: %q", b)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSignRequest(t *testing.T) {
	t.Parallel()
	ca, err := EnsureCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("spiffe://example/u")
	req := signingRequest(t, &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: "alice", Organization: []string{"devs"}},
		DNSNames: []string{"a.example"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}, EmailAddresses: []string{"a@example"}, URIs: []*url.URL{u},
		// A request's own extensions are not carried over.
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 2, 3, 4}, Value: []byte{5, 0}}},
	})
	now := time.Now().Truncate(time.Second)

	certPEM, err := ca.SignRequest(req, []string{"signing", "digital signature", "key encipherment", "s/mime", "email protection", "client auth", "server auth"}, 24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	c := issuedCert(t, certPEM)
	if c.Subject.CommonName != "alice" || !reflect.DeepEqual(c.Subject.Organization, []string{"devs"}) ||
		!reflect.DeepEqual(c.DNSNames, req.DNSNames) || !c.IPAddresses[0].Equal(req.IPAddresses[0]) ||
		!reflect.DeepEqual(c.EmailAddresses, req.EmailAddresses) || c.URIs[0].String() != u.String() {
		t.Errorf("names not carried over: %+v", c)
	}
	if c.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment {
		t.Errorf("key usage %b", c.KeyUsage)
	}
	if want := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageEmailProtection}; !reflect.DeepEqual(c.ExtKeyUsage, want) {
		t.Errorf("extended key usage %v, want %v (sorted, once each)", c.ExtKeyUsage, want)
	}
	if c.IsCA || !c.BasicConstraintsValid {
		t.Errorf("IsCA %v, basic constraints %v", c.IsCA, c.BasicConstraintsValid)
	}
	for _, e := range c.Extensions {
		if e.Id.Equal(asn1.ObjectIdentifier{1, 2, 3, 4}) {
			t.Error("the request's extension was carried over")
		}
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.CertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("does not verify against the CA: %v", err)
	}

	// Validity: backdated start; a long-lived end backdated too, a short
	// one not; never past the CA's end.
	caEnd := ca.Certificate().NotAfter
	for _, tc := range []struct {
		ttl       time.Duration
		notBefore time.Time
		notAfter  time.Time
	}{
		{24 * time.Hour, now.Add(-5 * time.Minute), now.Add(24*time.Hour - 5*time.Minute)},
		{8 * time.Hour, now.Add(-5 * time.Minute), now.Add(8*time.Hour - 5*time.Minute)},
		{time.Hour, now.Add(-5 * time.Minute), now.Add(time.Hour)},
		{100 * 365 * 24 * time.Hour, now.Add(-5 * time.Minute), caEnd},
	} {
		c := issuedCert(t, must(t)(ca.SignRequest(req, []string{"client auth"}, tc.ttl, now)))
		if !c.NotBefore.Equal(tc.notBefore) || !c.NotAfter.Equal(tc.notAfter.Truncate(time.Second)) {
			t.Errorf("ttl %v: valid %v – %v, want %v – %v", tc.ttl, c.NotBefore, c.NotAfter, tc.notBefore, tc.notAfter)
		}
	}

	for _, tc := range []struct {
		name   string
		req    *x509.CertificateRequest
		usages []string
		now    time.Time
		want   string
	}{
		{"unknown usages", req, []string{"client auth", "bogus", "nope"}, now, `unrecognized usage values: ["bogus" "nope"]`},
		{"a broken signature", tampered(req), []string{"client auth"}, now, "unable to verify certificate request signature: "},
		{"a signer expired long ago", req, []string{"client auth"}, caEnd.Add(time.Hour), "the signer has expired: NotAfter="},
		{"a signer expired just now", req, []string{"client auth"}, caEnd.Add(time.Minute), "refusing to sign a certificate that expired in the past: NotAfter="},
	} {
		if _, err := ca.SignRequest(tc.req, tc.usages, time.Hour, tc.now); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func must(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// tampered is req with a subject its signature does not cover.
func tampered(req *x509.CertificateRequest) *x509.CertificateRequest {
	c := *req
	c.RawTBSCertificateRequest = append([]byte(nil), req.RawTBSCertificateRequest...)
	c.RawTBSCertificateRequest[len(c.RawTBSCertificateRequest)-1] ^= 0xff
	return &c
}

func TestSignerRules(t *testing.T) {
	t.Parallel()
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	ip := []net.IP{net.ParseIP("10.0.0.1")}
	rsaServing := []string{"digital signature", "key encipherment", "server auth"}
	rsaClient := []string{"key encipherment", "digital signature", "client auth"}
	for _, tc := range []struct {
		name   string
		rule   func(*x509.CertificateRequest, []string) error
		req    x509.CertificateRequest
		usages []string
		want   string
	}{
		{"serving", KubeletServingRequest, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, rsaServing, ""},
		{"serving without key encipherment", KubeletServingRequest, x509.CertificateRequest{Subject: node, IPAddresses: ip}, []string{"server auth", "digital signature"}, ""},
		{"serving outside system:nodes", KubeletServingRequest, x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes", "x"}}, DNSNames: []string{"n1"}}, rsaServing, "subject organization is not system:nodes"},
		{"serving without names", KubeletServingRequest, x509.CertificateRequest{Subject: node}, rsaServing, "DNS or IP subjectAltName is required"},
		{"serving with an email", KubeletServingRequest, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}, EmailAddresses: []string{"a@b"}}, rsaServing, "Email subjectAltNames are not allowed"},
		{"serving with client usages", KubeletServingRequest, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, rsaClient, "usages did not match [digital signature key encipherment server auth]"},
		{"serving for another user", KubeletServingRequest, x509.CertificateRequest{Subject: pkix.Name{CommonName: "n1", Organization: []string{"system:nodes"}}, DNSNames: []string{"n1"}}, rsaServing, "subject common name does not begin with system:node:"},
		{"kubelet client", KubeletClientRequest, x509.CertificateRequest{Subject: node}, rsaClient, ""},
		{"kubelet client with an IP", KubeletClientRequest, x509.CertificateRequest{Subject: node, IPAddresses: ip}, rsaClient, "IP subjectAltNames are not allowed"},
		{"kubelet client with a DNS name", KubeletClientRequest, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, rsaClient, "DNS subjectAltNames are not allowed"},
		{"kubelet client with extra usages", KubeletClientRequest, x509.CertificateRequest{Subject: node}, append(rsaClient, "server auth"), "usages did not match [client auth digital signature key encipherment]"},
		{"kubelet client for a user", KubeletClientRequest, x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"system:nodes"}}}, rsaClient, "subject common name does not begin with system:node:"},
		{"API client", ClientRequest, x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, []string{"client auth"}, ""},
		{"API client with the optional usages", ClientRequest, x509.CertificateRequest{}, rsaClient, ""},
		{"API client serving", ClientRequest, x509.CertificateRequest{}, []string{"client auth", "server auth"}, "invalid usage for client certificate: server auth"},
		{"API client without client auth", ClientRequest, x509.CertificateRequest{}, []string{"digital signature"}, "missing required usage for client certificate: client auth"},
	} {
		err := tc.rule(&tc.req, tc.usages)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

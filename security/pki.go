package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Validity policy of the self-managed key material.
const (
	// caValidity is long so that kubeconfigs handed out keep working for
	// the life of a typical installation.
	caValidity = 10 * 365 * 24 * time.Hour
	// leafValidity is short enough that a leaked leaf ages out, long
	// enough that renewal at start-up is rare.
	leafValidity = 365 * 24 * time.Hour
	// renewBefore reissues a leaf this long before it expires, so a server
	// restarted now does not serve a certificate that dies next week.
	renewBefore = 30 * 24 * time.Hour
	// clockSkew backdates NotBefore so clients with a slightly slow clock
	// accept a certificate issued a moment ago.
	clockSkew = time.Hour
)

// CA file names inside the directory given to EnsureCA.
const (
	caCertName = "ca.crt"
	caKeyName  = CAKeyName
)

// CAKeyName is the CA's private key file inside the directory given to
// EnsureCA.
const CAKeyName = "ca.key"

// PEM block types written and read.
const (
	pemCertificate = "CERTIFICATE"
	pemECKey       = "EC PRIVATE KEY"
	pemPKCS8Key    = "PRIVATE KEY"
)

// serialLimit bounds random serial numbers to 127 bits, which keeps them
// positive and within the 20 octets RFC 5280 allows.
var serialLimit = new(big.Int).Lsh(big.NewInt(1), 127)

// CA is the server's own certificate authority. It is immutable after
// EnsureCA and safe for concurrent use.
type CA struct {
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	certPEM  []byte
	certFile string
}

// EnsureCA loads the CA from dir/ca.crt and dir/ca.key, or creates both (a
// self-signed ECDSA P-256 CA valid for ten years) when neither exists. When
// only one exists, or they do not form a valid CA, it fails with an error
// wrapping ErrKeyMaterial rather than replacing a CA clients may trust.
func EnsureCA(dir string) (*CA, error) {
	certFile := filepath.Join(dir, caCertName)
	keyFile := filepath.Join(dir, caKeyName)
	certExists, err := exists(certFile)
	if err != nil {
		return nil, err
	}
	keyExists, err := exists(keyFile)
	if err != nil {
		return nil, err
	}
	switch {
	case certExists && keyExists:
		return loadCA(certFile, keyFile)
	case certExists || keyExists:
		return nil, fmt.Errorf("%w: only one of %s and %s exists", ErrKeyMaterial, certFile, keyFile)
	}
	return createCA(certFile, keyFile)
}

// LoadCA loads the CA EnsureCA made in dir, and never makes one: a tool
// signing for a running platd must use its CA. A missing CA is an error
// wrapping ErrKeyMaterial.
func LoadCA(dir string) (*CA, error) {
	certFile := filepath.Join(dir, caCertName)
	keyFile := filepath.Join(dir, caKeyName)
	for _, f := range []string{certFile, keyFile} {
		ok, err := exists(f)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s does not exist", ErrKeyMaterial, f)
		}
	}
	return loadCA(certFile, keyFile)
}

// Certificate returns the CA certificate; the caller must not modify it.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// CertPEM returns the PEM encoding of the CA certificate; the caller must
// not modify the slice.
func (ca *CA) CertPEM() []byte { return ca.certPEM }

// CertFile returns the path of the CA certificate file.
func (ca *CA) CertFile() string { return ca.certFile }

// CertPool returns a new pool holding only the CA certificate.
func (ca *CA) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

func createCA(certFile, keyFile string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "platd-ca@" + strconv.FormatInt(now.Unix(), 10)},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := encodeCert(der)
	// Key first: a crash before the certificate is written leaves a lone
	// key, which EnsureCA reports instead of silently minting a new CA.
	if err := writeFileAtomic(keyFile, keyPEM, privateFileMode); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(certFile, certPEM, publicFileMode); err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, certPEM: certPEM, certFile: certFile}, nil
}

func loadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%w: %s is not a CA certificate", ErrKeyMaterial, certFile)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("%w: %s does not match %s", ErrKeyMaterial, keyFile, certFile)
	}
	return &CA{cert: cert, key: key, certPEM: certPEM, certFile: certFile}, nil
}

// issue signs a fresh ECDSA P-256 leaf for tmpl's subject, usages and SANs
// and returns the certificate and key PEM.
func (ca *CA) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if tmpl.SerialNumber, err = randomSerial(); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.NotBefore = now.Add(-clockSkew)
	tmpl.NotAfter = now.Add(leafValidity)
	if tmpl.NotAfter.After(ca.cert.NotAfter) {
		tmpl.NotAfter = ca.cert.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return encodeCert(der), keyPEM, nil
}

func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, serialLimit)
	if err != nil {
		return nil, err
	}
	return n.Add(n, big.NewInt(1)), nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemECKey, Bytes: der}), nil
}

// parseCertPEM returns the first certificate of a PEM bundle.
func parseCertPEM(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, ErrNoCertificates
		}
		if block.Type == pemCertificate {
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrKeyMaterial, err)
			}
			return c, nil
		}
	}
}

// parseKeyPEM returns the first ECDSA private key of a PEM file, in SEC 1
// or PKCS #8 form.
func parseKeyPEM(data []byte) (*ecdsa.PrivateKey, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%w: no private key found", ErrKeyMaterial)
		}
		switch block.Type {
		case pemECKey:
			k, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrKeyMaterial, err)
			}
			return k, nil
		case pemPKCS8Key:
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrKeyMaterial, err)
			}
			ec, ok := k.(*ecdsa.PrivateKey)
			if !ok {
				return nil, fmt.Errorf("%w: private key is %T, want ECDSA", ErrKeyMaterial, k)
			}
			return ec, nil
		}
	}
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

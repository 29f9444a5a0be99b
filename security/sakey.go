package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"os"
)

// ServiceAccountKeyName is the file of the generated service-account
// signing key inside the cert directory. It is its own key, never the
// serving key, so that rotating the serving certificate does not revoke
// every token.
const ServiceAccountKeyName = "sa.key"

// EnsureServiceAccountKey loads the ECDSA P-256 signing key at path, or
// creates it. P-256 keeps a first start fast (an RSA key takes a noticeable
// fraction of a second to generate); tokens are then ES256.
func EnsureServiceAccountKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		k, err := parseKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("service-account key %s: %w", path, err)
		}
		return k, nil
	}
	if !os.IsNotExist(err) {
		return nil, fmt.Errorf("reading service-account key: %w", err)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating service-account key: %w", err)
	}
	pemBytes, err := encodeKey(k)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(path, pemBytes, privateFileMode); err != nil {
		return nil, fmt.Errorf("writing service-account key %s: %w", path, err)
	}
	return k, nil
}

package config

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultServiceAccountIssuer is the issuer of service-account tokens when
// --service-account-issuer is not given: the in-cluster name of the API
// server's Service, which is what upstream installers set.
func DefaultServiceAccountIssuer(b Brand) string {
	return "https://" + b.APIServiceName + ".default.svc.cluster.local"
}

// Bounds of --service-account-max-token-expiration, as upstream checks them.
const (
	minMaxTokenExpiration = time.Hour
	maxMaxTokenExpiration = (1 << 32) * time.Second
)

// ServiceAccountOptions are the service-account token flags. The zero
// value is upstream's defaults with the generated signing key.
type ServiceAccountOptions struct {
	// Issuers are --service-account-issuer in order; the first signs new
	// tokens, all are accepted. Validate fills in DefaultServiceAccountIssuer
	// when empty.
	Issuers []string
	// KeyFiles are --service-account-key-file: PEM files of public or
	// private RSA/ECDSA keys that verify tokens.
	KeyFiles []string
	// SigningKeyFile is --service-account-signing-key-file; empty means the
	// key platd generates in its data directory.
	SigningKeyFile string
	// JWKSURI overrides the jwks_uri of the issuer discovery document.
	JWKSURI string
	// MaxTokenExpiration caps requested token lifetimes; 0 is no cap.
	MaxTokenExpiration time.Duration
	// APIAudiences are --api-audiences; empty means the issuers.
	APIAudiences []string
	// NoLookup is --service-account-lookup=false: legacy tokens are not
	// checked against their secret and service account. Negated so that
	// the zero value is upstream's default.
	NoLookup bool
	// NoExtendTokenExpiration is --service-account-extend-token-expiration=false:
	// pod-bound tokens requested for 3607 seconds are not extended to a
	// year. Negated so that the zero value is upstream's default.
	NoExtendTokenExpiration bool

	// VerifyKeys are the public keys of KeyFiles and of SigningKeyFile,
	// filled by Validate.
	VerifyKeys []crypto.PublicKey
	// SigningKey is the private key of SigningKeyFile, filled by Validate;
	// nil means the generated key.
	SigningKey crypto.Signer
}

// validate checks the flags, reads the key files and fills the derived
// values. Each problem names the flag and, for files, the path.
func (o *ServiceAccountOptions) validate(b Brand) []string {
	var errs []string
	if len(o.Issuers) == 0 {
		o.Issuers = []string{DefaultServiceAccountIssuer(b)}
	}
	seen := map[string]bool{}
	for _, iss := range o.Issuers {
		if iss == "" {
			errs = append(errs, "--service-account-issuer must not be empty")
			continue
		}
		if seen[iss] {
			errs = append(errs, fmt.Sprintf("--service-account-issuer %q is already specified", iss))
		}
		seen[iss] = true
		if strings.Contains(iss, ":") {
			if _, err := url.Parse(iss); err != nil {
				errs = append(errs, fmt.Sprintf("--service-account-issuer contained a ':' but was not a valid URL: %v", err))
			}
		}
	}
	if o.JWKSURI != "" {
		if u, err := url.Parse(o.JWKSURI); err != nil || u.Scheme != "https" {
			errs = append(errs, fmt.Sprintf("--service-account-jwks-uri requires https scheme, parsed as: %q", o.JWKSURI))
		}
	}
	if o.MaxTokenExpiration != 0 && (o.MaxTokenExpiration < minMaxTokenExpiration || o.MaxTokenExpiration > maxMaxTokenExpiration) {
		errs = append(errs, "the --service-account-max-token-expiration must be between 1 hour and 2^32 seconds")
	}
	o.VerifyKeys = nil
	o.SigningKey = nil
	if o.SigningKeyFile != "" {
		key, err := readSigningKey(o.SigningKeyFile)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--service-account-signing-key-file %s: %v", o.SigningKeyFile, err))
		} else {
			o.SigningKey = key
			o.VerifyKeys = append(o.VerifyKeys, key.Public())
		}
	}
	for _, f := range o.KeyFiles {
		keys, err := readPublicKeys(f)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--service-account-key-file %s: %v", f, err))
			continue
		}
		o.VerifyKeys = append(o.VerifyKeys, keys...)
	}
	return errs
}

// SignIssuer is the issuer new tokens carry.
func (o *ServiceAccountOptions) SignIssuer() string { return o.Issuers[0] }

// AllIssuers are the accepted issuers, the signing one first.
func (o *ServiceAccountOptions) AllIssuers() []string { return slices.Clone(o.Issuers) }

// Audiences are the API audiences: --api-audiences, else the issuers.
func (o *ServiceAccountOptions) Audiences() []string {
	if len(o.APIAudiences) > 0 {
		return slices.Clone(o.APIAudiences)
	}
	return o.AllIssuers()
}

// errNoKey is returned for a PEM file without a usable key.
var errNoKey = errors.New("no RSA or ECDSA key found in the PEM data")

// readSigningKey reads one RSA or ECDSA private key.
func readSigningKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no RSA or ECDSA private key found in the PEM data")
		}
		key, ok, err := parsePrivateBlock(block)
		if err != nil {
			return nil, err
		}
		if ok {
			return key, nil
		}
	}
}

// readPublicKeys reads every RSA or ECDSA key of a PEM file: public keys,
// certificates, and the public half of private keys.
func readPublicKeys(path string) ([]crypto.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var keys []crypto.PublicKey
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if priv, ok, err := parsePrivateBlock(block); err != nil {
			return nil, err
		} else if ok {
			keys = append(keys, priv.Public())
			continue
		}
		pub, err := parsePublicBlock(block)
		if err != nil {
			return nil, err
		}
		if pub != nil {
			keys = append(keys, pub)
		}
	}
	if len(keys) == 0 {
		return nil, errNoKey
	}
	return keys, nil
}

// parsePrivateBlock parses a private key block; ok is false for blocks of
// other types.
func parsePrivateBlock(b *pem.Block) (crypto.Signer, bool, error) {
	var key any
	var err error
	switch b.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("parsing %s block: %w", b.Type, err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return k, true, nil
	case *ecdsa.PrivateKey:
		if err := checkCurve(&k.PublicKey); err != nil {
			return nil, false, err
		}
		return k, true, nil
	}
	return nil, false, fmt.Errorf("%s block holds a %T: only RSA and ECDSA keys are supported", b.Type, key)
}

// parsePublicBlock parses a public key or certificate block; nil for
// blocks of other types.
func parsePublicBlock(b *pem.Block) (crypto.PublicKey, error) {
	var key any
	var err error
	switch b.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(b.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(b.Bytes)
	case "CERTIFICATE":
		var c *x509.Certificate
		if c, err = x509.ParseCertificate(b.Bytes); err == nil {
			key = c.PublicKey
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("parsing %s block: %w", b.Type, err)
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		return k, nil
	case *ecdsa.PublicKey:
		return k, checkCurve(k)
	}
	return nil, fmt.Errorf("%s block holds a %T: only RSA and ECDSA keys are supported", b.Type, key)
}

// checkCurve accepts the curves a JWS algorithm exists for.
func checkCurve(k *ecdsa.PublicKey) error {
	switch k.Curve.Params().BitSize {
	case 256, 384, 521:
		return nil
	}
	return errors.New("unknown private key curve, must be 256, 384, or 521")
}

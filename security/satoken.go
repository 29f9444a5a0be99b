package security

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"platd/config"
	"platd/uuid"
)

// Service-account identity, the same in every brand.
const (
	// ServiceAccountUsernamePrefix starts every service account's user name.
	ServiceAccountUsernamePrefix = "system:serviceaccount:"
	// AllServiceAccountsGroup holds every service account.
	AllServiceAccountsGroup = "system:serviceaccounts"
)

// Token lifetimes of upstream's bound tokens.
const (
	// WarnOnlyTokenSeconds is the lifetime a kubelet asks for when it wants
	// the extension: such tokens live ExtendedTokenSeconds and carry a
	// warnafter claim at this lifetime.
	WarnOnlyTokenSeconds = 3600 + 7
	// ExtendedTokenSeconds is one year.
	ExtendedTokenSeconds = 24 * 365 * 3600
	// tokenLeeway is the clock skew tolerated on exp, nbf and iat, and the
	// time a deleted object's tokens keep working.
	tokenLeeway = time.Minute
)

// ErrServiceAccountUsername is returned by SplitServiceAccountUsername.
var ErrServiceAccountUsername = errors.New("Username must be in the form system:serviceaccount:namespace:name")

// ServiceAccountUsername is the user name of service account ns/name.
func ServiceAccountUsername(ns, name string) string {
	return ServiceAccountUsernamePrefix + ns + ":" + name
}

// ServiceAccountGroups are the groups of a service account in ns.
func ServiceAccountGroups(ns string) []string {
	return []string{AllServiceAccountsGroup, AllServiceAccountsGroup + ":" + ns}
}

// SplitServiceAccountUsername returns the namespace and name of a
// service-account user name.
func SplitServiceAccountUsername(user string) (ns, name string, err error) {
	rest, ok := strings.CutPrefix(user, ServiceAccountUsernamePrefix)
	if !ok {
		return "", "", ErrServiceAccountUsername
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || !isDNSLabel(parts[0]) || !isDNSSubdomain(parts[1]) {
		return "", "", ErrServiceAccountUsername
	}
	return parts[0], parts[1], nil
}

// KeyID is the kid of a verification key: the unpadded base64url SHA-256
// of its PKIX encoding, so every server holding the key agrees on it.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("%w: encoding public key: %v", ErrKeyMaterial, err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// keyAlgorithm is the JWS algorithm of a key: RS256 for RSA, ES256/384/512
// by ECDSA curve.
func keyAlgorithm(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return jose.ES256, nil
		case 384:
			return jose.ES384, nil
		case 521:
			return jose.ES512, nil
		}
		return "", errors.New("unknown private key curve, must be 256, 384, or 521")
	}
	return "", fmt.Errorf("unsupported key type %T: only RSA and ECDSA keys are supported", pub)
}

// TokenSigner signs service-account tokens. It is immutable and safe for
// concurrent use.
type TokenSigner struct {
	brand  config.Brand
	issuer string
	signer jose.Signer
}

// NewTokenSigner returns a signer of tokens from issuer with key.
func NewTokenSigner(b config.Brand, issuer string, key crypto.Signer) (*TokenSigner, error) {
	alg, err := keyAlgorithm(key.Public())
	if err != nil {
		return nil, err
	}
	kid, err := KeyID(key.Public())
	if err != nil {
		return nil, err
	}
	// No typ header: upstream's tokens carry only alg and kid.
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: signer: %v", ErrKeyMaterial, err)
	}
	return &TokenSigner{brand: b, issuer: issuer, signer: s}, nil
}

// Issuer is the iss of bound tokens.
func (s *TokenSigner) Issuer() string { return s.issuer }

// sign serializes claims (a map, so the keys come out sorted) with iss.
func (s *TokenSigner) sign(claims map[string]any, issuer string) (string, error) {
	claims["iss"] = issuer
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := s.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("signing token: %w", err)
	}
	return jws.CompactSerialize()
}

// ObjectRef names an object a token is bound to.
type ObjectRef struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// BoundToken describes a token the TokenRequest API issues.
type BoundToken struct {
	Namespace      string
	ServiceAccount ObjectRef
	// At most one of Pod, Secret and Node (without Pod) binds the token;
	// Node beside Pod is the node the pod runs on.
	Pod, Secret, Node *ObjectRef
	Audiences         []string
	// Lifetime is exp minus iat.
	Lifetime time.Duration
	// WarnAfter, when positive, is when after iat the token counts as
	// stale (the extension's warnafter claim).
	WarnAfter time.Duration
	// Now is iat and nbf.
	Now time.Time
}

// ErrBindOneObject is returned for a token bound to a secret and a pod or
// node at once.
var ErrBindOneObject = errors.New("internal error, token can only be bound to one object type")

// SignBound issues a bound token and returns it with its jti.
func (s *TokenSigner) SignBound(t BoundToken) (token, jti string, err error) {
	if t.Secret != nil && (t.Pod != nil || t.Node != nil) {
		return "", "", ErrBindOneObject
	}
	jti = uuid.New()
	private := map[string]any{
		"namespace":      t.Namespace,
		"serviceaccount": t.ServiceAccount,
	}
	for key, ref := range map[string]*ObjectRef{"pod": t.Pod, "secret": t.Secret, "node": t.Node} {
		if ref != nil {
			private[key] = ref
		}
	}
	now := t.Now.Unix()
	if t.WarnAfter > 0 {
		private["warnafter"] = t.Now.Add(t.WarnAfter).Unix()
	}
	aud := t.Audiences
	if aud == nil {
		aud = []string{}
	}
	claims := map[string]any{
		"aud": aud, "iat": now, "nbf": now, "exp": t.Now.Add(t.Lifetime).Unix(), "jti": jti,
		"sub":              ServiceAccountUsername(t.Namespace, t.ServiceAccount.Name),
		s.brand.LongDomain: private,
	}
	token, err = s.sign(claims, s.issuer)
	return token, jti, err
}

// LegacyToken describes a secret-based token.
type LegacyToken struct {
	Namespace, ServiceAccountName, ServiceAccountUID, SecretName string
}

// SignLegacy issues a secret-based token: no expiry, no audience, the
// brand's legacy issuer.
func (s *TokenSigner) SignLegacy(t LegacyToken) (string, error) {
	p := legacyClaimPrefix(s.brand)
	claims := map[string]any{
		"sub":                      ServiceAccountUsername(t.Namespace, t.ServiceAccountName),
		p + "namespace":            t.Namespace,
		p + "secret.name":          t.SecretName,
		p + "service-account.name": t.ServiceAccountName,
		p + "service-account.uid":  t.ServiceAccountUID,
	}
	return s.sign(claims, s.brand.LegacyTokenIssuer)
}

// legacyClaimPrefix starts the private claim keys of legacy tokens.
func legacyClaimPrefix(b config.Brand) string { return b.LongDomain + "/serviceaccount/" }

// isDNSLabel reports an RFC 1123 label: lower-case alphanumerics and '-',
// starting and ending alphanumeric, at most 63 characters.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports an RFC 1123 subdomain: dot-separated labels, at
// most 253 characters.
func isDNSSubdomain(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !isDNSLabel(l) {
			return false
		}
	}
	return true
}

package security

import "errors"

// Sentinel errors of the security package. Callers test with errors.Is; the
// returned errors wrap these with detail.
var (
	// ErrInvalidBearerToken is returned when a bearer token was presented
	// but no token authenticator accepted it. Its text is the upstream one.
	ErrInvalidBearerToken = errors.New("invalid bearer token")
	// ErrCertificateVerify is wrapped when a client certificate fails
	// verification against the client CA pool.
	ErrCertificateVerify = errors.New("client certificate verification failed")
	// ErrKeyMaterial is wrapped when a key or certificate file cannot be
	// loaded, parsed or does not match its counterpart.
	ErrKeyMaterial = errors.New("invalid key material")
	// ErrNoCertificates is wrapped when a PEM bundle holds no certificate.
	ErrNoCertificates = errors.New("no certificates found")
	// ErrKubeconfig is wrapped when a Kubeconfig value is incomplete.
	ErrKubeconfig = errors.New("invalid kubeconfig")
)

package config

// Controllers of bootstrap tokens, upstream's names. They run by default:
// without a bootstrap token secret they have nothing to do.
const (
	// ControllerBootstrapSigner signs the public cluster-info ConfigMap
	// with each token that has the signing usage.
	ControllerBootstrapSigner = "bootstrap-signer-controller"
	// ControllerTokenCleaner deletes bootstrap token secrets once they
	// expire.
	ControllerTokenCleaner = "token-cleaner-controller"
)

// EnableBootstrapTokenAuthUsage describes --enable-bootstrap-token-auth.
const EnableBootstrapTokenAuthUsage = "let bootstrap tokens (secrets of the bootstrap token type named bootstrap-token-<id> in the system namespace) authenticate as system:bootstrap:<id>"

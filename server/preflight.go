package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"slices"

	"platd/config"
)

// preflighted is what the files named by flags hold, read before the
// data directory is touched.
type preflighted struct {
	tokens []config.Token
	// clientCAs holds --client-ca-file; New adds the data directory's CA.
	clientCAs *x509.CertPool
	remote    remoteAuth
}

// preflight reads and checks every file a flag names that New has not
// read yet. What cannot be built before the store opens (the authorizer
// chain) has its files read here too, and again when it is built: the
// files are small, and a failure then leaves nothing behind.
func (s *Server) preflight() (preflighted, error) {
	o := s.opts
	var p preflighted
	p.clientCAs = x509.NewCertPool()
	if o.ClientCAFile != "" {
		pem, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return p, fmt.Errorf("%w: --client-ca-file: %w", config.ErrInvalid, err)
		}
		if !p.clientCAs.AppendCertsFromPEM(pem) {
			return p, fmt.Errorf("%w: --client-ca-file %s holds no PEM certificate", config.ErrInvalid, o.ClientCAFile)
		}
	}
	if o.TLSCertFile != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSPrivateKeyFile); err != nil {
			return p, fmt.Errorf("%w: --tls-cert-file, --tls-private-key-file: %w", config.ErrInvalid, err)
		}
	}
	if o.TokenAuthFile != "" {
		var err error
		if p.tokens, err = config.ParseTokenFile(o.TokenAuthFile); err != nil {
			return p, fmt.Errorf("%w: --token-auth-file: %w", config.ErrInvalid, err)
		}
	}
	var err error
	if p.remote, err = remoteAuthenticators(o); err != nil {
		return p, err
	}
	return p, s.checkAuthzFiles()
}

// checkAuthzFiles reads the authorizers' files: the chain itself is built
// once the store is open, as RBAC and Node read it.
func (s *Server) checkAuthzFiles() error {
	o := s.opts
	if path := o.AuthorizationConfigFile; path != "" {
		c, _, err := s.loadAuthzConfig(path)
		if err != nil {
			return fmt.Errorf("%w: --authorization-config: %w", config.ErrInvalid, err)
		}
		for _, a := range c.Authorizers {
			if a.Type != config.ModeWebhook || a.Webhook == nil {
				continue
			}
			if _, err := webhookClient(a.Webhook.ConnectionInfo); err != nil {
				return fmt.Errorf("--authorization-config: %w: authorizer %q: %w", config.ErrInvalid, a.Name, err)
			}
		}
		return nil
	}
	if slices.Contains(o.AuthorizationModes, config.ModeWebhook) {
		if _, err := config.LoadKubeconfigClient(o.AuthorizationWebhook.ConfigFile); err != nil {
			return fmt.Errorf("%w: --authorization-webhook-config-file: %w", config.ErrInvalid, err)
		}
	}
	return nil
}

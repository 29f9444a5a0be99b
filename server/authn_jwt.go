package server

import (
	"fmt"

	"platd/config"
	"platd/security"
	servercel "platd/server/cel"
)

// jwtAuthenticators builds the JWT authenticators of --authentication-config
// or the --oidc-* flags (nil when neither is set). Invalid content stops
// platd with exit code 2.
func (s *Server) jwtAuthenticators() (*security.JWTAuthenticators, error) {
	o := s.opts
	// No JWT authenticator may claim a service-account issuer.
	opts := security.JWTOptions{Brand: o.Brand, CELLibraries: servercel.Libraries(), DisallowedIssuers: o.ServiceAccounts.Issuers}
	var (
		jwt *security.JWTAuthenticators
		err error
	)
	switch {
	case o.AuthenticationConfigFile != "":
		jwt, err = security.NewJWTAuthenticatorsFromFile(o.AuthenticationConfigFile, opts, s.log)
		if err != nil {
			return nil, fmt.Errorf("%w: --authentication-config: %w", config.ErrInvalid, err)
		}
	case o.OIDC.Configured():
		jwt, err = security.NewJWTAuthenticatorsFromFlags(o.OIDC, opts, s.log)
		if err != nil {
			return nil, fmt.Errorf("%w: --oidc-*: %w", config.ErrInvalid, err)
		}
	}
	return jwt, nil
}

// jwtTokens is the bearer-token slot of jwt, empty when there is none.
func jwtTokens(jwt *security.JWTAuthenticators) []security.TokenAuthenticator {
	if jwt == nil {
		return nil
	}
	return []security.TokenAuthenticator{jwt}
}

// AuthenticationConfigReloads returns the counters of
// --authentication-config reloads (zero without the file).
func (s *Server) AuthenticationConfigReloads() security.ReloadStats {
	if s.jwt == nil {
		return security.ReloadStats{}
	}
	return s.jwt.Stats()
}

// JWTIssuerStats returns the verification counters of each JWT issuer
// (none without OIDC configuration).
func (s *Server) JWTIssuerStats() []security.JWTIssuerStats {
	if s.jwt == nil {
		return nil
	}
	return s.jwt.IssuerStats()
}

package server

import (
	"fmt"

	"platd/config"
	"platd/security"
)

// authzModes builds each authorization mode's authorizer. A mode whose
// authorizer follows the store (RBAC, Node) loads its state here, before
// the first request, and keeps it current from the store's watch.
var authzModes = map[string]func(s *Server) (security.Authorizer, error){
	config.ModeAlwaysAllow: func(*Server) (security.Authorizer, error) { return security.AlwaysAllow{}, nil },
	config.ModeAlwaysDeny:  func(*Server) (security.Authorizer, error) { return security.AlwaysDeny{}, nil },
}

// authorizer builds the configured chain.
func (s *Server) authorizer(modes []string) (security.Chain, error) {
	var chain []security.Authorizer
	for _, m := range modes {
		build, ok := authzModes[m]
		if !ok {
			return nil, fmt.Errorf("%w: authorization mode %q is not available", config.ErrInvalid, m)
		}
		z, err := build(s)
		if err != nil {
			return nil, fmt.Errorf("authorization mode %s: %w", m, err)
		}
		chain = append(chain, z)
	}
	return security.NewChain(chain...), nil
}

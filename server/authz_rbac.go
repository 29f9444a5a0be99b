package server

import (
	"fmt"
	"sync"

	"platd/config"
	"platd/security"
	"platd/security/rbac"
	"platd/server/controllers"
)

// rbacMode is the server's one RBAC authorizer and the controller that
// keeps it current, built when a configuration first names RBAC.
type rbacMode struct {
	mu   sync.Mutex
	ctrl *controllers.RBAC
}

// build loads the roles and bindings into a new authorizer the first
// time, follows the store with it from when the server serves, and
// returns that authorizer every time.
func (m *rbacMode) build(s *Server) (security.Authorizer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctrl != nil {
		return m.ctrl.Authorizer, nil
	}
	b := s.opts.Brand
	g := b.Group("rbac.authorization")
	c := &controllers.RBAC{Source: s.store, Authorizer: rbac.New(b), Log: s.log,
		Roles: s.reg.Lookup(g, "v1", "roles"), ClusterRoles: s.reg.Lookup(g, "v1", "clusterroles"),
		RoleBindings: s.reg.Lookup(g, "v1", "rolebindings"), ClusterRoleBindings: s.reg.Lookup(g, "v1", "clusterrolebindings")}
	if c.Roles == nil || c.ClusterRoles == nil || c.RoleBindings == nil || c.ClusterRoleBindings == nil {
		return nil, fmt.Errorf("%w: the RBAC authorization mode needs the %s/v1 API served", config.ErrInvalid, g)
	}
	if err := c.Load(); err != nil {
		return nil, fmt.Errorf("loading the RBAC policy: %w", err)
	}
	m.ctrl = c
	s.background.run(c.Run)
	return c.Authorizer, nil
}

// authorizer returns the RBAC authorizer, or nil when no configuration
// has named RBAC.
func (m *rbacMode) authorizer() *rbac.Authorizer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctrl == nil {
		return nil
	}
	return m.ctrl.Authorizer
}

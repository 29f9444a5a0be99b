package server

import (
	"context"
	"fmt"

	"platd/config"
	"platd/security/rbac"
	"platd/server/controllers"
)

// rbacAuthorizer loads the roles and bindings into a new RBAC authorizer
// and follows the store with it from when the server serves. authzOnce
// builds it once per server.
func (s *Server) rbacAuthorizer() (*rbac.Authorizer, error) {
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
	s.informers.ch(rbacInformer)
	s.background.run(func(ctx context.Context) {
		s.informers.finish(rbacInformer)
		c.Run(ctx)
	})
	return c.Authorizer, nil
}

// builtRBAC returns the RBAC authorizer, or nil when no configuration has
// named RBAC.
func (s *Server) builtRBAC() *rbac.Authorizer {
	s.authzMu.Lock()
	defer s.authzMu.Unlock()
	a, _ := s.authzBuilt[config.ModeRBAC].(*rbac.Authorizer)
	return a
}

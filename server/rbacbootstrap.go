package server

import (
	"context"
	"fmt"
	"time"

	"platd/config"
	"platd/server/controllers"
	"platd/server/rbacpolicy"
)

// rbacBootstrapHook is the post-start hook that writes the default RBAC
// policy; readyz, livez and healthz fail its check until it is written.
const rbacBootstrapHook = "rbac/bootstrap-roles"

// rbacEnabled reports whether RBAC authorizes requests, by
// --authorization-mode or the --authorization-config file read in New:
// the default policy is then written at every start.
func (s *Server) rbacEnabled() bool {
	return s.authorizationModeEnabled(config.ModeRBAC)
}

// rbacBootstrap returns the writer of the default policy; nil when RBAC
// does not authorize or its types are not served.
func (s *Server) rbacBootstrap() *controllers.RBACBootstrap {
	if !s.rbacEnabled() {
		return nil
	}
	b := s.opts.Brand
	g := b.Group("rbac.authorization")
	c := &controllers.RBACBootstrap{Objects: s.rest, Brand: b, Log: s.log,
		ClusterRoles: s.reg.Lookup(g, "v1", "clusterroles"), ClusterRoleBindings: s.reg.Lookup(g, "v1", "clusterrolebindings"),
		Roles: s.reg.Lookup(g, "v1", "roles"), RoleBindings: s.reg.Lookup(g, "v1", "rolebindings"),
		Policy: rbacpolicy.For(b).Objects(b), EnsureNamespace: s.rest.EnsureNamespace}
	if c.ClusterRoles == nil || c.ClusterRoleBindings == nil || c.Roles == nil || c.RoleBindings == nil {
		s.log.Warn("RBAC authorizes but its API is not served: no default policy is written")
		return nil
	}
	return c
}

// writeRBACPolicy writes the default policy and closes rbacDone. Failing,
// it stops the server as upstream's failed post-start hook does.
func (s *Server) writeRBACPolicy(ctx context.Context, c *controllers.RBACBootstrap) {
	start := time.Now()
	stats, err := c.Run(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(fmt.Errorf("PostStartHook %q failed: %w", rbacBootstrapHook, err))
		}
		return
	}
	s.log.Info("default RBAC policy written", "duration", time.Since(start), "created", stats.Created, "updated", stats.Updated,
		"recreated", stats.Recreated, "protected", stats.Protected, "failed", stats.Failed)
	close(s.rbacDone)
}

// fail stops the server with err (see Serve); only the first call counts.
func (s *Server) fail(err error) {
	select {
	case s.fatal <- err:
	default:
	}
}

package builtin

import (
	"context"
	"errors"
	"fmt"

	"platd/security"
	"platd/security/rbac"
	"platd/server/apierr"
	"platd/server/registry"
)

// Verbs that let a user write roles and bindings beyond its own rights.
const (
	verbEscalate = "escalate"
	verbBind     = "bind"
)

// rbacGuard refuses role and binding writes that would grant permissions
// their writer does not hold, as upstream's RBAC storage does. It checks
// only while RBAC is an authorization mode: upstream installs the check
// with the RBAC authorizer alone.
type rbacGuard struct {
	group string
	sv    Services
}

// roleWrite checks a Role or ClusterRole (resource names which): every
// rule must be held by the writer, unless it may "escalate"; an
// aggregating cluster role needs every right.
func (g rbacGuard) roleWrite(resource string) func(ctx context.Context, who registry.Requester, name string, obj, old registry.Object) error {
	return func(ctx context.Context, who registry.Requester, name string, obj, old registry.Object) error {
		az, u, ok := g.checked(who, obj, old)
		if !ok {
			return nil
		}
		ns := str(obj, "metadata", "namespace")
		if g.allowed(ctx, u, verbEscalate, g.group, resource, ns, name) {
			return nil
		}
		owner, resolveErr := az.PolicyRulesFor(u, ns)
		objName := str(obj, "metadata", "name")
		if err := rbac.ConfirmNoEscalation(u, owner, resolveErr, policyRules(obj)); err != nil {
			return g.forbidden(resource, objName, err.Error())
		}
		if present(obj, "aggregationRule") || (old != nil && present(old, "aggregationRule")) {
			if rbac.ConfirmNoEscalation(u, owner, resolveErr, rbac.FullAuthority) != nil {
				return g.forbidden(resource, objName, "must have cluster-admin privileges to use the aggregationRule")
			}
		}
		return nil
	}
}

// bindingWrite checks a RoleBinding or ClusterRoleBinding: the writer
// must hold every rule of the role it grants, unless it may "bind" that
// role.
func (g rbacGuard) bindingWrite(resource string) func(ctx context.Context, who registry.Requester, name string, obj, old registry.Object) error {
	return func(ctx context.Context, who registry.Requester, _ string, obj, old registry.Object) error {
		az, u, ok := g.checked(who, obj, old)
		if !ok {
			return nil
		}
		ns := str(obj, "metadata", "namespace")
		ref := rbac.RoleRef{APIGroup: str(obj, "roleRef", "apiGroup"), Kind: str(obj, "roleRef", "kind"), Name: str(obj, "roleRef", "name")}
		roleResource := map[string]string{rbacKindRole: "roles", rbacKindClusterRole: "clusterroles"}[ref.Kind]
		if roleResource != "" && g.allowed(ctx, u, verbBind, ref.APIGroup, roleResource, ns, ref.Name) {
			return nil
		}
		objName := str(obj, "metadata", "name")
		rules, err := az.RoleRefRules(ref, ns)
		var missing *rbac.NotFoundError
		if errors.As(err, &missing) && roleResource != "" {
			// As upstream: the role's own NotFound, not a refusal.
			return apierr.NotFound(g.group, roleResource, ref.Name)
		}
		if err != nil {
			return g.forbidden(resource, objName, err.Error())
		}
		owner, resolveErr := az.PolicyRulesFor(u, ns)
		if err := rbac.ConfirmNoEscalation(u, owner, resolveErr, rules); err != nil {
			return g.forbidden(resource, objName, err.Error())
		}
		return nil
	}
}

// checked returns the RBAC authorizer and the writer when the write is to
// be checked: RBAC is on, the writer is not in the privileged group, and
// an update changes more than what the garbage collector changes.
func (g rbacGuard) checked(who registry.Requester, obj, old registry.Object) (*rbac.Authorizer, *security.User, bool) {
	if g.sv.RBAC == nil {
		return nil, nil, false
	}
	az := g.sv.RBAC()
	if az == nil {
		return nil, nil, false
	}
	u := &security.User{Name: who.Name, UID: who.UID, Groups: who.Groups, Extra: who.Extra}
	if u.InGroup(security.SystemPrivilegedGroup) || (old != nil && onlyGCFieldsChange(obj, old)) {
		return nil, nil, false
	}
	return az, u, true
}

// allowed asks the server's authorizer chain whether u may verb the role
// called name.
func (g rbacGuard) allowed(ctx context.Context, u *security.User, verb, group, resource, ns, name string) bool {
	if g.sv.Authorizer == nil {
		return false
	}
	d, _, err := g.sv.Authorizer.Authorize(ctx, security.Attributes{User: u, Verb: verb, APIGroup: group, APIVersion: "*",
		Resource: resource, Namespace: ns, Name: name, ResourceRequest: true})
	return err == nil && d == security.DecisionAllow
}

func (g rbacGuard) forbidden(resource, name, msg string) error {
	return apierr.NewForbidden(g.group, resource, name, fmt.Sprintf("%s.%s %q is forbidden: %s", resource, g.group, name, msg))
}

// policyRules reads the rules of a role.
func policyRules(obj registry.Object) []rbac.PolicyRule {
	var rules []rbac.PolicyRule
	for _, r := range mapsOf(obj["rules"]) {
		rules = append(rules, rbac.PolicyRule{
			Verbs: stringsOf(listOf(r["verbs"])), APIGroups: stringsOf(listOf(r["apiGroups"])), Resources: stringsOf(listOf(r["resources"])),
			ResourceNames: stringsOf(listOf(r["resourceNames"])), NonResourceURLs: stringsOf(listOf(r["nonResourceURLs"])),
		})
	}
	return rules
}

// gcFields are the metadata fields the garbage collector changes (with
// those the server keeps itself): an update of only these grants nothing.
var gcFields = map[string]bool{"ownerReferences": true, "finalizers": true, "selfLink": true, "managedFields": true, "resourceVersion": true}

// onlyGCFieldsChange reports whether obj differs from old in gcFields
// alone. The type (kind, apiVersion) is the descriptor's either way.
func onlyGCFieldsChange(obj, old registry.Object) bool {
	for _, o := range [2]registry.Object{obj, old} {
		for k := range o {
			if k != "metadata" && k != "kind" && k != "apiVersion" && !semanticEqual(obj[k], old[k]) {
				return false
			}
		}
	}
	m, oldM := mapAt(obj, "metadata"), mapAt(old, "metadata")
	for _, o := range [2]map[string]any{m, oldM} {
		for k := range o {
			if !gcFields[k] && !semanticEqual(m[k], oldM[k]) {
				return false
			}
		}
	}
	return true
}

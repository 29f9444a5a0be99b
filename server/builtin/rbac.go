package builtin

import (
	"fmt"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// Subject and role reference kinds of the rbac group.
const (
	rbacKindServiceAccount = "ServiceAccount"
	rbacKindUser           = "User"
	rbacKindGroup          = "Group"
	rbacKindRole           = "Role"
	rbacKindClusterRole    = "ClusterRole"
)

// rbacV1 serves roles and their bindings. Names are any path segment, so
// that names like "system:controller:x" work; a PUT may create, as the
// bootstrap policy reconciler relies on.
func rbacV1(b config.Brand, sv Services) []*registry.Descriptor {
	r := rbacRules{group: b.Group("rbac.authorization")}
	guard := rbacGuard{group: r.group, sv: sv}
	mk := func(resource, singular, kind string, namespaced bool) *registry.Descriptor {
		d := groupType(r.group, resource, singular, kind, namespaced)
		d.NameRule = registry.NamePathSegment
		d.UpdateCreates = true
		return d
	}
	roles := mk("roles", "role", "Role", true)
	roles.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors { return validatePolicyRules(obj, true) }
	roles.Strategy.AuthorizeWrite = guard.roleWrite(roles.Resource)

	clusterRoles := mk("clusterroles", "clusterrole", "ClusterRole", false)
	clusterRoles.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors { return validateClusterRole(obj, false) }
	clusterRoles.Strategy.AuthorizeWrite = guard.roleWrite(clusterRoles.Resource)
	clusterRoles.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return validateClusterRole(obj, aggregationHasBadValue(old))
	}

	roleBindings := mk("rolebindings", "rolebinding", "RoleBinding", true)
	roleBindings.Strategy.Default = r.defaultBinding
	roleBindings.Strategy.AuthorizeWrite = guard.bindingWrite(roleBindings.Resource)
	roleBindings.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors { return r.validateBinding(obj, true) }
	roleBindings.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(r.validateBinding(obj, true), r.roleRefUnchanged(obj, old)...)
	}

	clusterRoleBindings := mk("clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false)
	clusterRoleBindings.Strategy.Default = r.defaultBinding
	clusterRoleBindings.Strategy.AuthorizeWrite = guard.bindingWrite(clusterRoleBindings.Resource)
	clusterRoleBindings.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors { return r.validateBinding(obj, false) }
	clusterRoleBindings.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(r.validateBinding(obj, false), r.roleRefUnchanged(obj, old)...)
	}
	return []*registry.Descriptor{clusterRoleBindings, clusterRoles, roleBindings, roles}
}

// rbacRules holds the brand's spelling of the rbac group, which role
// references and user and group subjects name.
type rbacRules struct{ group string }

// validatePolicyRules checks each rule of a role: verbs always, then either
// non-resource URLs (cluster roles only) or groups and resources.
func validatePolicyRules(obj registry.Object, namespaced bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, r := range mapsOf(obj["rules"]) {
		errs = append(errs, validatePolicyRule(r, namespaced, pathOf("rules").index(i))...)
	}
	return errs
}

func validatePolicyRule(rule map[string]any, namespaced bool, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if len(listOf(rule["verbs"])) == 0 {
		errs = append(errs, apierr.Required(p.child("verbs").String(), "verbs must contain at least one value"))
	}
	urls := listOf(rule["nonResourceURLs"])
	groups, resources, names := listOf(rule["apiGroups"]), listOf(rule["resources"]), listOf(rule["resourceNames"])
	if len(urls) > 0 {
		urlPath := p.child("nonResourceURLs").String()
		if namespaced {
			errs = append(errs, apierr.Invalid(urlPath, goStrings("string", urls), "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(groups) > 0 || len(resources) > 0 || len(names) > 0 {
			errs = append(errs, apierr.Invalid(urlPath, goStrings("string", urls), "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(groups) == 0 {
		errs = append(errs, apierr.Required(p.child("apiGroups").String(), "resource rules must supply at least one api group"))
	}
	if len(resources) == 0 {
		errs = append(errs, apierr.Required(p.child("resources").String(), "resource rules must supply at least one resource"))
	}
	if len(names) > 0 && len(resources) > 1 {
		errs = append(errs, apierr.Required(p.child("resourceNames").String(), "resource names cannot apply to multiple resources"))
	}
	return errs
}

// validateClusterRole checks the rules and the aggregation rule's
// selectors. allowBadValues keeps selector values a stored role already
// had valid.
func validateClusterRole(obj registry.Object, allowBadValues bool) apierr.FieldErrors {
	errs := validatePolicyRules(obj, false)
	agg, ok := obj["aggregationRule"].(map[string]any)
	if !ok {
		return errs
	}
	const path = "aggregationRule.clusterRoleSelectors"
	sels := mapsOf(agg["clusterRoleSelectors"])
	if len(sels) == 0 {
		errs = append(errs, apierr.Required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	for i, sel := range sels {
		p := index(path, i)
		errs = append(errs, validateLabelSelector(sel, allowBadValues, p)...)
		// Upstream also converts each selector and reports a selector that
		// does not convert, with no value to show.
		if selectorHasBadValue(sel) {
			errs = append(errs, apierr.Invalid(p, nil, "invalid label selector."))
		}
	}
	return errs
}

// aggregationHasBadValue reports whether a stored cluster role's selectors
// fail the strict label value rules.
func aggregationHasBadValue(old registry.Object) bool {
	for _, sel := range mapsOf(valueAt(old, "aggregationRule", "clusterRoleSelectors")) {
		if selectorHasBadValue(sel) {
			return true
		}
	}
	return false
}

// defaultBinding names the rbac group in a role reference and in user and
// group subjects that leave it out.
func (r rbacRules) defaultBinding(obj registry.Object) {
	// roleRef is a struct upstream, never absent: a missing one is
	// defaulted too.
	if ref := child(obj, "roleRef"); str(ref, "apiGroup") == "" {
		ref["apiGroup"] = r.group
	}
	for _, s := range listOf(obj["subjects"]) {
		sub, ok := s.(map[string]any)
		if !ok || str(sub, "apiGroup") != "" {
			continue
		}
		if k := str(sub, "kind"); k == rbacKindUser || k == rbacKindGroup {
			sub["apiGroup"] = r.group
		}
	}
}

// validateBinding checks a role or cluster role binding's reference and
// subjects.
func (r rbacRules) validateBinding(obj registry.Object, namespaced bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	ref := mapOf(obj["roleRef"])
	if g := str(ref, "apiGroup"); g != r.group {
		errs = append(errs, apierr.NotSupported("roleRef.apiGroup", g, []string{r.group}))
	}
	kinds := []string{rbacKindClusterRole}
	if namespaced {
		kinds = []string{rbacKindRole, rbacKindClusterRole}
	}
	if k := str(ref, "kind"); k != rbacKindClusterRole && (!namespaced || k != rbacKindRole) {
		errs = append(errs, apierr.NotSupported("roleRef.kind", k, kinds))
	}
	if name := str(ref, "name"); name == "" {
		errs = append(errs, apierr.Required("roleRef.name", ""))
	} else {
		errs = append(errs, invalidEach(pathOf("roleRef.name"), name, validation.IsPathSegment(name))...)
	}
	for i, s := range mapsOf(obj["subjects"]) {
		errs = append(errs, r.validateSubject(s, namespaced, pathOf("subjects").index(i))...)
	}
	return errs
}

func (r rbacRules) validateSubject(s map[string]any, namespaced bool, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	name, group := str(s, "name"), str(s, "apiGroup")
	if name == "" {
		errs = append(errs, apierr.Required(p.child("name").String(), ""))
	}
	switch k := str(s, "kind"); k {
	case rbacKindServiceAccount:
		if name != "" {
			errs = append(errs, dnsSubdomain(name, p.child("name"))...)
		}
		if group != "" {
			errs = append(errs, apierr.NotSupported(p.child("apiGroup").String(), group, []string{""}))
		}
		if !namespaced && str(s, "namespace") == "" {
			errs = append(errs, apierr.Required(p.child("namespace").String(), ""))
		}
	case rbacKindUser, rbacKindGroup:
		if name == "" {
			what := "user"
			if k == rbacKindGroup {
				what = "group"
			}
			errs = append(errs, apierr.Invalid(p.child("name").String(), name, what+" name cannot be empty"))
		}
		if group != r.group {
			errs = append(errs, apierr.NotSupported(p.child("apiGroup").String(), group, []string{r.group}))
		}
	default:
		errs = append(errs, apierr.NotSupported(p.child("kind").String(), k, []string{rbacKindServiceAccount, rbacKindUser, rbacKindGroup}))
	}
	return errs
}

// roleRefUnchanged refuses a binding update that points it at another
// role: who a binding grants what must not change under its name.
func (r rbacRules) roleRefUnchanged(obj, old registry.Object) apierr.FieldErrors {
	ref, oldRef := mapOf(obj["roleRef"]), mapOf(old["roleRef"])
	for _, k := range []string{"apiGroup", "kind", "name"} {
		if str(ref, k) != str(oldRef, k) {
			v := goSyntax(fmt.Sprintf("rbac.RoleRef{APIGroup:%q, Kind:%q, Name:%q}", str(ref, "apiGroup"), str(ref, "kind"), str(ref, "name")))
			return apierr.FieldErrors{apierr.Invalid("roleRef", v, "cannot change roleRef")}
		}
	}
	return nil
}

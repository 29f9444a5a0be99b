package rbacpolicy

import (
	"platd/config"
	"platd/server/registry"
)

// defaultsLabelValue is the bootstrapping label's value on every object of
// the default policy.
const defaultsLabelValue = "rbac-defaults"

// Objects is the default policy as the API's objects (served form, with
// kind and apiVersion), in upstream's order.
type Objects struct {
	ClusterRoles, ClusterRoleBindings, Roles, RoleBindings []registry.Object
}

// Objects renders the policy in brand b. Each call returns new objects the
// caller may change.
func (p Policy) Objects(b config.Brand) Objects {
	var o Objects
	for _, r := range p.ClusterRoles {
		o.ClusterRoles = append(o.ClusterRoles, clusterRoleObject(b, r))
	}
	for _, bd := range p.ClusterRoleBindings {
		o.ClusterRoleBindings = append(o.ClusterRoleBindings, bindingObject(b, bd))
	}
	for _, r := range p.Roles {
		obj := kindObject(b, "Role", r.Namespace, r.Name, nil)
		obj["rules"] = rulesValue(r.Rules)
		o.Roles = append(o.Roles, obj)
	}
	for _, bd := range p.RoleBindings {
		o.RoleBindings = append(o.RoleBindings, bindingObject(b, bd))
	}
	return o
}

func kindObject(b config.Brand, kind, ns, name string, labels map[string]string) registry.Object {
	l := map[string]any{b.BootstrappingLabel(): defaultsLabelValue}
	for k, v := range labels {
		l[k] = v
	}
	md := map[string]any{
		"name":        name,
		"labels":      l,
		"annotations": map[string]any{b.RBACAutoUpdateAnnotation(): "true"},
	}
	if ns != "" {
		md["namespace"] = ns
	}
	return registry.Object{"apiVersion": b.Group("rbac.authorization") + "/v1", "kind": kind, "metadata": md}
}

func clusterRoleObject(b config.Brand, r ClusterRole) registry.Object {
	obj := kindObject(b, "ClusterRole", "", r.Name, r.Labels)
	if len(r.AggregateFrom) == 0 {
		obj["rules"] = rulesValue(r.Rules)
		return obj
	}
	// Rules are the aggregation controller's to fill.
	sels := make([]any, len(r.AggregateFrom))
	for i, l := range r.AggregateFrom {
		sels[i] = map[string]any{"matchLabels": map[string]any{l: "true"}}
	}
	obj["aggregationRule"] = map[string]any{"clusterRoleSelectors": sels}
	return obj
}

func bindingObject(b config.Brand, bd Binding) registry.Object {
	rbac := b.Group("rbac.authorization")
	kind := "ClusterRoleBinding"
	if bd.Namespace != "" {
		kind = "RoleBinding"
	}
	obj := kindObject(b, kind, bd.Namespace, bd.Name, nil)
	obj["roleRef"] = map[string]any{"apiGroup": rbac, "kind": bd.RoleKind, "name": bd.RoleName}
	if len(bd.Subjects) == 0 {
		return obj
	}
	subs := make([]any, len(bd.Subjects))
	for i, s := range bd.Subjects {
		m := map[string]any{"kind": s.Kind, "name": s.Name}
		if s.Kind == KindServiceAccount {
			m["namespace"] = s.Namespace
		} else {
			m["apiGroup"] = rbac
		}
		subs[i] = m
	}
	obj["subjects"] = subs
	return obj
}

// rulesValue is rules in their decoded JSON form; empty lists are left out.
func rulesValue(rules []Rule) []any {
	out := make([]any, len(rules))
	for i, r := range rules {
		out[i] = ruleValue(r)
	}
	return out
}

func ruleValue(r Rule) map[string]any {
	m := map[string]any{}
	for k, l := range map[string][]string{"verbs": r.Verbs, "apiGroups": r.APIGroups, "resources": r.Resources,
		"resourceNames": r.ResourceNames, "nonResourceURLs": r.NonResourceURLs} {
		if len(l) > 0 {
			m[k] = registry.AnyList(l)
		}
	}
	return m
}

// RulesOf reads the rules of a role or cluster role.
func RulesOf(obj registry.Object) []Rule {
	list, _ := obj["rules"].([]any)
	out := make([]Rule, 0, len(list))
	for _, v := range list {
		m, _ := v.(map[string]any)
		out = append(out, RuleOf(m))
	}
	return out
}

// RuleOf reads one decoded rule; lists keep their order, empty ones are nil.
func RuleOf(m map[string]any) Rule {
	get := func(k string) []string {
		l := registry.Strings(m[k])
		if len(l) == 0 {
			return nil
		}
		return l
	}
	return Rule{Verbs: get("verbs"), APIGroups: get("apiGroups"), Resources: get("resources"),
		ResourceNames: get("resourceNames"), NonResourceURLs: get("nonResourceURLs")}
}

// stringMap reads labels or annotations.
func stringMap(obj registry.Object, field string) map[string]string {
	md, _ := obj["metadata"].(map[string]any)
	m, _ := md[field].(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

// Name and Namespace read an object's metadata.
func Name(obj registry.Object) string      { return metaString(obj, "name") }
func Namespace(obj registry.Object) string { return metaString(obj, "namespace") }

func metaString(obj registry.Object, k string) string {
	md, _ := obj["metadata"].(map[string]any)
	s, _ := md[k].(string)
	return s
}

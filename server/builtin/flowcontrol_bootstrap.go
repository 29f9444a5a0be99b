package builtin

import (
	"strconv"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// Identities the bootstrap flow schemas match; none carries the brand.
const (
	groupMasters         = "system:masters"
	groupAuthenticated   = "system:authenticated"
	groupUnauthenticated = "system:unauthenticated"
	groupNodes           = "system:nodes"
	groupServiceAccounts = "system:serviceaccounts"
	userControllerMgr    = "system:kube-controller-manager"
	userScheduler        = "system:kube-scheduler"
)

// FlowControlAutoUpdate is the annotation that lets the server bring a
// bootstrap flow-control object back to its shipped spec; "false" keeps
// an operator's changes.
func FlowControlAutoUpdate(b config.Brand) string { return "apf." + b.LongDomain + "/autoupdate-spec" }

// FlowControlBootstrap returns upstream's v1.32 bootstrap configuration of
// API priority and fairness: the priority levels, then the flow schemas,
// mandatory ones first, each a complete v1 object already in its
// defaulted form and marked for automatic spec updates. Create the levels
// before the schemas that name them. Every call returns new objects the
// caller owns.
func FlowControlBootstrap(b config.Brand) (levels, schemas []registry.Object) {
	fc := flowBootstrap{b: b, apiVersion: b.Group("flowcontrol.apiserver") + "/v1"}
	queue := func(queues, hand int64) map[string]any {
		return map[string]any{"type": limitResponseQueue, "queuing": map[string]any{
			"queues": queues, "handSize": hand, "queueLengthLimit": int64(defaultQueueLengthLimit)}}
	}
	levels = []registry.Object{
		fc.level(priorityLevelExempt, map[string]any{"type": levelTypeExempt, "exempt": map[string]any{
			"nominalConcurrencyShares": int64(0), "lendablePercent": int64(0)}}),
		fc.limited(priorityLevelCatchAll, 5, 0, map[string]any{"type": limitResponseReject}),
		fc.limited("system", 30, 33, queue(64, 6)),
		fc.limited("node-high", 40, 25, queue(64, 6)),
		fc.limited("leader-election", 10, 0, queue(16, 4)),
		fc.limited("workload-high", 40, 50, queue(128, 6)),
		fc.limited("workload-low", 100, 90, queue(128, 6)),
		fc.limited("global-default", 20, 50, queue(128, 6)),
	}
	everyone := func() []any { return flowGroups(groupUnauthenticated, groupAuthenticated) }
	getCreateUpdate := []any{"get", "create", "update"}
	coordination := b.Group("coordination")
	schemas = []registry.Object{
		fc.schema(flowSchemaExempt, priorityLevelExempt, 1, "", fc.allRule(flowGroups(groupMasters))),
		fc.schema("probes", priorityLevelExempt, 2, "", map[string]any{
			"subjects": everyone(),
			"nonResourceRules": []any{map[string]any{
				"verbs": []any{"get"}, "nonResourceURLs": []any{"/healthz", "/readyz", "/livez"}}},
		}),
		fc.schema("system-leader-election", "leader-election", 100, "ByUser", map[string]any{
			"subjects": append(flowUsers(userControllerMgr, userScheduler), fc.systemServiceAccounts(flowNameAll)...),
			"resourceRules": []any{
				resourceRule(getCreateUpdate, []any{coordination}, []any{"leases"}, false),
			},
		}),
		fc.schema("endpoint-controller", "workload-high", 150, "ByUser", map[string]any{
			"subjects": append(flowUsers(userControllerMgr), fc.systemServiceAccounts("endpoint-controller", "endpointslicemirroring-controller")...),
			"resourceRules": []any{
				resourceRule(getCreateUpdate, []any{""}, []any{"endpoints"}, false),
			},
		}),
		fc.schema("workload-leader-election", "leader-election", 200, "ByUser", map[string]any{
			"subjects": fc.systemServiceAccounts(flowNameAll),
			"resourceRules": []any{
				resourceRule(getCreateUpdate, []any{""}, []any{"endpoints", "configmaps"}, false),
				resourceRule(getCreateUpdate, []any{coordination}, []any{"leases"}, false),
			},
		}),
		fc.schema("system-node-high", "node-high", 400, "ByUser", map[string]any{
			"subjects": flowGroups(groupNodes),
			"resourceRules": []any{
				resourceRule([]any{"*"}, []any{""}, []any{"nodes", "nodes/status"}, true),
				resourceRule([]any{"*"}, []any{coordination}, []any{"leases"}, false),
			},
		}),
		fc.schema("system-nodes", "system", 500, "ByUser", fc.allRule(flowGroups(groupNodes))),
		fc.schema("kube-controller-manager", "workload-high", 800, "ByNamespace", fc.allRule(flowUsers(userControllerMgr))),
		fc.schema("kube-scheduler", "workload-high", 800, "ByNamespace", fc.allRule(flowUsers(userScheduler))),
		// Named for the system namespace, as upstream names it.
		fc.schema(b.SystemNamespace+"-service-accounts", "workload-high", 900, "ByNamespace", fc.allRule(fc.systemServiceAccounts(flowNameAll))),
		fc.schema("service-accounts", "workload-low", 9000, "ByUser", fc.allRule(flowGroups(groupServiceAccounts))),
		fc.schema("global-default", "global-default", 9900, "ByUser", fc.allRule(everyone())),
		fc.schema(flowSchemaCatchAll, priorityLevelCatchAll, 10000, "ByUser", fc.allRule(everyone())),
	}
	return levels, schemas
}

// FlowSchemaReviser decides, for the FlowSchema type d, what an existing
// bootstrap schema becomes given its bootstrap value (see flowReviser).
func FlowSchemaReviser(b config.Brand, d *registry.Descriptor) func(have, want registry.Object) registry.Object {
	return flowReviser(b, func(name string) bool { return name == flowSchemaExempt || name == flowSchemaCatchAll },
		func(have, want registry.Object) bool { return sameMember(d.Schema, have, want, "spec") })
}

// PriorityLevelReviser decides, for the PriorityLevelConfiguration type d,
// what an existing bootstrap level becomes given its bootstrap value (see
// flowReviser). The exempt level's own settings (its concurrency shares
// and lendable percent) are the administrator's: a spec that differs only
// there counts as the bootstrap one.
func PriorityLevelReviser(b config.Brand, d *registry.Descriptor) func(have, want registry.Object) registry.Object {
	return flowReviser(b, func(name string) bool { return name == priorityLevelExempt || name == priorityLevelCatchAll },
		func(have, want registry.Object) bool {
			name := str(want, "metadata", "name")
			if name == priorityLevelExempt && mapAt(have, "spec", "exempt") == nil {
				return false
			}
			return samePriorityLevelSpec(d, name, have, want)
		})
}

// flowReviser returns what an existing bootstrap flow-control object
// (have, which it may change) becomes given its bootstrap value want, or
// nil when it stays as it is, as upstream's configuration producer
// decides:
//   - a mandatory object always gets the bootstrap spec back and the
//     auto-update annotation "true";
//   - a suggested object gets the bootstrap spec when the annotation reads
//     true, and keeps its spec when it reads false. Without a readable
//     annotation, an object never changed since it was created (generation
//     1) is updated and marked "true"; a changed one is kept and marked
//     "false", so that the operator's change survives.
//
// sameSpec reports whether have's spec counts as want's.
func flowReviser(b config.Brand, mandatory func(name string) bool, sameSpec func(have, want registry.Object) bool) func(have, want registry.Object) registry.Object {
	key := FlowControlAutoUpdate(b)
	return func(have, want registry.Object) registry.Object {
		value, annotated := mapAt(have, "metadata", "annotations")[key].(string)
		marked, err := strconv.ParseBool(value)
		annotated = annotated && err == nil
		auto := mandatory(str(want, "metadata", "name"))
		switch {
		case auto:
		case annotated:
			auto = marked
		default:
			auto = intAt(have, "metadata", "generation") == 1
		}
		mark := !annotated || marked != auto
		respec := auto && !sameSpec(have, want)
		if !mark && !respec {
			return nil
		}
		if respec {
			have["spec"] = schema.DeepCopy(want["spec"])
		}
		if mark {
			child(child(have, "metadata"), "annotations")[key] = strconv.FormatBool(auto)
		}
		return have
	}
}

// FlowControlRemovable reports whether a flow-control object the bootstrap
// configuration no longer names is removed, as upstream removes it: when
// its auto-update annotation reads true. One without the annotation is an
// operator's own.
func FlowControlRemovable(b config.Brand) func(have registry.Object) bool {
	key := FlowControlAutoUpdate(b)
	return func(have registry.Object) bool {
		v, ok := mapAt(have, "metadata", "annotations")[key].(string)
		auto, err := strconv.ParseBool(v)
		return ok && err == nil && auto
	}
}

// mandatoryFlowControl returns the objects whose specs validation fixes,
// by name.
func mandatoryFlowControl(b config.Brand) (levels, schemas map[string]registry.Object) {
	ls, ss := FlowControlBootstrap(b)
	levels, schemas = map[string]registry.Object{}, map[string]registry.Object{}
	for _, l := range ls {
		if n := str(l, "metadata", "name"); n == priorityLevelExempt || n == priorityLevelCatchAll {
			levels[n] = l
		}
	}
	for _, s := range ss {
		if n := str(s, "metadata", "name"); n == flowSchemaExempt || n == flowSchemaCatchAll {
			schemas[n] = s
		}
	}
	return levels, schemas
}

// flowBootstrap builds the bootstrap objects of one brand.
type flowBootstrap struct {
	b          config.Brand
	apiVersion string
}

// object is a new object of kind with the auto-update annotation, which
// tells the server it may keep the spec current.
func (f flowBootstrap) object(kind, name string, spec map[string]any) registry.Object {
	return registry.Object{
		"apiVersion": f.apiVersion, "kind": kind,
		"metadata": map[string]any{
			"name":        name,
			"annotations": map[string]any{FlowControlAutoUpdate(f.b): "true"},
		},
		"spec": spec,
	}
}

func (f flowBootstrap) level(name string, spec map[string]any) registry.Object {
	return f.object("PriorityLevelConfiguration", name, spec)
}

func (f flowBootstrap) limited(name string, shares, lendable int64, response map[string]any) registry.Object {
	return f.level(name, map[string]any{"type": levelTypeLimited, "limited": map[string]any{
		"nominalConcurrencyShares": shares, "lendablePercent": lendable, "limitResponse": response}})
}

func (f flowBootstrap) schema(name, level string, precedence int64, distinguisher string, rule map[string]any) registry.Object {
	spec := map[string]any{
		"priorityLevelConfiguration": map[string]any{"name": level},
		"matchingPrecedence":         precedence,
		"rules":                      []any{rule},
	}
	if distinguisher != "" {
		spec["distinguisherMethod"] = map[string]any{"type": distinguisher}
	}
	return f.object("FlowSchema", name, spec)
}

// allRule matches every request of the subjects.
func (f flowBootstrap) allRule(subjects []any) map[string]any {
	return map[string]any{
		"subjects":         subjects,
		"resourceRules":    []any{resourceRule([]any{"*"}, []any{"*"}, []any{"*"}, true)},
		"nonResourceRules": []any{map[string]any{"verbs": []any{"*"}, "nonResourceURLs": []any{"*"}}},
	}
}

// systemServiceAccounts are subjects for the named service accounts of
// the system namespace.
func (f flowBootstrap) systemServiceAccounts(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"kind": "ServiceAccount", "serviceAccount": map[string]any{"name": n, "namespace": f.b.SystemNamespace}}
	}
	return out
}

// resourceRule matches the verbs on the resources of groups in every
// namespace, and cluster-scoped ones when clusterScope is set.
func resourceRule(verbs, groups, resources []any, clusterScope bool) map[string]any {
	r := map[string]any{"verbs": verbs, "apiGroups": groups, "resources": resources, "namespaces": []any{"*"}}
	if clusterScope {
		// Omitted when false, as it is stored.
		r["clusterScope"] = true
	}
	return r
}

func flowGroups(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"kind": "Group", "group": map[string]any{"name": n}}
	}
	return out
}

func flowUsers(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"kind": "User", "user": map[string]any{"name": n}}
	}
	return out
}

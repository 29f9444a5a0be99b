// Package rbacpolicy holds the default RBAC policy the server writes at
// every start when RBAC authorizes (upstream's bootstrap policy of v1.32
// with its default feature gates), and the rules that reconcile it with
// what is stored.
package rbacpolicy

import (
	"slices"
	"strings"

	"platd/config"
	"platd/security"
	"platd/security/rbac"
)

// Rule is one policy rule. The default policy's lists are sorted, as
// upstream builds them.
type Rule = rbac.PolicyRule

// ClusterRole is a default cluster role.
type ClusterRole struct {
	Name string
	// Labels are the labels besides the bootstrapping one.
	Labels map[string]string
	Rules  []Rule
	// AggregateFrom names the labels (value "true") whose roles' rules
	// are aggregated into this one, one selector each; such a role ships
	// without rules.
	AggregateFrom []string
}

// Role is a default namespaced role.
type Role struct {
	Namespace, Name string
	Rules           []Rule
}

// Subject is a binding's subject: kind User, Group or ServiceAccount.
type Subject struct{ Kind, Name, Namespace string }

// Binding is a default role binding (Namespace set) or cluster role
// binding. RoleKind is Role or ClusterRole.
type Binding struct {
	Namespace, Name    string
	RoleKind, RoleName string
	Subjects           []Subject
}

// Policy is the whole default policy, each list in upstream's order.
type Policy struct {
	ClusterRoles        []ClusterRole
	ClusterRoleBindings []Binding
	Roles               []Role
	RoleBindings        []Binding
}

// Subject and role kinds.
const (
	KindUser           = "User"
	KindGroup          = "Group"
	KindServiceAccount = "ServiceAccount"
	KindRole           = "Role"
	KindClusterRole    = "ClusterRole"
)

// controllerPrefix starts the names of the controllers' roles; the rest
// names the controller's service account in the system namespace.
const controllerPrefix = "system:controller:"

// The names of the default aggregated roles and of the roles that held
// their own rules before aggregation (migrated at start, see Prime).
var (
	aggregated = []string{"admin", "edit", "view"}
	// AggregatedLegacy maps each aggregated role to the role its own
	// rules moved to.
	AggregatedLegacy = map[string]string{"admin": "system:aggregate-to-admin", "edit": "system:aggregate-to-edit", "view": "system:aggregate-to-view"}
)

// Split cluster role bindings: a cluster once bound system:discovery to
// what system:public-info-viewer now grants; its subjects carry over.
const (
	SplitFrom = "system:discovery"
	SplitTo   = "system:public-info-viewer"
)

// fields splits a space-separated list.
func fields(s string) []string { return strings.Fields(s) }

// rule is a resource rule: verbs and resources are space-separated.
func rule(verbs string, groups []string, resources string, names ...string) Rule {
	return sorted(Rule{Verbs: fields(verbs), APIGroups: slices.Clone(groups), Resources: fields(resources), ResourceNames: names})
}

// urls is a non-resource rule.
func urls(verbs, paths string) Rule {
	return sorted(Rule{Verbs: fields(verbs), NonResourceURLs: fields(paths)})
}

func sorted(r Rule) Rule {
	for _, l := range []*[]string{&r.Verbs, &r.APIGroups, &r.Resources, &r.ResourceNames, &r.NonResourceURLs} {
		if len(*l) == 0 {
			*l = nil
		}
		slices.Sort(*l)
	}
	return r
}

func in(groups ...string) []string { return groups }

// groups spells the API groups a policy names in one brand.
type groups struct {
	core, apps, batch, extensions, policy, autoscaling                   string
	events, authn, authz, rbac, certs, coord, storage, networking, disco string
	node, admission, metrics, customMetrics, externalMetrics             string
}

func groupsOf(b config.Brand) groups {
	g := b.Group
	return groups{
		apps: "apps", batch: "batch", extensions: "extensions", policy: "policy", autoscaling: "autoscaling",
		events: g("events"), authn: g("authentication"), authz: g("authorization"), rbac: g("rbac.authorization"),
		certs: g("certificates"), coord: g("coordination"), storage: g("storage"), networking: g("networking"),
		disco: g("discovery"), node: g("node"), admission: g("admissionregistration"), metrics: g("metrics"),
		customMetrics: g("custom.metrics"), externalMetrics: g("external.metrics"),
	}
}

// Verb sets.
const (
	read  = "get list watch"
	write = "create delete deletecollection patch update"
)

// For returns the default policy in brand b.
func For(b config.Brand) Policy {
	p := Policy{ClusterRoles: clusterRoles(b), ClusterRoleBindings: clusterRoleBindings(b)}
	ctrlRoles := controllerRoles(b)
	p.ClusterRoles = append(p.ClusterRoles, ctrlRoles...)
	for _, r := range ctrlRoles {
		sa := strings.TrimPrefix(r.Name, controllerPrefix)
		p.ClusterRoleBindings = append(p.ClusterRoleBindings, Binding{Name: r.Name, RoleKind: KindClusterRole, RoleName: r.Name,
			Subjects: []Subject{{Kind: KindServiceAccount, Name: sa, Namespace: b.SystemNamespace}}})
	}
	p.Roles, p.RoleBindings = namespaced(b)
	return p
}

// NodeRules are the rules of the system:node role, which the Node
// authorizer applies to nodes for what its graph does not restrict.
func NodeRules(b config.Brand) []security.ResourceRule {
	rules := nodeRules(groupsOf(b))
	out := make([]security.ResourceRule, len(rules))
	for i, r := range rules {
		out[i] = security.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames}
	}
	return out
}

func nodeRules(g groups) []Rule {
	core := in(g.core)
	return []Rule{
		rule("create", in(g.authn), "tokenreviews"),
		rule("create", in(g.authz), "localsubjectaccessreviews subjectaccessreviews"),
		rule(read, core, "services"),
		rule("create "+read, core, "nodes"),
		rule("patch update", core, "nodes/status"),
		rule("patch update", core, "nodes"),
		rule("create patch update", core, "events"),
		rule(read, core, "pods"),
		rule("create delete", core, "pods"),
		rule("patch update", core, "pods/status"),
		rule("create", core, "pods/eviction"),
		rule(read, core, "configmaps secrets"),
		rule("get", core, "persistentvolumeclaims persistentvolumes"),
		rule("get", core, "endpoints"),
		rule("create "+read, in(g.certs), "certificatesigningrequests"),
		rule("create delete get patch update", in(g.coord), "leases"),
		rule("get", in(g.storage), "volumeattachments"),
		rule("create", core, "serviceaccounts/token"),
		rule("get patch update", core, "persistentvolumeclaims/status"),
		rule(read, in(g.storage), "csidrivers"),
		rule("create delete get patch update", in(g.storage), "csinodes"),
		rule(read, in(g.node), "runtimeclasses"),
	}
}

func clusterRoles(b config.Brand) []ClusterRole {
	g := groupsOf(b)
	core := in(g.core)
	events := rule("create patch update", in(g.core, g.events), "events")
	agg := func(to string) map[string]string { return map[string]string{b.RBACAggregateLabel(to): "true"} }
	certRole := func(name string) string { return "system:certificates." + b.Domain + ":" + name }
	approver := func(signer string) ClusterRole {
		return ClusterRole{Name: certRole(signer + "-approver"), Rules: []Rule{rule("approve", in(g.certs), "signers", b.Label(signer))}}
	}
	return []ClusterRole{
		{Name: "cluster-admin", Rules: []Rule{rule("*", in("*"), "*"), urls("*", "*")}},
		{Name: "system:discovery", Rules: []Rule{urls("get", "/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/")}},
		{Name: "system:monitoring", Rules: []Rule{urls("get", "/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*")}},
		{Name: "system:basic-user", Rules: []Rule{
			rule("create", in(g.authz), "selfsubjectaccessreviews selfsubjectrulesreviews"),
			rule("create", in(g.authn), "selfsubjectreviews"),
		}},
		{Name: "system:public-info-viewer", Rules: []Rule{urls("get", "/healthz /livez /readyz /version /version/")}},
		{Name: "admin", AggregateFrom: []string{b.RBACAggregateLabel("admin")}},
		{Name: "edit", Labels: agg("admin"), AggregateFrom: []string{b.RBACAggregateLabel("edit")}},
		{Name: "view", Labels: agg("edit"), AggregateFrom: []string{b.RBACAggregateLabel("view")}},
		{Name: "system:aggregate-to-admin", Labels: agg("admin"), Rules: []Rule{
			rule("create", in(g.authz), "localsubjectaccessreviews"),
			rule(write+" "+read, in(g.rbac), "rolebindings roles"),
		}},
		{Name: "system:aggregate-to-edit", Labels: agg("edit"), Rules: []Rule{
			rule(read, core, "pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy"),
			rule("impersonate", core, "serviceaccounts"),
			rule(write, core, "pods pods/attach pods/exec pods/portforward pods/proxy"),
			rule("create", core, "pods/eviction"),
			rule(write, core, "configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy"),
			rule("create", core, "serviceaccounts/token"),
			rule(write, in(g.apps), "daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale"),
			rule(write, in(g.autoscaling), "horizontalpodautoscalers"),
			rule(write, in(g.batch), "cronjobs jobs"),
			rule(write, in(g.extensions), "daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale"),
			rule(write, in(g.policy), "poddisruptionbudgets"),
			rule(write, in(g.networking), "ingresses networkpolicies"),
			rule(write+" "+read, in(g.coord), "leases"),
		}},
		{Name: "system:aggregate-to-view", Labels: agg("view"), Rules: []Rule{
			rule(read, core, "configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status"),
			rule(read, core, "bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status"),
			rule(read, core, "namespaces"),
			rule(read, in(g.disco), "endpointslices"),
			rule(read, in(g.apps), "controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status"),
			rule(read, in(g.autoscaling), "horizontalpodautoscalers horizontalpodautoscalers/status"),
			rule(read, in(g.batch), "cronjobs cronjobs/status jobs jobs/status"),
			rule(read, in(g.extensions), "daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale"),
			rule(read, in(g.policy), "poddisruptionbudgets poddisruptionbudgets/status"),
			rule(read, in(g.networking), "ingresses ingresses/status networkpolicies"),
		}},
		{Name: "system:heapster", Rules: []Rule{rule(read, core, "events namespaces nodes pods"), rule(read, in(g.extensions), "deployments")}},
		{Name: "system:node", Rules: nodeRules(g)},
		{Name: "system:node-problem-detector", Rules: []Rule{rule("get", core, "nodes"), rule("patch", core, "nodes/status"), events}},
		{Name: "system:node-bootstrapper", Rules: []Rule{rule("create "+read, in(g.certs), "certificatesigningrequests")}},
		{Name: "system:auth-delegator", Rules: []Rule{rule("create", in(g.authn), "tokenreviews"), rule("create", in(g.authz), "subjectaccessreviews")}},
		{Name: "system:kube-aggregator", Rules: []Rule{rule(read, core, "endpoints services")}},
		{Name: "system:kube-controller-manager", Rules: []Rule{
			events,
			rule("create", in(g.coord), "leases"),
			rule("get update", in(g.coord), "leases", "kube-controller-manager"),
			rule("create", core, "secrets serviceaccounts"),
			rule("delete", core, "secrets"),
			rule("get", core, "configmaps namespaces secrets serviceaccounts"),
			rule("update", core, "secrets serviceaccounts"),
			rule("create", in(g.authn), "tokenreviews"),
			rule("create", in(g.authz), "subjectaccessreviews"),
			rule("list watch", in("*"), "*"),
			rule("create", core, "serviceaccounts/token"),
		}},
		{Name: "system:kube-dns", Rules: []Rule{rule("list watch", core, "endpoints services")}},
		{Name: "system:persistent-volume-provisioner", Rules: []Rule{
			rule("create delete get list watch", core, "persistentvolumes"),
			rule("get list update watch", core, "persistentvolumeclaims"),
			rule(read, in(g.storage), "storageclasses"),
			rule("watch", core, "events"),
			events,
		}},
		{Name: certRole("certificatesigningrequests:nodeclient"), Rules: []Rule{rule("create", in(g.certs), "certificatesigningrequests/nodeclient")}},
		{Name: certRole("certificatesigningrequests:selfnodeclient"), Rules: []Rule{rule("create", in(g.certs), "certificatesigningrequests/selfnodeclient")}},
		{Name: "system:volume-scheduler", Rules: []Rule{
			rule("get list patch update watch", core, "persistentvolumes"),
			rule(read, in(g.storage), "storageclasses"),
			rule("get list patch update watch", core, "persistentvolumeclaims"),
		}},
		approver("legacy-unknown"),
		approver("kubelet-serving"),
		approver("kube-apiserver-client"),
		approver("kube-apiserver-client-kubelet"),
		{Name: "system:service-account-issuer-discovery", Rules: []Rule{
			urls("get", "/.well-known/openid-configuration /.well-known/openid-configuration/ /openid/v1/jwks /openid/v1/jwks/"),
		}},
		{Name: "system:kubelet-api-admin", Rules: []Rule{
			rule(read, core, "nodes"),
			rule("proxy", core, "nodes"),
			rule("*", core, "nodes/log nodes/metrics nodes/proxy nodes/stats"),
		}},
		{Name: "system:node-proxier", Rules: []Rule{
			rule("list watch", core, "endpoints services"),
			rule(read, core, "nodes"),
			events,
			rule("list watch", in(g.disco), "endpointslices"),
		}},
		{Name: "system:kube-scheduler", Rules: []Rule{
			events,
			rule("create", in(g.coord), "leases"),
			rule("get list update watch", in(g.coord), "leases", "kube-scheduler"),
			rule(write+" "+read, in(g.coord), "leasecandidates"),
			rule(read, core, "nodes"),
			rule("delete "+read, core, "pods"),
			rule("create", core, "bindings pods/binding"),
			rule("patch update", core, "pods/status"),
			rule(read, core, "replicationcontrollers services"),
			rule(read, in(g.apps, g.extensions), "replicasets"),
			rule(read, in(g.apps), "statefulsets"),
			rule(read, in(g.policy), "poddisruptionbudgets"),
			rule(read, core, "persistentvolumeclaims persistentvolumes"),
			rule("create", in(g.authn), "tokenreviews"),
			rule("create", in(g.authz), "subjectaccessreviews"),
			rule(read, in(g.storage), "csinodes"),
			rule(read, in(g.storage), "volumeattachments"),
			rule(read, core, "namespaces"),
			rule(read, in(g.storage), "csidrivers"),
			rule(read, in(g.storage), "csistoragecapacities"),
		}},
	}
}

func clusterRoleBindings(b config.Brand) []Binding {
	bind := func(name string, subjects ...Subject) Binding {
		return Binding{Name: name, RoleKind: KindClusterRole, RoleName: name, Subjects: subjects}
	}
	group := func(n string) Subject { return Subject{Kind: KindGroup, Name: n} }
	user := func(n string) Subject { return Subject{Kind: KindUser, Name: n} }
	return []Binding{
		bind("cluster-admin", group("system:masters")),
		bind("system:monitoring", group("system:monitoring")),
		bind("system:discovery", group("system:authenticated")),
		bind("system:basic-user", group("system:authenticated")),
		bind("system:public-info-viewer", group("system:authenticated"), group("system:unauthenticated")),
		bind("system:node-proxier", user("system:kube-proxy")),
		bind("system:kube-controller-manager", user("system:kube-controller-manager")),
		bind("system:kube-dns", Subject{Kind: KindServiceAccount, Name: "kube-dns", Namespace: b.SystemNamespace}),
		bind("system:kube-scheduler", user("system:kube-scheduler")),
		bind("system:volume-scheduler", user("system:kube-scheduler")),
		// Nodes are authorized by the Node authorizer, not by a binding.
		bind("system:node"),
		bind("system:service-account-issuer-discovery", group("system:serviceaccounts")),
	}
}

func namespaced(b config.Brand) ([]Role, []Binding) {
	g := groupsOf(b)
	core := in(g.core)
	events := rule("create patch update", in(g.core, g.events), "events")
	sys, pub := b.SystemNamespace, b.PublicNamespace
	leaderLocking := func(component string) Role {
		return Role{Namespace: sys, Name: "system::leader-locking-" + component, Rules: []Rule{
			rule("watch", core, "configmaps"),
			rule("get update", core, "configmaps", component),
			rule("create get list update watch", in(g.coord), "leases"),
			rule("create get list update watch", in(g.coord), "leasecandidates"),
		}}
	}
	roles := []Role{
		{Namespace: sys, Name: "extension-apiserver-authentication-reader", Rules: []Rule{rule(read, core, "configmaps", "extension-apiserver-authentication")}},
		{Namespace: sys, Name: controllerPrefix + "bootstrap-signer", Rules: []Rule{rule(read, core, "secrets")}},
		{Namespace: sys, Name: controllerPrefix + "cloud-provider", Rules: []Rule{rule("create "+read, core, "configmaps")}},
		{Namespace: sys, Name: controllerPrefix + "token-cleaner", Rules: []Rule{rule("delete "+read, core, "secrets"), events}},
		leaderLocking("kube-controller-manager"),
		leaderLocking("kube-scheduler"),
		{Namespace: pub, Name: controllerPrefix + "bootstrap-signer", Rules: []Rule{
			rule(read, core, "configmaps"),
			rule("update", core, "configmaps", "cluster-info"),
			events,
		}},
	}
	user := func(n string) Subject { return Subject{Kind: KindUser, Name: n} }
	sa := func(n string) Subject { return Subject{Kind: KindServiceAccount, Name: n, Namespace: sys} }
	bind := func(ns, name, role string, subjects ...Subject) Binding {
		return Binding{Namespace: ns, Name: name, RoleKind: KindRole, RoleName: role, Subjects: subjects}
	}
	bindings := []Binding{
		bind(sys, "system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
			user("system:kube-controller-manager"), user("system:kube-scheduler")),
		bind(sys, "system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
			user("system:kube-controller-manager"), sa("kube-controller-manager"), sa("leader-election-controller")),
		bind(sys, "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler", user("system:kube-scheduler"), sa("kube-scheduler")),
		bind(sys, controllerPrefix+"bootstrap-signer", controllerPrefix+"bootstrap-signer", sa("bootstrap-signer")),
		bind(sys, controllerPrefix+"cloud-provider", controllerPrefix+"cloud-provider", sa("cloud-provider")),
		bind(sys, controllerPrefix+"token-cleaner", controllerPrefix+"token-cleaner", sa("token-cleaner")),
		bind(pub, controllerPrefix+"bootstrap-signer", controllerPrefix+"bootstrap-signer", sa("bootstrap-signer")),
	}
	return roles, bindings
}

package security

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"platd/config"
)

// NodesGroup is the group of kubelet identities; NodeUserPrefix starts
// their user names.
const (
	NodesGroup     = "system:nodes"
	NodeUserPrefix = "system:node:"
)

// ErrNodeRules is the error the Node authorizer's RulesFor returns for a
// node: what it allows depends on the graph, which no rule list says.
var ErrNodeRules = errors.New("node authorizer does not support user rule resolution")

// NodeIdentity returns the node name of a kubelet identity: a user in
// NodesGroup named NodeUserPrefix+<node>. isNode is false for any other
// user; the name may be empty ("system:node:").
func NodeIdentity(u *User) (node string, isNode bool) {
	if u == nil {
		return "", false
	}
	node, ok := strings.CutPrefix(u.Name, NodeUserPrefix)
	if !ok || !u.InGroup(NodesGroup) {
		return "", false
	}
	return node, true
}

// NodeAuthorizer authorizes kubelets, as upstream's Node mode: secrets,
// config maps, claims, volumes, service-account tokens, volume
// attachments, resource claims and slices only when the graph relates
// them to the requesting node; its own Lease, CSINode and Node object by
// name; pods by the node's field selector; anything else when the node
// role's rules allow it. It never denies, and has no opinion on users that
// are not nodes.
type NodeAuthorizer struct {
	graph *NodeGraph
	rules []ResourceRule
	// groups are the brand's spellings of the groups it looks at.
	storage, coordination, resource string
	leaseNamespace                  string
}

// NewNodeAuthorizer returns the Node authorizer over graph. rules are the
// node role's (system:node) rules, applied to requests the graph does not
// decide.
func NewNodeAuthorizer(graph *NodeGraph, rules []ResourceRule, b config.Brand) *NodeAuthorizer {
	return &NodeAuthorizer{
		graph: graph, rules: slices.Clone(rules),
		storage: b.Group("storage"), coordination: b.Group("coordination"), resource: b.Group("resource"),
		leaseNamespace: b.NodeLeaseNamespace,
	}
}

// RulesFor cannot list a node's rules: incomplete with ErrNodeRules. For
// other users it lists nothing, completely.
func (z *NodeAuthorizer) RulesFor(_ context.Context, u *User, _ string) (Rules, bool, error) {
	if _, isNode := NodeIdentity(u); isNode {
		return Rules{}, true, ErrNodeRules
	}
	return Rules{}, false, nil
}

// Authorize decides a kubelet's request.
func (z *NodeAuthorizer) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	node, isNode := NodeIdentity(a.User)
	if !isNode {
		return DecisionNoOpinion, "", nil
	}
	if node == "" {
		return DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", a.User.Name), nil
	}
	if a.ResourceRequest {
		switch [2]string{a.APIGroup, a.Resource} {
		case [2]string{"", "secrets"}:
			return z.readNamespaced(node, NodeSecret, a)
		case [2]string{"", "configmaps"}:
			return z.readNamespaced(node, NodeConfigMap, a)
		case [2]string{"", "persistentvolumeclaims"}:
			if a.Subresource == "status" {
				return z.statusUpdate(node, NodePVC, a)
			}
			return z.get(node, NodePVC, a)
		case [2]string{"", "persistentvolumes"}:
			return z.get(node, NodePV, a)
		case [2]string{z.resource, "resourceclaims"}:
			return z.get(node, NodeResourceClaim, a)
		case [2]string{z.storage, "volumeattachments"}:
			return z.get(node, NodeVolumeAttachment, a)
		case [2]string{"", "serviceaccounts"}:
			return z.createToken(node, a)
		case [2]string{z.coordination, "leases"}:
			return z.lease(node, a)
		case [2]string{z.storage, "csinodes"}:
			return z.csiNode(node, a)
		case [2]string{z.resource, "resourceslices"}:
			return z.resourceSlice(node, a)
		case [2]string{"", "nodes"}:
			return z.nodeObject(node, a)
		case [2]string{"", "pods"}:
			return z.pod(node, a)
		}
	}
	if rulesAllow(a, z.rules) {
		return DecisionAllow, "", nil
	}
	return DecisionNoOpinion, "", nil
}

func (z *NodeAuthorizer) statusUpdate(node string, kind NodeObject, a Attributes) (Decision, string, error) {
	if a.Verb != "update" && a.Verb != "patch" {
		return DecisionNoOpinion, "can only get/update/patch this type", nil
	}
	return z.related(node, kind, a)
}

func (z *NodeAuthorizer) get(node string, kind NodeObject, a Attributes) (Decision, string, error) {
	if a.Verb != "get" {
		return DecisionNoOpinion, "can only get individual resources of this type", nil
	}
	if a.Subresource != "" {
		return DecisionNoOpinion, "cannot get subresource", nil
	}
	return z.related(node, kind, a)
}

// readNamespaced allows get, list and watch of one object (list and watch
// name it by a metadata.name field selector).
func (z *NodeAuthorizer) readNamespaced(node string, kind NodeObject, a Attributes) (Decision, string, error) {
	if !readOnly(a.Verb) {
		return DecisionNoOpinion, "can only read resources of this type", nil
	}
	if a.Subresource != "" {
		return DecisionNoOpinion, "cannot read subresource", nil
	}
	if a.Namespace == "" {
		return DecisionNoOpinion, "can only read namespaced object of this type", nil
	}
	return z.related(node, kind, a)
}

// related allows the named object when the graph relates it to node.
func (z *NodeAuthorizer) related(node string, kind NodeObject, a Attributes) (Decision, string, error) {
	if a.Name == "" {
		return DecisionNoOpinion, "No Object name found", nil
	}
	if !z.graph.HasPath(node, kind, a.Namespace, a.Name) {
		return DecisionNoOpinion, noRelation(node), nil
	}
	return DecisionAllow, "", nil
}

func noRelation(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

func (z *NodeAuthorizer) createToken(node string, a Attributes) (Decision, string, error) {
	if a.Verb != "create" || a.Name == "" {
		return DecisionNoOpinion, "can only create tokens for individual service accounts", nil
	}
	if a.Subresource != "token" {
		return DecisionNoOpinion, "can only create token subresource of serviceaccount", nil
	}
	if !z.graph.HasPath(node, NodeServiceAccount, a.Namespace, a.Name) {
		return DecisionNoOpinion, noRelation(node), nil
	}
	return DecisionAllow, "", nil
}

// ownObjectVerb reports whether verb is one a node has on its own Lease
// and CSINode. The name of a create is not known here: upstream leaves
// that check to admission.
func ownObjectVerb(verb string) bool {
	switch verb {
	case "get", "create", "update", "patch", "delete":
		return true
	}
	return false
}

func (z *NodeAuthorizer) lease(node string, a Attributes) (Decision, string, error) {
	if !ownObjectVerb(a.Verb) {
		return DecisionNoOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if a.Namespace != z.leaseNamespace {
		return DecisionNoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", z.leaseNamespace), nil
	}
	if a.Verb != "create" && a.Name != node {
		return DecisionNoOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return DecisionAllow, "", nil
}

func (z *NodeAuthorizer) csiNode(node string, a Attributes) (Decision, string, error) {
	if !ownObjectVerb(a.Verb) {
		return DecisionNoOpinion, "can only get, create, update, patch, or delete a CSINode", nil
	}
	if a.Subresource != "" {
		return DecisionNoOpinion, "cannot authorize CSINode subresources", nil
	}
	if a.Verb != "create" && a.Name != node {
		return DecisionNoOpinion, "can only access CSINode with the same name as the requesting node", nil
	}
	return DecisionAllow, "", nil
}

func (z *NodeAuthorizer) resourceSlice(node string, a Attributes) (Decision, string, error) {
	if a.Subresource != "" {
		return DecisionNoOpinion, "cannot authorize ResourceSlice subresources", nil
	}
	switch a.Verb {
	case "create":
		// The new object's nodeName is admission's to check.
		return DecisionAllow, "", nil
	case "get", "update", "patch", "delete":
		return z.related(node, NodeResourceSlice, a)
	case "watch", "list", "deletecollection":
		if selects(a.FieldSelector, "spec.nodeName", node) || selects(a.FieldSelector, "nodeName", node) {
			return DecisionAllow, "", nil
		}
		return DecisionNoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector", nil
	}
	return DecisionNoOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection", nil
}

// nodeObject: a node may write Node objects and read only its own, by
// name, also before it exists. Upstream's NodeRestriction admission, off
// by default there and not run here, would limit the writes to its own.
func (z *NodeAuthorizer) nodeObject(node string, a Attributes) (Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "create", "update", "patch":
			return DecisionAllow, "", nil
		case "get", "list", "watch":
			switch a.Name {
			case node:
				return DecisionAllow, "", nil
			case "":
				return DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node), nil
			default:
				return DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, a.Name), nil
			}
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return DecisionAllow, "", nil
		}
	}
	return DecisionNoOpinion, "", nil
}

// pod: a node reads pods bound to it (one by name, or all with its
// spec.nodeName field selector), creates and deletes mirror pods, writes
// pod status and evicts. Upstream's NodeRestriction admission, off by
// default there and not run here, would limit those writes to its own
// pods.
func (z *NodeAuthorizer) pod(node string, a Attributes) (Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get":
			return z.get(node, NodePod, a)
		case "list", "watch":
			if selects(a.FieldSelector, "spec.nodeName", node) {
				return DecisionAllow, "", nil
			}
			if a.Name != "" {
				return z.related(node, NodePod, a)
			}
			return DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			return DecisionAllow, "", nil
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return DecisionAllow, "", nil
		}
	case "eviction":
		if a.Verb == "create" {
			return DecisionAllow, "", nil
		}
	}
	return DecisionNoOpinion, "", nil
}

// selects reports whether a field selector requires key to equal value
// (an "In" with that one value).
func selects(reqs []SelectorRequirement, key, value string) bool {
	for _, r := range reqs {
		if r.Key == key && r.Operator == "In" && len(r.Values) == 1 && r.Values[0] == value {
			return true
		}
	}
	return false
}

// rulesAllow reports whether any rule allows the resource request a, with
// RBAC's matching: "*" verbs, groups and resources, "*/sub" for a
// subresource of any resource, resource names when listed.
func rulesAllow(a Attributes, rules []ResourceRule) bool {
	if !a.ResourceRequest {
		return false
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	for _, r := range rules {
		if matchesAny(r.Verbs, a.Verb) && matchesAny(r.APIGroups, a.APIGroup) &&
			resourceMatches(r.Resources, combined, a.Subresource) &&
			(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, a.Name)) {
			return true
		}
	}
	return false
}

func matchesAny(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

func resourceMatches(list []string, combined, sub string) bool {
	for _, r := range list {
		if r == "*" || r == combined || sub != "" && r == "*/"+sub {
			return true
		}
	}
	return false
}

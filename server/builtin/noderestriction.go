package builtin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"platd/config"
	"platd/security"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/registry"
)

// NodeRestriction is upstream's NodeRestriction admission plugin: it
// limits what a kubelet (a user security.NodeIdentity names) may write
// to its own Node and Lease, its own CSINode, mirror pods bound to it,
// the status and eviction of pods bound to it, the status of claims,
// and service-account tokens bound to its pods. Other users' writes,
// and connects, pass untouched. It runs in the mutating phase, before
// the webhooks, and changes nothing.
type NodeRestriction struct {
	pods, nodes *registry.Descriptor
	// coordination and storage are the brand's spellings of the groups
	// of leases and CSINodes; leaseNamespace holds the node leases.
	coordination, storage, leaseNamespace string
	// mirrorAnnotation marks a pod a kubelet made from a manifest.
	mirrorAnnotation string
	// restrictedDomain is the label domain only others may set on
	// nodes (node-restriction.<domain>); brandDomains are the label
	// domains a node may set only the kubelet labels of.
	restrictedDomain string
	brandDomains     []string
	kubeletLabels    []string
	kubeletDomains   []string
	// recoverExpansion lets a node write a claim's allocated resources
	// too (the RecoverVolumeExpansionFailure feature).
	recoverExpansion bool
}

// errNoLookup answers a write whose admission was given no reads of the
// stored objects a plugin needs: a bug of its caller.
var errNoLookup = errors.New("admission: the write's admission cannot read stored objects")

// NewNodeRestriction returns the plugin of the brand, which reads pods
// and nodes as the descriptors say.
func NewNodeRestriction(b config.Brand, pods, nodes *registry.Descriptor, recoverExpansion bool) *NodeRestriction {
	l := b.LongDomain
	return &NodeRestriction{
		pods: pods, nodes: nodes,
		coordination: b.Group("coordination"), storage: b.Group("storage"), leaseNamespace: b.NodeLeaseNamespace,
		mirrorAnnotation: b.Label("config.mirror"),
		restrictedDomain: "node-restriction." + l,
		brandDomains:     slices.Compact([]string{l, b.Domain}),
		kubeletLabels: []string{
			b.Label("hostname"), "topology." + l + "/zone", "topology." + l + "/region",
			"failure-domain.beta." + l + "/zone", "failure-domain.beta." + l + "/region",
			"beta." + l + "/instance-type", "node." + l + "/instance-type",
			b.Label("os"), b.Label("arch"), "beta." + l + "/os", "beta." + l + "/arch",
		},
		kubeletDomains:   []string{"kubelet." + l, "node." + l},
		recoverExpansion: recoverExpansion,
	}
}

// MutatingEmpty is false: the plugin looks at every write.
func (p *NodeRestriction) MutatingEmpty() bool { return false }

// MayChange is false: the plugin only refuses.
func (p *NodeRestriction) MayChange() bool { return false }

// Mutate refuses a node's write the plugin does not allow; it never
// changes the object.
func (p *NodeRestriction) Mutate(_ context.Context, a *admission.Attributes) (registry.Object, error) {
	if a.Operation == admission.OpConnect {
		return nil, nil
	}
	node, isNode := security.NodeIdentity(a.User)
	if !isNode {
		return nil, nil
	}
	if node == "" {
		return nil, forbidWrite(a, "could not determine node from user %q", a.User.Name)
	}
	if a.Lookup == nil {
		return nil, apierr.InternalError(errNoLookup)
	}
	d := a.Descriptor
	switch {
	case d.Group == "" && d.Resource == "pods":
		switch a.Subresource {
		case "":
			return nil, p.admitPod(node, a)
		case "status":
			return nil, p.admitPodStatus(node, a)
		case "eviction":
			return nil, p.admitEviction(node, a)
		}
		return nil, forbidWrite(a, "unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource)
	case d.Group == "" && d.Resource == "nodes":
		return nil, p.admitNode(node, a)
	case d.Group == "" && d.Resource == "persistentvolumeclaims":
		if a.Subresource != "status" {
			return nil, forbidWrite(a, "may only update PVC status")
		}
		return nil, p.admitClaimStatus(node, a)
	case d.Group == "" && d.Resource == "serviceaccounts":
		return nil, p.admitToken(node, a)
	case d.Group == p.coordination && d.Resource == "leases":
		if a.Namespace != p.leaseNamespace {
			return nil, forbidWrite(a, "can only access leases in the %q system namespace", p.leaseNamespace)
		}
		if p.addressed(a) != node {
			return nil, forbidWrite(a, "can only access node lease with the same name as the requesting node")
		}
	case d.Group == p.storage && d.Resource == "csinodes":
		if p.addressed(a) != node {
			return nil, forbidWrite(a, "can only access CSINode with the same name as the requesting node")
		}
	}
	return nil, nil
}

// addressed is the name of the object a write is of: on create the
// object's own, as it was written.
func (p *NodeRestriction) addressed(a *admission.Attributes) string {
	if a.Operation == admission.OpCreate {
		return str(a.Object, "metadata", "name")
	}
	return a.Name
}

// admitPod lets a node create mirror pods of its own that reference no
// other object, and delete pods bound to it.
func (p *NodeRestriction) admitPod(node string, a *admission.Attributes) error {
	switch a.Operation {
	case admission.OpCreate:
		return p.admitMirrorPod(node, a)
	case admission.OpDelete:
		pod, err := p.storedPod(a, a.Name)
		if err != nil {
			return err
		}
		if podNode(pod) != node {
			return forbidWrite(a, "node %q can only delete pods with spec.nodeName set to itself", node)
		}
		return nil
	}
	return forbidWrite(a, "unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, node)
}

// admitMirrorPod checks a node's pod create, in upstream's order.
func (p *NodeRestriction) admitMirrorPod(node string, a *admission.Attributes) error {
	pod := a.Object
	if _, ok := mapOf(mapOf(pod["metadata"])["annotations"])[p.mirrorAnnotation]; !ok {
		return forbidWrite(a, "pod does not have %q annotation, node %q can only create mirror pods", p.mirrorAnnotation, node)
	}
	if podNode(pod) != node {
		return forbidWrite(a, "node %q can only create pods with spec.nodeName set to itself", node)
	}
	owners := mapsOf(mapOf(pod["metadata"])["ownerReferences"])
	switch len(owners) {
	case 0:
		return forbidWrite(a, "node %q can only create pods with an owner reference set to itself", node)
	case 1:
	default:
		return forbidWrite(a, "node %q can only create pods with a single owner reference set to itself", node)
	}
	owner := owners[0]
	if strOf(owner["apiVersion"]) != "v1" || strOf(owner["kind"]) != "Node" || strOf(owner["name"]) != node {
		return forbidWrite(a, "node %q can only create pods with an owner reference set to itself", node)
	}
	if !boolOf(owner["controller"]) {
		return forbidWrite(a, "node %q can only create pods with a controller owner reference set to itself", node)
	}
	if boolOf(owner["blockOwnerDeletion"]) {
		return forbidWrite(a, "node %q must not set blockOwnerDeletion on an owner reference", node)
	}
	n, err := a.Lookup.Get(p.nodes, "", node)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return err
	}
	if err != nil {
		return forbidWrite(a, "error looking up node %s to verify uid: %v", node, err)
	}
	if uid := str(n, "metadata", "uid"); strOf(owner["uid"]) != uid {
		return forbidWrite(a, "node %s UID mismatch: expected %s got %s", node, strOf(owner["uid"]), uid)
	}
	spec := mapOf(pod["spec"])
	if strOf(spec["serviceAccountName"]) != "" {
		return forbidWrite(a, "node %q can not create pods that reference a service account", node)
	}
	if referencesSecret(spec) {
		return forbidWrite(a, "node %q can not create pods that reference secrets", node)
	}
	if referencesConfigMap(spec) {
		return forbidWrite(a, "node %q can not create pods that reference configmaps", node)
	}
	for _, v := range mapsOf(spec["volumes"]) {
		for _, src := range mapsOf(mapOf(v["projected"])["sources"]) {
			if has(src, "clusterTrustBundle") {
				return forbidWrite(a, "node %q can not create pods that reference clustertrustbundles", node)
			}
		}
	}
	for _, v := range mapsOf(spec["volumes"]) {
		if has(v, "persistentVolumeClaim") {
			return forbidWrite(a, "node %q can not create pods that reference persistentvolumeclaims", node)
		}
	}
	return nil
}

// referencesConfigMap reports whether the pod names any config map:
// from any container's environment, or in a volume.
func referencesConfigMap(spec map[string]any) bool {
	if envReferences(spec, "configMapRef", "configMapKeyRef") {
		return true
	}
	for _, v := range mapsOf(spec["volumes"]) {
		if has(v, "configMap") {
			return true
		}
		for _, src := range mapsOf(mapOf(v["projected"])["sources"]) {
			if has(src, "configMap") {
				return true
			}
		}
	}
	return false
}

// admitPodStatus lets a node update the status of pods bound to it,
// without relabelling them or changing their claims' statuses.
func (p *NodeRestriction) admitPodStatus(node string, a *admission.Attributes) error {
	if a.Operation != admission.OpUpdate {
		return forbidWrite(a, "unexpected operation %q", a.Operation)
	}
	if podNode(a.OldObject) != node {
		return forbidWrite(a, "node %q can only update pod status for pods with spec.nodeName set to itself", node)
	}
	if !sameLabels(mapOf(mapOf(a.OldObject["metadata"])["labels"]), mapOf(mapOf(a.Object["metadata"])["labels"])) {
		return forbidWrite(a, "node %q cannot update labels through pod status", node)
	}
	if !sameClaimStatuses(mapsOf(mapOf(a.OldObject["status"])["resourceClaimStatuses"]), mapsOf(mapOf(a.Object["status"])["resourceClaimStatuses"])) {
		return forbidWrite(a, "node %q cannot update resource claim statues", node)
	}
	return nil
}

// sameClaimStatuses compares two pods' resource claim statuses by name
// and claim name, in order.
func sameClaimStatuses(x, y []map[string]any) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if strOf(x[i]["name"]) != strOf(y[i]["name"]) || has(x[i], "resourceClaimName") != has(y[i], "resourceClaimName") ||
			strOf(x[i]["resourceClaimName"]) != strOf(y[i]["resourceClaimName"]) {
			return false
		}
	}
	return true
}

// admitEviction lets a node evict pods bound to it.
func (p *NodeRestriction) admitEviction(node string, a *admission.Attributes) error {
	if a.Operation != admission.OpCreate {
		return forbidWrite(a, "unexpected operation %s", a.Operation)
	}
	name := a.Name
	if name == "" {
		if name = str(a.Object, "metadata", "name"); name == "" {
			return forbidWrite(a, "could not determine pod from request data")
		}
	}
	pod, err := p.storedPod(a, name)
	if err != nil {
		return err
	}
	if podNode(pod) != node {
		return forbidWrite(a, "node %s can only evict pods with spec.nodeName set to itself", node)
	}
	return nil
}

// storedPod is the stored pod called name in the write's namespace: the
// write's old object when it is that pod. A pod that is not there is
// answered 404; failing to read it, 403.
func (p *NodeRestriction) storedPod(a *admission.Attributes, name string) (registry.Object, error) {
	if name == "" {
		// The items of a deletecollection are admitted under the
		// collection's empty name, by which upstream finds no pod: the
		// collection skips them.
		return nil, apierr.NotFound(p.pods.Group, p.pods.Resource, name)
	}
	if a.OldObject != nil && a.Descriptor.Resource == p.pods.Resource && a.Subresource == "" {
		return a.OldObject, nil
	}
	pod, err := a.Lookup.Get(p.pods, a.Namespace, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil, err
	}
	if err != nil {
		return nil, forbidWrite(a, "%v", err)
	}
	return pod, nil
}

// claimStatusOwned are the members of a claim's status a node may write;
// claimStatusRecovery those it may write too while expansion failures
// are recovered from.
var (
	claimStatusOwned    = []string{"capacity", "conditions"}
	claimStatusRecovery = []string{"allocatedResourceStatuses", "allocatedResources"}
)

// admitClaimStatus lets a node update a claim's status capacity and
// conditions, and nothing else of it.
func (p *NodeRestriction) admitClaimStatus(node string, a *admission.Attributes) error {
	if a.Operation != admission.OpUpdate {
		return forbidWrite(a, "unexpected operation %q", a.Operation)
	}
	owned := claimStatusOwned
	if p.recoverExpansion {
		owned = append(slices.Clone(owned), claimStatusRecovery...)
	}
	if diff := claimDiff(a.OldObject, a.Object, owned); len(diff) > 0 {
		return forbidWrite(a, "node %q is not allowed to update fields other than status.capacity and status.conditions: %s", node, strings.Join(diff, ", "))
	}
	return nil
}

// claimDiff lists the top-level members (metadata's and status's one
// level down) that differ between two claims, leaving out the
// resourceVersion, the managed fields, the status members in owned, and
// the type's identity.
func claimDiff(old, obj registry.Object, owned []string) []string {
	var diff []string
	for _, k := range unionKeys(old, obj) {
		switch k {
		case "apiVersion", "kind":
			continue
		case "metadata", "status":
			skip := []string{"resourceVersion", "managedFields"}
			if k == "status" {
				skip = owned
			}
			o, n := mapOf(old[k]), mapOf(obj[k])
			for _, m := range unionKeys(o, n) {
				if !slices.Contains(skip, m) && !semanticEqual(o[m], n[m]) {
					diff = append(diff, k+"."+m)
				}
			}
			continue
		}
		if !semanticEqual(old[k], obj[k]) {
			diff = append(diff, k)
		}
	}
	return diff
}

// unionKeys are the members of x and y, sorted.
func unionKeys(x, y map[string]any) []string {
	keys := make([]string, 0, len(x)+len(y))
	for k := range x {
		keys = append(keys, k)
	}
	for k := range y {
		if _, ok := x[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// admitNode lets a node write only its own Node, without a config
// source, without changing its taints or owners, and setting no label
// outside those a kubelet sets.
func (p *NodeRestriction) admitNode(node string, a *admission.Attributes) error {
	if a.Name != node {
		return forbidWrite(a, "node %q is not allowed to modify node %q", node, a.Name)
	}
	spec := mapOf(a.Object["spec"])
	labels := mapOf(mapOf(a.Object["metadata"])["labels"])
	switch a.Operation {
	case admission.OpCreate:
		if has(spec, "configSource") {
			return forbidWrite(a, "node %q is not allowed to create pods with a non-nil configSource", node)
		}
		if bad := p.forbiddenLabels(modifiedLabels(labels, nil)); len(bad) > 0 {
			return forbidWrite(a, "node %q is not allowed to set the following labels: %s", node, strings.Join(bad, ", "))
		}
	case admission.OpUpdate:
		oldSpec := mapOf(a.OldObject["spec"])
		if has(spec, "configSource") && !semanticEqual(spec["configSource"], oldSpec["configSource"]) {
			return forbidWrite(a, "node %q is not allowed to update configSource to a new non-nil configSource", node)
		}
		if !semanticEqual(spec["taints"], oldSpec["taints"]) {
			return forbidWrite(a, "node %q is not allowed to modify taints", node)
		}
		if !semanticEqual(mapOf(a.Object["metadata"])["ownerReferences"], mapOf(a.OldObject["metadata"])["ownerReferences"]) {
			return forbidWrite(a, "node %q is not allowed to modify ownerReferences", node)
		}
		if bad := p.forbiddenLabels(modifiedLabels(labels, mapOf(mapOf(a.OldObject["metadata"])["labels"]))); len(bad) > 0 {
			return forbidWrite(a, "is not allowed to modify labels: %s", strings.Join(bad, ", "))
		}
	}
	return nil
}

// modifiedLabels are the keys whose values differ between two label
// sets, sorted.
func modifiedLabels(x, y map[string]any) []string {
	var out []string
	for _, k := range unionKeys(x, y) {
		xv, xok := x[k]
		yv, yok := y[k]
		if xok != yok || strOf(xv) != strOf(yv) {
			out = append(out, k)
		}
	}
	return out
}

// forbiddenLabels are the labels of keys (sorted) a node may not add,
// change or remove on its Node: those of the node-restriction domain,
// and those of the brand's domains that are not a kubelet's own.
func (p *NodeRestriction) forbiddenLabels(keys []string) []string {
	var out []string
	for _, k := range keys {
		domain, _, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		if inDomain(domain, p.restrictedDomain) || (slices.ContainsFunc(p.brandDomains, func(d string) bool { return inDomain(domain, d) }) && !p.kubeletLabel(k, domain)) {
			out = append(out, k)
		}
	}
	return out
}

// kubeletLabel reports whether a kubelet may set label key, of domain.
func (p *NodeRestriction) kubeletLabel(key, domain string) bool {
	return slices.Contains(p.kubeletLabels, key) || slices.ContainsFunc(p.kubeletDomains, func(d string) bool { return inDomain(domain, d) })
}

// inDomain reports whether domain is d or one of its subdomains.
func inDomain(domain, d string) bool { return domain == d || strings.HasSuffix(domain, "."+d) }

// admitToken lets a node request tokens only when bound to a pod
// scheduled on it.
func (p *NodeRestriction) admitToken(node string, a *admission.Attributes) error {
	if a.Operation != admission.OpCreate || a.Subresource != "token" {
		return nil
	}
	ref := mapOf(mapOf(a.Object["spec"])["boundObjectRef"])
	if ref == nil || strOf(ref["apiVersion"]) != "v1" || strOf(ref["kind"]) != "Pod" || strOf(ref["name"]) == "" {
		return forbidWrite(a, "node requested token not bound to a pod")
	}
	uid := strOf(ref["uid"])
	if uid == "" {
		return forbidWrite(a, "node requested token with a pod binding without a uid")
	}
	pod, err := p.storedPod(a, strOf(ref["name"]))
	if err != nil {
		return err
	}
	if uid != str(pod, "metadata", "uid") {
		return forbidWrite(a, "the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", uid)
	}
	if podNode(pod) != node {
		return forbidWrite(a, "node requested token bound to a pod scheduled on a different node")
	}
	return nil
}

// podNode is the node a pod is bound to.
func podNode(pod registry.Object) string { return str(pod, "spec", "nodeName") }

// forbidWrite is an admission plugin's refusal of a: 403 naming the
// resource (without its subresource) and the object as upstream's
// admission names it.
func forbidWrite(a *admission.Attributes, format string, args ...any) error {
	name, d := a.RefusedName(), a.Descriptor
	return apierr.NewForbidden(d.Group, d.Resource, name, fmt.Sprintf("%s %q is forbidden: %s", d.GroupResource(), name, fmt.Sprintf(format, args...)))
}

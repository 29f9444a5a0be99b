package security

import "sync"

// NodeObject is a kind of object the Node authorizer restricts by its
// relation to the requesting node.
type NodeObject int

// The object kinds of the node graph.
const (
	NodePod NodeObject = iota
	NodeSecret
	NodeConfigMap
	NodePVC
	NodePV
	NodeServiceAccount
	NodeResourceClaim
	NodeVolumeAttachment
	NodeResourceSlice
)

// nodeObjectNames are the kinds as upstream's graph names them in logs.
var nodeObjectNames = map[NodeObject]string{
	NodePod: "pod", NodeSecret: "secret", NodeConfigMap: "configmap", NodePVC: "pvc", NodePV: "pv",
	NodeServiceAccount: "serviceAccount", NodeResourceClaim: "resourceclaim", NodeVolumeAttachment: "volumeattachment",
	NodeResourceSlice: "resourceslice",
}

// String names the kind.
func (k NodeObject) String() string { return nodeObjectNames[k] }

// NodePodRefs is what a pod bound to a node lets that node read: the
// objects in the pod's namespace it references.
type NodePodRefs struct {
	Node            string
	Secrets         []string
	ConfigMaps      []string
	PVCs            []string
	ServiceAccounts []string
	ResourceClaims  []string
}

// NodePVRefs is a persistent volume's relations: the claim it is bound to
// (from spec.claimRef) and the secrets it references.
type NodePVRefs struct {
	ClaimNamespace, ClaimName string
	Secrets                   []NodeRef
}

// NodeRef names a namespaced object.
type NodeRef struct{ Namespace, Name string }

// nodeVertex is one object of the graph.
type nodeVertex struct {
	kind     NodeObject
	ns, name string
}

// NodeGraph holds which objects each node may reach, as upstream's node
// authorizer graph: a pod bound to a node leads to its secrets, config
// maps, claims and service account; a claim leads to the volume bound to
// it, a volume to its secrets; volume attachments and resource slices name
// their node. Every lookup is by index: no query walks all pods. Safe for
// concurrent use; Replace* swap one kind's whole state at once, so a
// relist never shows a half-built graph.
type NodeGraph struct {
	mu sync.RWMutex
	// pods is the refs of each bound pod, to undo them on change.
	pods map[NodeRef]*NodePodRefs
	// reach counts, per object a pod leads to (the pod included), the
	// pods on each node that lead there.
	reach map[nodeVertex]map[string]int
	pvs   map[string]*NodePVRefs
	// pvsOfSecret indexes the volumes referencing each secret.
	pvsOfSecret map[NodeRef]map[string]bool
	// attachments and slices map a name to its node.
	attachments map[string]string
	slices      map[string]string
}

// NewNodeGraph returns an empty graph.
func NewNodeGraph() *NodeGraph {
	return &NodeGraph{
		pods: map[NodeRef]*NodePodRefs{}, reach: map[nodeVertex]map[string]int{},
		pvs: map[string]*NodePVRefs{}, pvsOfSecret: map[NodeRef]map[string]bool{},
		attachments: map[string]string{}, slices: map[string]string{},
	}
}

// SetPod records the pod ns/name; nil refs, or refs without a node (an
// unscheduled pod), remove it. The graph keeps refs.
func (g *NodeGraph) SetPod(ns, name string, refs *NodePodRefs) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setPodLocked(NodeRef{ns, name}, refs)
}

// ReplacePods makes pods the graph's whole set of pods.
func (g *NodeGraph) ReplacePods(pods map[NodeRef]*NodePodRefs) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pods, g.reach = map[NodeRef]*NodePodRefs{}, map[nodeVertex]map[string]int{}
	for k, refs := range pods {
		g.setPodLocked(k, refs)
	}
}

func (g *NodeGraph) setPodLocked(k NodeRef, refs *NodePodRefs) {
	if old := g.pods[k]; old != nil {
		g.countPod(k, old, -1)
		delete(g.pods, k)
	}
	if refs == nil || refs.Node == "" {
		return
	}
	g.pods[k] = refs
	g.countPod(k, refs, 1)
}

// countPod adds d to the count of every object the pod leads to.
func (g *NodeGraph) countPod(k NodeRef, refs *NodePodRefs, d int) {
	add := func(kind NodeObject, name string) {
		v := nodeVertex{kind, k.Namespace, name}
		m := g.reach[v]
		if m == nil {
			m = map[string]int{}
			g.reach[v] = m
		}
		if m[refs.Node] += d; m[refs.Node] <= 0 {
			delete(m, refs.Node)
			if len(m) == 0 {
				delete(g.reach, v)
			}
		}
	}
	add(NodePod, k.Name)
	for _, l := range []struct {
		kind  NodeObject
		names []string
	}{
		{NodeSecret, refs.Secrets}, {NodeConfigMap, refs.ConfigMaps}, {NodePVC, refs.PVCs},
		{NodeServiceAccount, refs.ServiceAccounts}, {NodeResourceClaim, refs.ResourceClaims},
	} {
		for _, n := range l.names {
			add(l.kind, n)
		}
	}
}

// SetPV records the persistent volume name; nil refs remove it.
func (g *NodeGraph) SetPV(name string, refs *NodePVRefs) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setPVLocked(name, refs)
}

// ReplacePVs makes pvs the graph's whole set of persistent volumes.
func (g *NodeGraph) ReplacePVs(pvs map[string]*NodePVRefs) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pvs, g.pvsOfSecret = map[string]*NodePVRefs{}, map[NodeRef]map[string]bool{}
	for name, refs := range pvs {
		g.setPVLocked(name, refs)
	}
}

func (g *NodeGraph) setPVLocked(name string, refs *NodePVRefs) {
	if old := g.pvs[name]; old != nil {
		for _, s := range old.Secrets {
			if m := g.pvsOfSecret[s]; m != nil {
				delete(m, name)
				if len(m) == 0 {
					delete(g.pvsOfSecret, s)
				}
			}
		}
		delete(g.pvs, name)
	}
	if refs == nil {
		return
	}
	g.pvs[name] = refs
	for _, s := range refs.Secrets {
		m := g.pvsOfSecret[s]
		if m == nil {
			m = map[string]bool{}
			g.pvsOfSecret[s] = m
		}
		m[name] = true
	}
}

// SetVolumeAttachment records the attachment name as the node's; node ""
// removes it.
func (g *NodeGraph) SetVolumeAttachment(name, node string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	setNamed(g.attachments, name, node)
}

// ReplaceVolumeAttachments makes byName (name → node) the whole set.
func (g *NodeGraph) ReplaceVolumeAttachments(byName map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.attachments = cloneNamed(byName)
}

// SetResourceSlice records the slice name as the node's; node "" removes
// it.
func (g *NodeGraph) SetResourceSlice(name, node string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	setNamed(g.slices, name, node)
}

// ReplaceResourceSlices makes byName (name → node) the whole set.
func (g *NodeGraph) ReplaceResourceSlices(byName map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.slices = cloneNamed(byName)
}

func setNamed(m map[string]string, name, node string) {
	if node == "" {
		delete(m, name)
	} else {
		m[name] = node
	}
}

func cloneNamed(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// HasPath reports whether node reaches the object of kind in namespace ns
// (empty for cluster-scoped kinds) called name.
func (g *NodeGraph) HasPath(node string, kind NodeObject, ns, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	switch kind {
	case NodePV:
		return g.pvReachable(node, name)
	case NodeVolumeAttachment:
		n, ok := g.attachments[name]
		return ok && n == node
	case NodeResourceSlice:
		n, ok := g.slices[name]
		return ok && n == node
	}
	if g.reach[nodeVertex{kind, ns, name}][node] > 0 {
		return true
	}
	if kind == NodeSecret {
		for pv := range g.pvsOfSecret[NodeRef{ns, name}] {
			if g.pvReachable(node, pv) {
				return true
			}
		}
	}
	return false
}

// pvReachable: a volume is reached through the claim it is bound to.
func (g *NodeGraph) pvReachable(node, name string) bool {
	pv := g.pvs[name]
	return pv != nil && pv.ClaimName != "" && g.reach[nodeVertex{NodePVC, pv.ClaimNamespace, pv.ClaimName}][node] > 0
}

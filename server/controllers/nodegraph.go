package controllers

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"sync"

	"platd/bolt"
	"platd/security"
	"platd/server/registry"
	"platd/server/schema"
)

// NodeGraph keeps the Node authorizer's graph current from the store: the
// pods bound to nodes with the objects they reference, persistent volumes
// with their claims and secrets, volume attachments and resource slices
// with their nodes. Load fills the graph before the first request; Run
// follows the store from there.
type NodeGraph struct {
	Source Source
	Graph  *security.NodeGraph
	// Pods is required; the others are nil when not served.
	Pods, PersistentVolumes, VolumeAttachments, ResourceSlices *registry.Descriptor
	Log                                                        *slog.Logger

	feeds []graphFeed
}

// graphFeed follows one resource into the graph.
type graphFeed struct {
	d    *registry.Descriptor
	from int64
	// put records one object (nil value: removes it); replace swaps in a
	// full list at once.
	put     func(ns, name string, value []byte)
	replace func(kvs []bolt.KV)
}

// Load lists every followed resource into the graph.
func (c *NodeGraph) Load() error {
	c.feeds = nil
	if c.Pods != nil {
		c.feeds = append(c.feeds, c.podFeed())
	}
	if c.PersistentVolumes != nil {
		c.feeds = append(c.feeds, c.pvFeed())
	}
	if c.VolumeAttachments != nil {
		c.feeds = append(c.feeds, c.namedFeed(c.VolumeAttachments, c.Graph.SetVolumeAttachment, c.Graph.ReplaceVolumeAttachments))
	}
	if c.ResourceSlices != nil {
		c.feeds = append(c.feeds, c.namedFeed(c.ResourceSlices, c.Graph.SetResourceSlice, c.Graph.ReplaceResourceSlices))
	}
	for i := range c.feeds {
		f := &c.feeds[i]
		res, err := c.Source.List(f.d.ResourcePrefix(), bolt.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s for the node authorizer: %w", f.d.Resource, err)
		}
		f.replace(res.Items)
		f.from = res.Revision
	}
	return nil
}

// Run follows the store until ctx ends; call Load first.
func (c *NodeGraph) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, f := range c.feeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			followFrom(ctx, c.Source, f.d.ResourcePrefix(), f.from, c.Log, f.replace, func(ev bolt.Event) {
				ns, name, ok := f.d.SplitKey(ev.KV.Key)
				if !ok {
					return
				}
				if ev.Type == bolt.Delete {
					f.put(ns, name, nil)
				} else {
					f.put(ns, name, ev.KV.Value)
				}
			})
		}()
	}
	wg.Wait()
}

func (c *NodeGraph) podFeed() graphFeed {
	d := c.Pods
	return graphFeed{
		d: d,
		put: func(ns, name string, value []byte) {
			c.Graph.SetPod(ns, name, c.podRefs(name, value))
		},
		replace: func(kvs []bolt.KV) {
			all := map[security.NodeRef]*security.NodePodRefs{}
			for _, kv := range kvs {
				if ns, name, ok := d.SplitKey(kv.Key); ok {
					if refs := c.podRefs(name, kv.Value); refs != nil {
						all[security.NodeRef{Namespace: ns, Name: name}] = refs
					}
				}
			}
			c.Graph.ReplacePods(all)
		},
	}
}

func (c *NodeGraph) pvFeed() graphFeed {
	d := c.PersistentVolumes
	return graphFeed{
		d: d,
		put: func(_, name string, value []byte) {
			c.Graph.SetPV(name, c.pvRefs(value))
		},
		replace: func(kvs []bolt.KV) {
			all := map[string]*security.NodePVRefs{}
			for _, kv := range kvs {
				if _, name, ok := d.SplitKey(kv.Key); ok {
					if refs := c.pvRefs(kv.Value); refs != nil {
						all[name] = refs
					}
				}
			}
			c.Graph.ReplacePVs(all)
		},
	}
}

// namedFeed follows a cluster-scoped resource whose spec.nodeName names
// the node it belongs to.
func (c *NodeGraph) namedFeed(d *registry.Descriptor, set func(name, node string), replace func(map[string]string)) graphFeed {
	return graphFeed{
		d: d,
		put: func(_, name string, value []byte) {
			set(name, c.nodeNameOf(value))
		},
		replace: func(kvs []bolt.KV) {
			all := map[string]string{}
			for _, kv := range kvs {
				if _, name, ok := d.SplitKey(kv.Key); ok {
					all[name] = c.nodeNameOf(kv.Value)
				}
			}
			replace(all)
		},
	}
}

func (c *NodeGraph) nodeNameOf(value []byte) string {
	if value == nil {
		return ""
	}
	var o struct {
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(value, &o); err != nil {
		c.Log.Warn("node authorizer: unreadable object", "err", err)
		return ""
	}
	return o.Spec.NodeName
}

// Pod fields the graph reads.
type (
	graphPod struct {
		Spec struct {
			NodeName            string           `json:"nodeName"`
			ServiceAccountName  string           `json:"serviceAccountName"`
			ImagePullSecrets    []graphName      `json:"imagePullSecrets"`
			Containers          []graphContainer `json:"containers"`
			InitContainers      []graphContainer `json:"initContainers"`
			EphemeralContainers []graphContainer `json:"ephemeralContainers"`
			Volumes             []graphVolume    `json:"volumes"`
			ResourceClaims      []struct {
				Name                      string  `json:"name"`
				ResourceClaimName         *string `json:"resourceClaimName"`
				ResourceClaimTemplateName *string `json:"resourceClaimTemplateName"`
			} `json:"resourceClaims"`
		} `json:"spec"`
		Status struct {
			ResourceClaimStatuses []struct {
				Name              string  `json:"name"`
				ResourceClaimName *string `json:"resourceClaimName"`
			} `json:"resourceClaimStatuses"`
		} `json:"status"`
	}
	graphName      struct{ Name string }
	graphContainer struct {
		Env []struct {
			ValueFrom *struct {
				SecretKeyRef    *graphName `json:"secretKeyRef"`
				ConfigMapKeyRef *graphName `json:"configMapKeyRef"`
			} `json:"valueFrom"`
		} `json:"env"`
		EnvFrom []struct {
			SecretRef    *graphName `json:"secretRef"`
			ConfigMapRef *graphName `json:"configMapRef"`
		} `json:"envFrom"`
	}
	graphVolume struct {
		Name   string `json:"name"`
		Secret *struct {
			SecretName string `json:"secretName"`
		} `json:"secret"`
		ConfigMap             *graphName `json:"configMap"`
		PersistentVolumeClaim *struct {
			ClaimName string `json:"claimName"`
		} `json:"persistentVolumeClaim"`
		Ephemeral *json.RawMessage `json:"ephemeral"`
		Projected *struct {
			Sources []struct {
				Secret    *graphName `json:"secret"`
				ConfigMap *graphName `json:"configMap"`
			} `json:"sources"`
		} `json:"projected"`
		AzureFile *struct {
			SecretName string `json:"secretName"`
		} `json:"azureFile"`
		CSI *struct {
			NodePublishSecretRef *graphName `json:"nodePublishSecretRef"`
		} `json:"csi"`
		// The volume plugins that name their secret in secretRef.
		CephFS     *graphSecretRef `json:"cephfs"`
		Cinder     *graphSecretRef `json:"cinder"`
		FlexVolume *graphSecretRef `json:"flexVolume"`
		RBD        *graphSecretRef `json:"rbd"`
		ScaleIO    *graphSecretRef `json:"scaleIO"`
		ISCSI      *graphSecretRef `json:"iscsi"`
		StorageOS  *graphSecretRef `json:"storageos"`
	}
	graphSecretRef struct {
		SecretRef *graphName `json:"secretRef"`
	}
)

// podRefs reads what a pod lets its node reach; nil for a pod bound to
// no node (or unreadable bytes, logged).
func (c *NodeGraph) podRefs(name string, value []byte) *security.NodePodRefs {
	if value == nil || !mayNameNode(value) || unboundPod(value) {
		return nil
	}
	var p graphPod
	if err := json.Unmarshal(value, &p); err != nil {
		c.Log.Warn("node authorizer: unreadable pod", "name", name, "err", err)
		return nil
	}
	if p.Spec.NodeName == "" {
		return nil
	}
	r := &security.NodePodRefs{Node: p.Spec.NodeName}
	add := func(list *[]string, n string) {
		if n != "" && !slices.Contains(*list, n) {
			*list = append(*list, n)
		}
	}
	addRef := func(list *[]string, ref *graphName) {
		if ref != nil {
			add(list, ref.Name)
		}
	}
	add(&r.ServiceAccounts, p.Spec.ServiceAccountName)
	for _, s := range p.Spec.ImagePullSecrets {
		add(&r.Secrets, s.Name)
	}
	for _, cs := range [][]graphContainer{p.Spec.Containers, p.Spec.InitContainers, p.Spec.EphemeralContainers} {
		for _, ct := range cs {
			for _, e := range ct.Env {
				if e.ValueFrom != nil {
					addRef(&r.Secrets, e.ValueFrom.SecretKeyRef)
					addRef(&r.ConfigMaps, e.ValueFrom.ConfigMapKeyRef)
				}
			}
			for _, e := range ct.EnvFrom {
				addRef(&r.Secrets, e.SecretRef)
				addRef(&r.ConfigMaps, e.ConfigMapRef)
			}
		}
	}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.Secret != nil:
			add(&r.Secrets, v.Secret.SecretName)
		case v.ConfigMap != nil:
			add(&r.ConfigMaps, v.ConfigMap.Name)
		case v.PersistentVolumeClaim != nil:
			add(&r.PVCs, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			// The claim of a generic ephemeral volume is named after the
			// pod and the volume.
			add(&r.PVCs, name+"-"+v.Name)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				addRef(&r.Secrets, s.Secret)
				addRef(&r.ConfigMaps, s.ConfigMap)
			}
		case v.AzureFile != nil:
			add(&r.Secrets, v.AzureFile.SecretName)
		case v.CSI != nil:
			addRef(&r.Secrets, v.CSI.NodePublishSecretRef)
		}
		for _, s := range []*graphSecretRef{v.CephFS, v.Cinder, v.FlexVolume, v.RBD, v.ScaleIO, v.ISCSI, v.StorageOS} {
			if s != nil {
				addRef(&r.Secrets, s.SecretRef)
			}
		}
	}
	// A claim named in the spec is the pod's; one made from a template is
	// known once the status names it.
	for _, rc := range p.Spec.ResourceClaims {
		switch {
		case rc.ResourceClaimName != nil:
			add(&r.ResourceClaims, *rc.ResourceClaimName)
		case rc.ResourceClaimTemplateName != nil:
			for _, st := range p.Status.ResourceClaimStatuses {
				if st.Name == rc.Name && st.ResourceClaimName != nil {
					add(&r.ResourceClaims, *st.ResourceClaimName)
				}
			}
		}
	}
	return r
}

// unboundPod reports whether pod JSON surely names no node: no spec
// member (matched as encoding/json matches graphPod's tags) holds a
// nodeName other than "" or null. Most pods written are not bound yet, and
// this costs a scan instead of a decode of the whole pod.
func unboundPod(value []byte) bool {
	bound := false
	_, err := schema.EachMember(value, func(name, raw []byte) error {
		if bound || !bytes.EqualFold(name, specMember) || len(raw) == 0 || raw[0] != '{' {
			return nil
		}
		_, err := schema.EachMember(raw, func(name, raw []byte) error {
			if bytes.EqualFold(name, nodeNameMember) && string(raw) != `""` && string(raw) != "null" {
				bound = true
			}
			return nil
		})
		return err
	})
	return err == nil && !bound
}

var specMember, nodeNameMember = []byte("spec"), []byte("nodeName")

// mayNameNode reports whether pod JSON may hold a member that
// encoding/json reads as nodeName: raw JSON spells such a name with its
// letters in some case (no other character folds to one of them), or
// with a \u escape (the only escape that stands for a letter). Most pods
// written are not bound yet and hold neither, and looking costs far less
// than scanning them; a pod that may is scanned by unboundPod.
func mayNameNode(value []byte) bool {
	return bytes.Contains(value, unicodeEscape) || containsFoldNodeName(value)
}

var unicodeEscape = []byte(`\u`)

// nodeNameWord is "nodename" as a little-endian word.
const nodeNameWord = uint64('n') | uint64('o')<<8 | uint64('d')<<16 | uint64('e')<<24 |
	uint64('n')<<32 | uint64('a')<<40 | uint64('m')<<48 | uint64('e')<<56

// containsFoldNodeName reports whether b holds "nodename" in any case.
// Eight starting positions are tested at once for the two n's (at 0 and
// 4), and only the positions that have both are compared whole. Setting
// bit 0x20 folds exactly the upper case of a letter onto its lower case.
func containsFoldNodeName(b []byte) bool {
	const ones, highs, lower = ^uint64(0) / 255, ^uint64(0) / 255 * 0x80, ^uint64(0) / 255 * 0x20
	const ns = ones * 'n'
	at := func(i int) bool { return binary.LittleEndian.Uint64(b[i:])|lower == nodeNameWord }
	i := 0
	for ; i+12 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) | lower ^ ns
		y := binary.LittleEndian.Uint64(b[i+4:]) | lower ^ ns
		// A zero byte of x and y is an n at i+k and i+k+4; a byte above a
		// zero one may be marked too, so every mark is checked whole.
		for m := (x - ones) &^ x & (y - ones) &^ y & highs; m != 0; m &= m - 1 {
			if k := bits.TrailingZeros64(m) >> 3; i+k+8 <= len(b) && at(i+k) {
				return true
			}
		}
	}
	for ; i+8 <= len(b); i++ {
		if at(i) {
			return true
		}
	}
	return false
}

// graphPV holds the persistent volume fields the graph reads: the claim
// and every volume source, to find their secret references.
type graphPV struct {
	Spec map[string]json.RawMessage `json:"spec"`
}

type graphObjectRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// csiKubeletSecretRefs are the secret references of a CSI volume source
// that the kubelet uses.
var csiKubeletSecretRefs = []string{"nodePublishSecretRef", "nodeStageSecretRef", "nodeExpandSecretRef"}

// pvRefs reads a persistent volume's claim and secrets; nil when the
// bytes are unreadable (logged).
func (c *NodeGraph) pvRefs(value []byte) *security.NodePVRefs {
	if value == nil {
		return nil
	}
	var pv graphPV
	if err := json.Unmarshal(value, &pv); err != nil {
		c.Log.Warn("node authorizer: unreadable persistent volume", "err", err)
		return nil
	}
	r := &security.NodePVRefs{}
	var claim graphObjectRef
	if raw, ok := pv.Spec["claimRef"]; ok && json.Unmarshal(raw, &claim) == nil {
		r.ClaimNamespace, r.ClaimName = claim.Namespace, claim.Name
	}
	add := func(ns, name string) {
		ref := security.NodeRef{Namespace: ns, Name: name}
		if name != "" && !slices.Contains(r.Secrets, ref) {
			r.Secrets = append(r.Secrets, ref)
		}
	}
	for key, raw := range pv.Spec {
		var src map[string]json.RawMessage
		if key == "claimRef" || json.Unmarshal(raw, &src) != nil {
			continue
		}
		switch key {
		case "azureFile":
			var a struct {
				SecretName      string  `json:"secretName"`
				SecretNamespace *string `json:"secretNamespace"`
			}
			if json.Unmarshal(raw, &a) == nil {
				ns := r.ClaimNamespace
				if a.SecretNamespace != nil && *a.SecretNamespace != "" {
					ns = *a.SecretNamespace
				}
				add(ns, a.SecretName)
			}
		case "csi":
			// Every secret reference of a CSI source names its namespace.
			// Only those the kubelet uses are reachable: the controller
			// ones (publish, expand) are the storage controller's
			// credentials, which a node may not read, as upstream.
			for _, k := range csiKubeletSecretRefs {
				var ref graphObjectRef
				if v, ok := src[k]; ok && json.Unmarshal(v, &ref) == nil {
					add(ref.Namespace, ref.Name)
				}
			}
		default:
			var ref graphObjectRef
			if v, ok := src["secretRef"]; ok && json.Unmarshal(v, &ref) == nil {
				// A reference without a namespace is in the claim's;
				// StorageOS alone defaults to "default".
				if ref.Namespace == "" {
					ref.Namespace = r.ClaimNamespace
					if key == "storageos" {
						ref.Namespace = "default"
					}
				}
				add(ref.Namespace, ref.Name)
			}
		}
	}
	return r
}

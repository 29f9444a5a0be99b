package builtin

import (
	"fmt"
	"slices"
	"strings"

	"platd/server/registry"
	"platd/server/validation"
)

// Warnings of pods and pod templates for deprecated fields and values, and
// for specs that are valid but likely wrong, as upstream sends them on
// every create and update. Not (yet) sent: node affinity and topology
// spread terms, overlapping projected paths, fractional byte quantities,
// seccomp and AppArmor annotations, ports and pod affinity terms.

// deprecatedVolumes are the volume sources upstream warns about, in its
// order, with what it says of each. named is the member as the warning
// spells it: upstream names storageos "storageOS".
var deprecatedVolumes = []struct{ source, named, message string }{
	{"photonPersistentDisk", "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"},
	{"gitRepo", "gitRepo", "deprecated in v1.11"},
	{"scaleIO", "scaleIO", "deprecated in v1.16, non-functional in v1.22+"},
	{"flocker", "flocker", "deprecated in v1.22, non-functional in v1.25+"},
	{"storageos", "storageOS", "deprecated in v1.22, non-functional in v1.25+"},
	{"quobyte", "quobyte", "deprecated in v1.22, non-functional in v1.25+"},
	{"glusterfs", "glusterfs", "deprecated in v1.25, non-functional in v1.26+"},
	{"cephfs", "cephfs", "deprecated in v1.28, non-functional in v1.31+"},
	{"rbd", "rbd", "deprecated in v1.28, non-functional in v1.31+"},
}

// deprecatedNodeLabel returns what upstream says of a deprecated node
// label used in a selector.
func (r podRules) deprecatedNodeLabel(key string) (string, bool) {
	d := r.longDomain
	switch key {
	case "beta." + d + "/arch":
		return `deprecated since v1.14; use "` + d + `/arch" instead`, true
	case "beta." + d + "/os":
		return `deprecated since v1.14; use "` + d + `/os" instead`, true
	case "failure-domain.beta." + d + "/region":
		return `deprecated since v1.17; use "topology.` + d + `/region" instead`, true
	case "failure-domain.beta." + d + "/zone":
		return `deprecated since v1.17; use "topology.` + d + `/zone" instead`, true
	case "beta." + d + "/instance-type":
		return `deprecated since v1.17; use "node.` + d + `/instance-type" instead`, true
	}
	return "", false
}

// podWarnings returns the warnings of the pod (or pod template) whose
// metadata and spec are meta and spec, their paths under at ("" for a pod,
// "spec.template" for a workload).
func (r podRules) podWarnings(at fieldPath, meta, spec map[string]any) []string {
	var out []string
	warn := func(p fieldPath, msg string) { out = append(out, p.String()+": "+msg) }
	sp := at.child("spec")

	selector := mapOf(spec["nodeSelector"])
	keys := make([]string, 0, len(selector))
	for k := range selector {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if msg, ok := r.deprecatedNodeLabel(k); ok {
			warn(sp.child("nodeSelector").key(k), msg)
		}
	}

	annotations := mapOf(meta["annotations"])
	for _, a := range []struct{ key, message string }{
		{"scheduler.alpha." + r.longDomain + "/critical-pod", `non-functional in v1.16+; use the "priorityClassName" field instead`},
		{"security.alpha." + r.longDomain + "/sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
		{"security.alpha." + r.longDomain + "/unsafe-sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
	} {
		if _, ok := annotations[a.key]; ok {
			warn(at.child("metadata", "annotations").key(a.key), a.message)
		}
	}

	for i, v := range mapsOf(spec["volumes"]) {
		for _, dv := range deprecatedVolumes {
			if v[dv.source] != nil {
				warn(sp.child("volumes").index(i).child(dv.named), dv.message)
			}
		}
	}

	seenIPs := map[string]bool{}
	for i, h := range mapsOf(spec["hostAliases"]) {
		ip := strOf(h["ip"])
		if seenIPs[ip] {
			warn(sp.child("hostAliases").index(i).child("ip"), fmt.Sprintf("duplicate ip %q", ip))
		}
		seenIPs[ip] = true
	}
	secrets := mapsOf(spec["imagePullSecrets"])
	seenNames := map[string]bool{}
	for i, s := range secrets {
		name := strOf(s["name"])
		if seenNames[name] {
			warn(sp.child("imagePullSecrets").index(i).child("name"), fmt.Sprintf("duplicate name %q", name))
		}
		seenNames[name] = true
	}
	for i, s := range secrets {
		if name := strOf(s["name"]); name == "" {
			warn(sp.child("imagePullSecrets").index(i).child("name"), fmt.Sprintf("invalid empty name %q", name))
		}
	}

	for _, kind := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for ci, c := range mapsOf(spec[kind]) {
			seen := map[string]bool{}
			for i, e := range mapsOf(c["env"]) {
				name, value := strOf(e["name"]), strOf(e["value"])
				if !seen[name] {
					seen[name] = true
					continue
				}
				// A later definition that refers to the earlier one
				// ("$(X)-more") extends it; anything else replaces it, and
				// apply may drop one of the two.
				ref := "$(" + name + ")"
				if e["valueFrom"] != nil || value == ref || !strings.Contains(value, ref) {
					warn(sp.child(kind).index(ci).child("env").index(i), fmt.Sprintf("hides previous definition of %q, which may be dropped when using apply", name))
				}
			}
		}
	}

	if g, ok := intOf(spec["terminationGracePeriodSeconds"]); ok && g < 0 {
		warn(sp.child("terminationGracePeriodSeconds"), "must be >= 0; negative values are invalid and will be treated as 1")
	}
	return out
}

// podWarningsHook is the Warnings hook of a pod.
func (r podRules) podWarningsHook(obj, _ registry.Object) []string {
	return r.podWarnings(pathOf(""), mapOf(obj["metadata"]), mapOf(obj["spec"]))
}

// The warnings a create earns whose name is not a DNS label, for the kinds
// whose names become pods' hostnames (upstream since 1.27): a pod's own,
// and the workloads' whose pods are named after them.
const (
	podNameWarning      = "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: "
	workloadNameWarning = "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: "
)

// withNameWarning is a Warnings hook that, on create, warns with prefix
// and the name's problems when the name is not a DNS label, before the
// warnings of warn.
func withNameWarning(prefix string, warn func(obj, old registry.Object) []string) func(obj, old registry.Object) []string {
	return func(obj, old registry.Object) []string {
		var out []string
		if old == nil {
			if msgs := validation.IsDNS1123Label(str(obj, "metadata", "name")); len(msgs) > 0 {
				out = append(out, prefix+"["+strings.Join(msgs, " ")+"]")
			}
		}
		return append(out, warn(obj, old)...)
	}
}

// templateWarnings is the Warnings hook of a type holding a pod template
// at path (spec.template, say).
func (r podRules) templateWarnings(path ...string) func(obj, old registry.Object) []string {
	return func(obj, _ registry.Object) []string {
		t := mapAt(obj, path...)
		if t == nil {
			return nil
		}
		return r.podWarnings(pathOf("").child(path...), mapOf(t["metadata"]), mapOf(t["spec"]))
	}
}

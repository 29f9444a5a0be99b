package builtin

import (
	"fmt"

	"platd/server/apierr"
	"platd/server/registry"
)

// podSubresources are the subresources of a pod, as discovery lists them:
// the ones a node would serve answer that platd runs none; binding,
// eviction, ephemeralcontainers, resize and status are served.
func podSubresources(r podRules) []registry.Subresource {
	noNode := func(name, kind string, verbs ...string) registry.Subresource {
		return registry.Subresource{Name: name, Verbs: verbs, Version: "v1", Kind: kind, Serve: registry.ServeNoNode}
	}
	proxy := noNode("proxy", "PodProxyOptions", registry.VerbCreate, registry.VerbDelete, registry.VerbGet, registry.VerbPatch, registry.VerbUpdate)
	proxy.Proxy = true
	return []registry.Subresource{
		noNode("attach", "PodAttachOptions", registry.VerbCreate, registry.VerbGet),
		{Name: "binding", Verbs: []string{registry.VerbCreate}, Version: "v1", Kind: "Binding", Serve: registry.ServeBind},
		{Name: "ephemeralcontainers", Verbs: statusVerbs, Copy: registry.CopyPath("spec", "ephemeralContainers"), Validate: r.validateEphemeralContainersUpdate},
		{Name: "eviction", Verbs: []string{registry.VerbCreate}, Group: "policy", Version: "v1", Kind: "Eviction", Serve: registry.ServeEvict},
		noNode("exec", "PodExecOptions", registry.VerbCreate, registry.VerbGet),
		// Upstream names the log subresource's kind Pod.
		{Name: "log", Verbs: []string{registry.VerbGet}, Serve: registry.ServeNoNode},
		noNode("portforward", "PodPortForwardOptions", registry.VerbCreate, registry.VerbGet),
		proxy,
		{Name: "resize", Verbs: statusVerbs, Copy: copyPodResources, Validate: r.validateResize},
		{Name: "status", Verbs: statusVerbs, Validate: r.validatePodStatusUpdate},
	}
}

// validateEphemeralContainersUpdate checks a write of pods/ephemeralcontainers:
// the pod stays valid, and ephemeral containers once added are neither
// changed nor removed.
func (r podRules) validateEphemeralContainersUpdate(obj, old registry.Object) apierr.FieldErrors {
	errs := r.validatePodMetadataAndSpec(obj, true)
	const path = "spec.ephemeralContainers"
	current := map[string]map[string]any{}
	for _, c := range mapsOf(mapOf(obj["spec"])["ephemeralContainers"]) {
		current[strOf(c["name"])] = c
	}
	for _, prev := range mapsOf(mapOf(old["spec"])["ephemeralContainers"]) {
		name := strOf(prev["name"])
		switch now, ok := current[name]; {
		case !ok:
			errs = append(errs, apierr.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", name)))
		case !semanticEqual(prev, now):
			errs = append(errs, apierr.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be changed\n", name)))
		}
	}
	return errs
}

// copyPodResources moves what a resize may change, each container's
// resources and resize policy, from the written pod into the new state;
// containers are matched by name.
func copyPodResources(next, written registry.Object) {
	byName := map[string]map[string]any{}
	for _, c := range mapsOf(mapOf(written["spec"])["containers"]) {
		byName[strOf(c["name"])] = c
	}
	for _, c := range mapsOf(mapOf(next["spec"])["containers"]) {
		w, ok := byName[strOf(c["name"])]
		if !ok {
			continue
		}
		setOrDelete(c, "resources", w)
		setOrDelete(c, "resizePolicy", w)
	}
}

// validateResize checks a write of pods/resize: the resources are valid
// and the pod keeps its quality-of-service class.
func (r podRules) validateResize(obj, old registry.Object) apierr.FieldErrors {
	errs := r.validatePodMetadataAndSpec(obj, true)
	was := strOf(mapOf(old["status"])["qosClass"])
	if now := podQOSClass(mapOf(obj["spec"])); was != "" && now != was {
		errs = append(errs, apierr.Invalid("metadata", now, "Pod QoS is immutable"))
	}
	return errs
}

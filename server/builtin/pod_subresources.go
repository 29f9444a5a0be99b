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
	noNode := func(name, kind string, query []registry.QueryParam, verbs ...string) registry.Subresource {
		return registry.Subresource{Name: name, Verbs: verbs, Version: "v1", Kind: kind, Serve: registry.ServeNoNode,
			Connect: []string{registry.ConnectGet, registry.ConnectPost}, Query: query}
	}
	proxy := proxySubresource("PodProxyOptions")
	stdio := []registry.QueryParam{{Name: "container", Type: qString}, {Name: "stderr", Type: qBool},
		{Name: "stdin", Type: qBool}, {Name: "stdout", Type: qBool}, {Name: "tty", Type: qBool}}
	return []registry.Subresource{
		noNode("attach", "PodAttachOptions", stdio, registry.VerbCreate, registry.VerbGet),
		{Name: "binding", Verbs: []string{registry.VerbCreate}, Version: "v1", Kind: "Binding", Serve: registry.ServeBind},
		{Name: "ephemeralcontainers", Verbs: statusVerbs, Copy: registry.CopyPath("spec", "ephemeralContainers"), Validate: r.validateEphemeralContainersUpdate},
		{Name: "eviction", Verbs: []string{registry.VerbCreate}, Group: "policy", Version: "v1", Kind: "Eviction", Serve: registry.ServeEvict,
			AlsoAccepts: []string{"policy/v1beta1"}},
		noNode("exec", "PodExecOptions", append([]registry.QueryParam{{Name: "command", Type: qString, List: true}}, stdio...), registry.VerbCreate, registry.VerbGet),
		// Upstream names the log subresource's kind Pod; its parameters
		// are PodLogOptions' but sinceTime.
		{Name: "log", Verbs: []string{registry.VerbGet}, Serve: registry.ServeNoNode, Text: true, Query: []registry.QueryParam{
			{Name: "container", Type: qString}, {Name: "follow", Type: qBool}, {Name: "insecureSkipTLSVerifyBackend", Type: qBool},
			{Name: "limitBytes", Type: qInt}, {Name: "previous", Type: qBool}, {Name: "sinceSeconds", Type: qInt},
			{Name: "stream", Type: qString}, {Name: "tailLines", Type: qInt}, {Name: "timestamps", Type: qBool}}},
		noNode("portforward", "PodPortForwardOptions", []registry.QueryParam{{Name: "ports", Type: qInt, List: true}}, registry.VerbCreate, registry.VerbGet),
		proxy,
		{Name: "resize", Verbs: statusVerbs, Copy: copyPodResources, Validate: r.validateResize},
		{Name: "status", Verbs: statusVerbs, Keep: []string{"spec", "metadata.ownerReferences"}, Validate: r.validatePodStatusUpdate},
	}
}

// OpenAPI types of query parameters.
const (
	qString = "string"
	qInt    = "integer"
	qBool   = "boolean"
)

// proxySubresource is the proxy subresource of pods, nodes and services,
// whose options kind is kind: every method is connected, and a path may
// follow.
func proxySubresource(kind string) registry.Subresource {
	return registry.Subresource{Name: "proxy", Verbs: []string{registry.VerbCreate, registry.VerbDelete, registry.VerbGet, registry.VerbPatch, registry.VerbUpdate},
		Version: "v1", Kind: kind, Serve: registry.ServeNoNode, Proxy: true,
		Connect: registry.ProxyMethods(), Query: []registry.QueryParam{{Name: "path", Type: qString}}}
}

// staticPodsPath is the field a refusal of a static pod's ephemeral
// containers names: upstream's empty path, which prints as "[]".
const staticPodsPath = "[]"

// validateEphemeralContainersUpdate checks a write of pods/ephemeralcontainers:
// the pod stays valid, and ephemeral containers once added are neither
// changed nor removed. A static pod's mirror (it carries the mirror
// annotation) takes none: that is then the one error, as upstream.
func (r podRules) validateEphemeralContainersUpdate(obj, old registry.Object) apierr.FieldErrors {
	if _, mirror := mapOf(mapOf(old["metadata"])["annotations"])[r.mirrorAnnotation]; mirror {
		return apierr.FieldErrors{apierr.Forbidden(staticPodsPath, "static pods do not support ephemeral containers")}
	}
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

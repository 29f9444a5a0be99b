package builtin

import (
	"slices"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

// Conversion strategies of a CustomResourceDefinition.
const (
	conversionNone    = "None"
	conversionWebhook = "Webhook"
)

func apiExtensionsV1(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{customResourceDefinitions(b)}
}

// customResourceDefinitions: the types served at run time. The server
// turns each stored definition into descriptors of its own; this is only
// the definition object. As upstream, an update must name the
// resourceVersion it replaces, and the generation follows spec changes.
func customResourceDefinitions(b config.Brand) *registry.Descriptor {
	d := groupType(b.Group("apiextensions"), "customresourcedefinitions", "customresourcedefinition", "CustomResourceDefinition", false, "crd", "crds")
	d.Categories = []string{"api-extensions"}
	d.UpdateRequiresResourceVersion = true
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Validate: validateCRDStatusUpdate}}
	d.Strategy.Default = defaultCRD
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		startGeneration(obj)
		addStoredVersion(obj)
	}
	bump := bumpGenerationOnSpec(d)
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		bump(obj, old, sub)
		if sub == "" {
			addStoredVersion(obj)
		}
	}
	// The first DELETE only marks the definition: its custom resources
	// are removed first, and the cleanup finalizer holds it until then.
	d.Strategy.Graceful = true
	cleanup := CRDCleanupFinalizer(b)
	d.Strategy.PrepareForDelete = func(obj registry.Object) { markCRDTerminating(obj, cleanup, time.Now()) }
	d.Strategy.Validate = validateCRDWith(b, d)
	d.Strategy.ValidateUpdate = validateCRDUpdateWith(b, d)
	return d
}

// defaultCRD sets the defaults of the v1 type that a schema cannot say:
// the names derived from the kind, the conversion strategy, and the port
// of a conversion webhook's service.
func defaultCRD(obj registry.Object) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if names, _ := spec["names"].(map[string]any); names != nil {
		kind := strOf(names["kind"])
		if strOf(names["singular"]) == "" {
			names["singular"] = strings.ToLower(kind)
		}
		if strOf(names["listKind"]) == "" && kind != "" {
			names["listKind"] = kind + "List"
		}
	}
	conv, _ := spec["conversion"].(map[string]any)
	if conv == nil {
		spec["conversion"] = map[string]any{"strategy": conversionNone}
		return
	}
	if svc := mapAt(conv, "webhook", "clientConfig", "service"); svc != nil && !has(svc, "port") {
		svc["port"] = int64(defaultServicePort)
	}
}

// addStoredVersion records the storage version in status.storedVersions
// when it is not there yet: every version objects were ever stored in
// stays listed until someone migrates them and removes it.
func addStoredVersion(obj registry.Object) {
	for _, v := range mapsOf(valueAt(obj, "spec", "versions")) {
		if !boolOf(v["storage"]) {
			continue
		}
		name := strOf(v["name"])
		status := child(obj, "status")
		stored := listOf(status["storedVersions"])
		for _, s := range stored {
			if s == name {
				return
			}
		}
		status["storedVersions"] = append(stored, name)
		return
	}
}

// CRDCleanupFinalizer is the finalizer that keeps a deleted CRD until its
// custom resources are gone.
func CRDCleanupFinalizer(b config.Brand) string {
	return "customresourcecleanup." + b.Group("apiextensions")
}

// markCRDTerminating adds the cleanup finalizer and the Terminating
// condition to a CRD whose deletion starts, as upstream's first DELETE.
func markCRDTerminating(obj registry.Object, finalizer string, now time.Time) {
	md := child(obj, "metadata")
	fins := listOf(md["finalizers"])
	if !slices.Contains(fins, any(finalizer)) {
		md["finalizers"] = append(fins, finalizer)
	}
	status := child(obj, "status")
	conds := listOf(status["conditions"])
	cond := map[string]any{"type": "Terminating", "status": "True", "lastTransitionTime": now.UTC().Format(time.RFC3339),
		"reason": "InstanceDeletionPending", "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"}
	for i, c := range conds {
		old, _ := c.(map[string]any)
		if str(old, "type") != "Terminating" {
			continue
		}
		if str(old, "status") == "True" && str(old, "lastTransitionTime") != "" {
			cond["lastTransitionTime"] = old["lastTransitionTime"]
		}
		conds[i] = cond
		return
	}
	status["conditions"] = append(conds, cond)
}

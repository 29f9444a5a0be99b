package builtin

import (
	"strings"

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
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: keepSpec, Validate: validateCRDStatusUpdate}}
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
	d.Strategy.Validate = validateCRDWith(b, d)
	d.Strategy.ValidateUpdate = validateCRDUpdateWith(b, d)
	return d
}

// defaultCRD sets the defaults of the v1 type that a schema cannot say:
// the names derived from the kind, the conversion strategy, the port of a
// conversion webhook's service, and the stored versions.
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
	} else if svc := mapAt(conv, "webhook", "clientConfig", "service"); svc != nil && !has(svc, "port") {
		svc["port"] = int64(defaultServicePort)
	}
	// A status without stored versions gets the storage version, as a
	// status write that leaves them out would otherwise store none.
	if status, _ := obj["status"].(map[string]any); status != nil && len(listOf(status["storedVersions"])) == 0 {
		delete(status, "storedVersions")
		addStoredVersion(obj)
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

package builtin

import (
	"context"

	"platd/server/apierr"
	"platd/server/registry"
)

// admitAlwaysPull is AlwaysPullImages' mutating step: every container of
// a pod written (init, regular and ephemeral ones) pulls its image
// always (pullAlways): the node pulls it, with the pod's credentials,
// each time the container starts, so that an image a node already holds
// serves only pods allowed to pull it. An update that runs no image the pod did not run before is left
// as it is.
func admitAlwaysPull(_ context.Context, _ registry.Lookup, obj, old registry.Object) error {
	if noNewImages(obj, old) {
		return nil
	}
	eachContainerAt(mapOf(obj["spec"]), func(c map[string]any, _ fieldPath) {
		c["imagePullPolicy"] = pullAlways
	})
	return nil
}

// validateAlwaysPull is AlwaysPullImages' validating step: it refuses a
// pod written with a container that does not pull always (a mutating
// webhook changed what the mutating step set), one refusal per such
// container, under the same exemption of updates as admitAlwaysPull.
func validateAlwaysPull(_ context.Context, _ registry.Lookup, obj, old registry.Object) error {
	if noNewImages(obj, old) {
		return nil
	}
	var reasons []string
	eachContainerAt(mapOf(obj["spec"]), func(c map[string]any, p fieldPath) {
		if policy := strOf(c["imagePullPolicy"]); policy != pullAlways {
			reasons = append(reasons, apierr.NotSupported(p.child("imagePullPolicy").String(), policy, []string{pullAlways}).Error())
		}
	})
	if len(reasons) > 0 {
		return &registry.Denials{Reasons: reasons}
	}
	return nil
}

// noNewImages reports whether a write is an update all of whose
// containers run images some container of the old pod ran.
func noNewImages(obj, old registry.Object) bool {
	if old == nil {
		return false
	}
	had := map[string]bool{}
	eachContainerAt(mapOf(old["spec"]), func(c map[string]any, _ fieldPath) { had[strOf(c["image"])] = true })
	fresh := false
	eachContainerAt(mapOf(obj["spec"]), func(c map[string]any, _ fieldPath) { fresh = fresh || !had[strOf(c["image"])] })
	return !fresh
}

// eachContainerAt calls visit for every container of a pod spec with its
// path: init containers, then containers, then ephemeral containers.
func eachContainerAt(spec map[string]any, visit func(c map[string]any, p fieldPath)) {
	for _, kind := range containerKinds {
		for i, c := range mapsOf(spec[kind]) {
			visit(c, pathOf("spec").child(kind).index(i))
		}
	}
}

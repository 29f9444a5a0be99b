package builtin

import (
	"context"

	"platd/config"
	"platd/server/registry"
)

// Refusals of a claim's growth, worded as upstream's
// PersistentVolumeClaimResize admission words them.
const (
	msgResizeUnbound = "Only bound persistent volume claims can be expanded"
	msgResizeClass   = "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
)

// claimResize checks that a claim only grows where its volume can, as
// upstream's PersistentVolumeClaimResize admission: the claim must be
// bound, and keep naming a StorageClass that allows volume expansion.
type claimResize struct {
	// classes is the StorageClass descriptor; classAnnotation the beta
	// annotation naming a claim's class ahead of its field.
	classes         *registry.Descriptor
	classAnnotation string
}

func newClaimResize(b config.Brand, classes *registry.Descriptor) claimResize {
	return claimResize{classes: classes, classAnnotation: newClaimRules(b).classAnnotation}
}

// validate refuses an update raising the claim's storage request unless
// the stored claim is bound and its class allows expansion. Creates, and
// updates keeping or lowering the request, pass.
func (r claimResize) validate(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old == nil {
		return nil
	}
	grown, _ := amountsAt(obj, "spec", "resources", "requests").get(resourceStorage)
	was, _ := amountsAt(old, "spec", "resources", "requests").get(resourceStorage)
	if grown.Cmp(was) <= 0 {
		return nil
	}
	if str(old, "status", "phase") != claimBound {
		return &registry.Denial{Reason: msgResizeUnbound}
	}
	if !r.expandable(l, obj, old) {
		return &registry.Denial{Reason: msgResizeClass}
	}
	return nil
}

// expandable reports whether the claim names the same class before and
// after, and that class exists and sets allowVolumeExpansion true. A class
// that cannot be read does not allow it.
func (r claimResize) expandable(l registry.Lookup, obj, old registry.Object) bool {
	name := r.classOf(obj)
	if name == "" || name != r.classOf(old) {
		return false
	}
	class, err := l.Get(r.classes, "", name)
	if err != nil {
		return false
	}
	allow, _ := class["allowVolumeExpansion"].(bool)
	return allow
}

// classOf is the StorageClass a claim names: its beta annotation when it
// has one, whatever its value, else spec.storageClassName.
func (r claimResize) classOf(claim registry.Object) string {
	if v, ok := mapAt(claim, "metadata", "annotations")[r.classAnnotation]; ok {
		return strOf(v)
	}
	return str(claim, "spec", "storageClassName")
}

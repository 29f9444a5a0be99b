package builtin

import (
	"context"
	"time"

	"platd/server/registry"
)

// defaultClass names the default class of a new object that names none,
// as upstream's DefaultIngressClass and DefaultStorageClass admission
// plugins: an Ingress's IngressClass, a claim's StorageClass.
type defaultClass struct {
	// classes is the class descriptor; isDefault says whether a class is
	// marked default, named whether an object names a class already.
	classes   *registry.Descriptor
	isDefault func(class registry.Object) bool
	named     func(obj registry.Object) bool
	// field is the member of the object's spec that names its class.
	field string
}

// admit sets the class of a new object naming none to the default class,
// when there is one. Should several classes be marked default, the
// newest wins, then the first by name, as upstream.
func (c defaultClass) admit(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil || c.named(obj) {
		return nil
	}
	list, _, err := l.List(c.classes, "")
	if err != nil {
		return &registry.Denial{Reason: err.Error()}
	}
	var found registry.Object
	var foundAt time.Time
	for _, class := range list {
		if !c.isDefault(class) {
			continue
		}
		at, _ := time.Parse(time.RFC3339, str(class, "metadata", "creationTimestamp"))
		if found == nil || at.After(foundAt) ||
			(at.Equal(foundAt) && str(class, "metadata", "name") < str(found, "metadata", "name")) {
			found, foundAt = class, at
		}
	}
	if found != nil {
		child(obj, "spec")[c.field] = str(found, "metadata", "name")
	}
	return nil
}

// annotatedTrue returns whether an object's annotation key, or any of
// also, is "true".
func annotatedTrue(key string, also ...string) func(registry.Object) bool {
	return func(obj registry.Object) bool {
		ann := mapAt(obj, "metadata", "annotations")
		if strOf(ann[key]) == "true" {
			return true
		}
		for _, k := range also {
			if strOf(ann[k]) == "true" {
				return true
			}
		}
		return false
	}
}

// classNamed returns whether an object names a class in spec.field,
// however empty, or carries the legacy annotation, whatever its value.
func classNamed(field, annotation string) func(registry.Object) bool {
	return func(obj registry.Object) bool {
		if has(mapAt(obj, "spec"), field) {
			return true
		}
		_, ok := mapAt(obj, "metadata", "annotations")[annotation]
		return ok
	}
}

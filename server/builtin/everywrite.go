package builtin

import (
	"context"

	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/registry"
)

// AlwaysDeny is upstream's AlwaysDeny admission plugin: it refuses every
// create, update, delete and connect a client makes, as a test cluster
// uses it. The server's own writes (its default objects, its
// controllers') are not requests and pass, so platd still starts.
type AlwaysDeny struct{}

// MutatingEmpty is false: the plugin refuses every request.
func (AlwaysDeny) MutatingEmpty() bool { return false }

// MayChange is false: the plugin only refuses.
func (AlwaysDeny) MayChange() bool { return false }

// Mutate refuses a; it never changes the object.
func (AlwaysDeny) Mutate(_ context.Context, a *admission.Attributes) (registry.Object, error) {
	if a.User == nil {
		return nil, nil
	}
	return nil, forbidWrite(a, "admission control is denying all modifications")
}

// NamespaceExists is upstream's NamespaceExists admission plugin: a
// create, update or delete in a namespace that does not exist is
// answered 404 for the namespace, whichever plugins (NamespaceLifecycle)
// are off.
type NamespaceExists struct{ namespaces *registry.Descriptor }

// NewNamespaceExists returns the plugin, reading namespaces as the
// descriptor says.
func NewNamespaceExists(namespaces *registry.Descriptor) *NamespaceExists {
	return &NamespaceExists{namespaces: namespaces}
}

// Empty is false: the plugin checks every write in a namespace.
func (n *NamespaceExists) Empty() bool { return false }

// Validate refuses a write in a namespace that is not stored.
func (n *NamespaceExists) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Namespace == "" || a.Operation == admission.OpConnect || a.Descriptor.Resource == n.namespaces.Resource && a.Descriptor.Group == n.namespaces.Group {
		return nil
	}
	if a.Lookup == nil {
		return apierr.InternalError(errNoLookup)
	}
	_, err := readNamespace(a.Lookup, n.namespaces, a.Namespace)
	return err
}

// readNamespace reads the namespace called name as upstream's admission
// plugins read one: a missing namespace is the read's NotFound, any other
// failure an internal error.
func readNamespace(l registry.Lookup, namespaces *registry.Descriptor, name string) (registry.Object, error) {
	ns, err := l.Get(namespaces, "", name)
	if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
		return nil, apierr.InternalError(err)
	}
	return ns, err
}

package builtin

import "platd/server/registry"

// bindings assign pods to nodes: a create names the pod in the Binding
// and changes it; nothing is stored.
func bindings(pods *registry.Descriptor) *registry.Descriptor {
	d := core("bindings", "binding", "Binding", true)
	d.Verbs = []string{registry.VerbCreate}
	d.Serve = registry.ServeBind
	d.Acts = pods
	return d
}

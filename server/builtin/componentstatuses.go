package builtin

import (
	"context"

	"platd/server/registry"
)

// storageComponent is the one component platd reports. Upstream lists the
// controller manager, the scheduler and each etcd member; platd runs
// neither of the first two, and its storage is part of the process, so
// the report covers what can fail on its own: the storage, probed at the
// time of the request.
const storageComponent = "storage"

// componentHealthyMessage is what a healthy component says, as upstream's
// probes say it.
const componentHealthyMessage = "ok"

func componentStatuses() *registry.Descriptor {
	d := core("componentstatuses", "componentstatus", "ComponentStatus", false, "cs")
	d.Verbs = []string{registry.VerbGet, registry.VerbList}
	d.DeprecatedIn = "1.19"
	d.Computed = func(ctx context.Context, storage registry.Probe) []registry.Object {
		return []registry.Object{componentStatus(storageComponent, storage(ctx))}
	}
	return d
}

// componentStatus is the status of a component whose probe returned err.
func componentStatus(name string, err error) registry.Object {
	cond := map[string]any{"type": "Healthy", "status": "True", "message": componentHealthyMessage}
	if err != nil {
		cond = map[string]any{"type": "Healthy", "status": "False", "error": err.Error()}
	}
	return registry.Object{
		"kind": "ComponentStatus", "apiVersion": "v1",
		"metadata":   map[string]any{"name": name},
		"conditions": []any{cond},
	}
}

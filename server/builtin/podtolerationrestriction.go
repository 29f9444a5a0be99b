package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// podTolerationRestriction is upstream's PodTolerationRestriction
// admission plugin: a new pod gets its namespace's default tolerations
// (its annotation, else the configured ones), every pod that is not
// BestEffort the memory-pressure toleration, and a pod's tolerations must
// each be covered by one of its namespace's whitelist (its annotation,
// else the configured one), when there is one. It admits creates and
// updates of pods.
type podTolerationRestriction struct {
	namespaces *registry.Descriptor
	// defaultsKey and whitelistKey are the namespace annotations holding
	// its default tolerations and its whitelist, JSON lists.
	defaultsKey, whitelistKey string
	// defaults and whitelist are the configured ones, nil for none;
	// shared, they are copied into the pods they join.
	defaults, whitelist []map[string]any
	// memoryPressure tolerates the taint of nodes short of memory.
	memoryPressure map[string]any
}

func newPodTolerationRestriction(b config.Brand, namespaces *registry.Descriptor, c config.PodTolerationRestrictionConfiguration) podTolerationRestriction {
	return podTolerationRestriction{
		namespaces:     namespaces,
		defaultsKey:    "scheduler.alpha." + b.Label("defaultTolerations"),
		whitelistKey:   "scheduler.alpha." + b.Label("tolerationsWhitelist"),
		defaults:       tolerationObjects(c.Default),
		whitelist:      tolerationObjects(c.Whitelist),
		memoryPressure: map[string]any{"key": "node." + b.Label("memory-pressure"), "operator": tolerationOpExists, "effect": "NoSchedule"},
	}
}

// admitPod merges into the pod's tolerations, after them, its namespace's
// defaults (on create) and the memory-pressure toleration (unless the
// pod is BestEffort), a toleration another covers left out; then it
// checks the pod as validatePod does.
func (p podTolerationRestriction) admitPod(ctx context.Context, l registry.Lookup, obj, old registry.Object) error {
	var extra []map[string]any
	if old == nil {
		ns, err := readNamespace(l, p.namespaces, str(obj, "metadata", "namespace"))
		if err != nil {
			return err
		}
		defaults, err := p.annotated(ns, p.defaultsKey)
		if err != nil {
			return err
		}
		if defaults == nil {
			defaults = p.defaults
		}
		extra = append(extra, defaults...)
	}
	if podQOS(obj) != qosBestEffort {
		extra = append(extra, p.memoryPressure)
	}
	if len(extra) > 0 {
		spec := child(obj, "spec")
		merged := mergeTolerations(mapsOf(spec["tolerations"]), extra)
		list := make([]any, len(merged))
		for i, t := range merged {
			list[i] = t
		}
		// What joins the pod is its own: the configured tolerations are
		// shared.
		spec["tolerations"] = schema.DeepCopy(list)
	}
	return p.validatePod(ctx, l, obj, old)
}

// validatePod checks that each of a pod's tolerations is covered by one
// of its namespace's whitelist. The refusal is a plain error, answered
// 500 as upstream answers it.
func (p podTolerationRestriction) validatePod(_ context.Context, l registry.Lookup, obj, _ registry.Object) error {
	tolerations := mapsOf(mapOf(obj["spec"])["tolerations"])
	if len(tolerations) == 0 {
		return nil
	}
	ns, err := readNamespace(l, p.namespaces, str(obj, "metadata", "namespace"))
	if err != nil {
		return err
	}
	whitelist, err := p.annotated(ns, p.whitelistKey)
	if err != nil {
		return err
	}
	scope := "namespace"
	if whitelist == nil {
		whitelist, scope = p.whitelist, "cluster"
	}
	if len(whitelist) == 0 {
		return nil
	}
next:
	for _, t := range tolerations {
		for _, w := range whitelist {
			if toleratesSuperset(w, t) {
				continue next
			}
		}
		return fmt.Errorf("pod tolerations (possibly merged with namespace default tolerations) conflict with its %s whitelist", scope)
	}
	return nil
}

// annotated returns the tolerations of the namespace's annotation key:
// nil without the annotation, none (not nil) when it is empty, and a
// decoding error as upstream words it.
func (p podTolerationRestriction) annotated(ns registry.Object, key string) ([]map[string]any, error) {
	v, ok := mapOf(mapOf(ns["metadata"])["annotations"])[key]
	if !ok {
		return nil, nil
	}
	var ts []config.Toleration
	if s := strOf(v); s != "" {
		if err := json.Unmarshal([]byte(s), &ts); err != nil {
			return nil, tolerationsJSONError(err)
		}
	}
	out := tolerationObjects(ts)
	if out == nil {
		out = []map[string]any{}
	}
	return out, nil
}

// tolerationObjects are ts as a pod spec holds them; nil for nil.
func tolerationObjects(ts []config.Toleration) []map[string]any {
	if ts == nil {
		return nil
	}
	out := make([]map[string]any, len(ts))
	for i, t := range ts {
		m := map[string]any{}
		for k, v := range map[string]string{"key": t.Key, "operator": t.Operator, "value": t.Value, "effect": t.Effect} {
			if v != "" {
				m[k] = v
			}
		}
		if t.TolerationSeconds != nil {
			m["tolerationSeconds"] = *t.TolerationSeconds
		}
		out[i] = m
	}
	return out
}

// upstreamTolerationTypes are the Go types upstream decodes a namespace's
// toleration annotation into, by the types it is decoded into here or by
// the field, as its decoding errors name them.
var upstreamTolerationTypes = map[any]string{
	reflect.TypeFor[[]config.Toleration](): "[]v1.Toleration",
	reflect.TypeFor[config.Toleration]():   "v1.Toleration",
	"operator":                             "v1.TolerationOperator",
	"effect":                               "v1.TaintEffect",
}

// tolerationsJSONError is err, from decoding a toleration annotation,
// with the Go types upstream's decoding would name.
func tolerationsJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	typ := te.Type.String()
	if name, ok := upstreamTolerationTypes[te.Type]; ok {
		typ = name
	} else if name, ok := upstreamTolerationTypes[te.Field]; ok {
		typ = name
	}
	if te.Struct != "" || te.Field != "" {
		return fmt.Errorf("json: cannot unmarshal %s into Go struct field %s.%s of type %s", te.Value, te.Struct, te.Field, typ)
	}
	return fmt.Errorf("json: cannot unmarshal %s into Go value of type %s", te.Value, typ)
}

// podQOS is a pod's quality-of-service class: its status's when set,
// else computed from its spec, as upstream reads it.
func podQOS(obj registry.Object) string {
	if c := str(obj, "status", "qosClass"); c != "" {
		return c
	}
	return podQOSClass(mapOf(obj["spec"]))
}

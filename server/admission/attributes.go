// Package admission enforces ValidatingAdmissionPolicies, as upstream's
// ValidatingAdmissionPolicy admission plugin (GA, on by default in
// v1.32): every create, update and delete of every resource is matched
// against the policies and their bindings, and the CEL expressions of
// the policies that apply decide whether it is denied, warned of or
// recorded in the audit log.
//
// Policies keeps the policies and bindings compiled (once per policy
// generation, never per request); a watch-driven controller hands it
// every change. Validate is the admission step the write path runs
// after a write passed validation.
//
// Webhooks calls the admission webhooks of the stored Validating- and
// MutatingWebhookConfigurations, as upstream's ValidatingAdmissionWebhook
// and MutatingAdmissionWebhook plugins (on by default), matching writes
// as the policies do: Mutate in the mutating phase, Validate after the
// policies.
package admission

import (
	"context"

	"reflect"
	"time"

	"platd/security"
	"platd/server/registry"
	"platd/server/schema"
)

// The operations of admission requests, as upstream names them.
const (
	OpCreate  = "CREATE"
	OpUpdate  = "UPDATE"
	OpDelete  = "DELETE"
	OpConnect = "CONNECT"
	opAll     = "*"
)

// Attributes describe one write for admission.
type Attributes struct {
	// Descriptor is the resource written, in the version the request
	// addressed.
	Descriptor *registry.Descriptor
	// Subresource is the subresource written, "" for the main resource.
	Subresource string
	// Kind is the kind of the objects when it is not the resource's own
	// (a Scale, a Binding, an Eviction, a connect's options); nil
	// otherwise.
	Kind *GroupVersionKind
	// KindSchema describes objects of Kind: a mutating webhook's patch
	// to such an object is decoded with it (generically when nil).
	KindSchema *schema.Schema
	// Operation is OpCreate, OpUpdate, OpDelete or OpConnect.
	Operation string
	// Namespace and Name address the object; Name is "" for a create
	// whose name is yet to be generated.
	Namespace, Name string
	// Object is the new state (nil on delete); OldObject the stored
	// state (nil on create). Neither is changed.
	Object, OldObject registry.Object
	// DryRun says the write will not be stored.
	DryRun bool
	// User is who writes; nil for the server's own writes.
	User *security.User
	// OptionsKind is the kind of the operation's options
	// (CreateOptions, UpdateOptions, DeleteOptions).
	OptionsKind string
	// Lookup reads the server's stored objects, for admission that
	// checks a write against others (the pod a node deletes); nil when
	// the write's caller has none to give.
	Lookup registry.Lookup
	// Options are the members the request gave its options object
	// (fieldManager, fieldValidation, dryRun; a deletion's
	// propagationPolicy, gracePeriodSeconds, preconditions...), in the
	// generic decoded form; nil gives only dryRun, from DryRun.
	Options map[string]any

	// requested is the resource the request addressed, when Descriptor
	// is an equivalent version a policy matched it as (see as).
	requested *registry.Descriptor
}

// as is the request as a request for d, an equivalent version of its
// resource (sharing its stored form): the objects converted to d's
// version through the stored form. A conversion that fails fails the
// request.
func (a *Attributes) as(ctx context.Context, d *registry.Descriptor) (*Attributes, error) {
	if d == a.Descriptor {
		return a, nil
	}
	out := *a
	out.Descriptor, out.requested = d, a.Descriptor
	if a.Kind == nil {
		// Objects of another kind (a Scale) are the same in every version
		// of the resource.
		var err error
		if out.Object, err = convert(ctx, a.Descriptor, d, a.Object); err != nil {
			return nil, err
		}
		if out.OldObject, err = convert(ctx, a.Descriptor, d, a.OldObject); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// convert turns obj, of from's version, into to's.
func convert(ctx context.Context, from, to *registry.Descriptor, obj registry.Object) (registry.Object, error) {
	if obj == nil {
		return nil, nil
	}
	out, _ := schema.DeepCopy(obj).(map[string]any)
	if to.Storage != nil && to.Storage.Converter != nil {
		out["kind"], out["apiVersion"] = from.Kind, from.GroupVersion()
		return to.Storage.Converter.Convert(ctx, out, to.GroupVersion())
	}
	if from.Storage != nil && from.Storage.ToStorage != nil {
		out = from.Storage.ToStorage(out)
	}
	if to.Storage != nil && to.Storage.FromStorage != nil {
		out = to.Storage.FromStorage(out)
	}
	out["kind"], out["apiVersion"] = to.Kind, to.GroupVersion()
	return out, nil
}

// GroupVersionKind names a kind.
type GroupVersionKind struct{ Group, Version, Kind string }

// apiVersion is the kind's group and version as objects name them.
func (k *GroupVersionKind) apiVersion() string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// namespace is the request's namespace as upstream's admission sees it:
// for a namespace object, its own name.
func (a *Attributes) namespace() string {
	if a.Descriptor.IsNamespace {
		return a.Name
	}
	return a.Namespace
}

// RefusedName is the name a refusal of the write gives its object: the
// name the request addressed, else ObjectName's.
func (a *Attributes) RefusedName() string {
	if a.Name != "" {
		return a.Name
	}
	return ObjectName(a.Object)
}

// ObjectName is the name a refusal gives an object the request did not
// name: its name, its generateName when it has none (the mutating phase
// runs before a name is generated), else upstream's "Unknown".
func ObjectName(obj registry.Object) string {
	m, _ := obj["metadata"].(map[string]any)
	if n, _ := m["name"].(string); n != "" {
		return n
	}
	if g, _ := m["generateName"].(string); g != "" {
		return g
	}
	return "Unknown"
}

// labels are the labels of obj's metadata; nil for a nil object.
func labels(obj registry.Object) (map[string]string, bool) {
	if obj == nil {
		return nil, false
	}
	m, _ := obj["metadata"].(map[string]any)
	l, _ := m["labels"].(map[string]any)
	out := make(map[string]string, len(l))
	for k, v := range l {
		s, _ := v.(string)
		out[k] = s
	}
	return out, true
}

// request is the admission request the expressions see as `request`:
// upstream's AdmissionRequest in its JSON form, without uid and objects,
// empty optional members left out.
func (a *Attributes) request(metaGroup string) map[string]any {
	d := a.Descriptor
	kind := map[string]any{"group": d.Group, "version": d.Version, "kind": d.Kind}
	if a.Kind != nil {
		kind = map[string]any{"group": a.Kind.Group, "version": a.Kind.Version, "kind": a.Kind.Kind}
	}
	resource := map[string]any{"group": d.Group, "version": d.Version, "resource": d.Resource}
	requestKind, requestResource := kind, resource
	if rd := a.requested; rd != nil {
		if a.Kind == nil {
			requestKind = map[string]any{"group": rd.Group, "version": rd.Version, "kind": rd.Kind}
		}
		requestResource = map[string]any{"group": rd.Group, "version": rd.Version, "resource": rd.Resource}
	}
	r := map[string]any{
		"kind": kind, "resource": resource, "requestKind": requestKind, "requestResource": requestResource,
		"operation": a.Operation, "dryRun": a.DryRun,
	}
	setNonEmpty(r, "subResource", a.Subresource)
	setNonEmpty(r, "requestSubResource", a.Subresource)
	setNonEmpty(r, "name", a.Name)
	setNonEmpty(r, "namespace", a.namespace())
	u := map[string]any{}
	if a.User != nil {
		setNonEmpty(u, "username", a.User.Name)
		setNonEmpty(u, "uid", a.User.UID)
		if len(a.User.Groups) > 0 {
			u["groups"] = anyStrings(a.User.Groups)
		}
		if len(a.User.Extra) > 0 {
			extra := make(map[string]any, len(a.User.Extra))
			for k, v := range a.User.Extra {
				extra[k] = anyStrings(v)
			}
			u["extra"] = extra
		}
	}
	r["userInfo"] = u
	if a.OptionsKind != "" {
		opts := make(map[string]any, len(a.Options)+2)
		for k, v := range a.Options {
			opts[k] = v
		}
		opts["kind"], opts["apiVersion"] = a.OptionsKind, metaGroup+"/v1"
		if _, ok := opts["dryRun"]; !ok && a.DryRun {
			opts["dryRun"] = []any{"All"}
		}
		r["options"] = opts
	}
	return r
}

// conditionRequest is the request match conditions see, as upstream's
// matcher builds it: the matched kind, but the resource the request
// addressed.
func conditionRequest(r map[string]any) map[string]any {
	if reflect.DeepEqual(r["resource"], r["requestResource"]) {
		return r
	}
	out := make(map[string]any, len(r))
	for k, v := range r {
		out[k] = v
	}
	out["resource"] = r["requestResource"]
	return out
}

func setNonEmpty(m map[string]any, key, value string) {
	if value != "" {
		m[key] = value
	}
}

func anyStrings(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// namespaceObject is the part of a namespace expressions see as
// namespaceObject: its metadata (less managed fields and owners), spec
// and status, with its times as timestamps, as their CEL types say.
func namespaceObject(ns registry.Object) map[string]any {
	if ns == nil {
		return nil
	}
	out := map[string]any{}
	if m, ok := ns["metadata"].(map[string]any); ok {
		meta := map[string]any{}
		for _, k := range []string{"name", "generateName", "namespace", "labels", "annotations", "uid", "creationTimestamp",
			"deletionGracePeriodSeconds", "deletionTimestamp", "generation", "resourceVersion", "finalizers"} {
			if v, ok := m[k]; ok {
				key := k
				if k == "uid" {
					// Upstream's namespace type names it so.
					key = "UID"
				}
				meta[key] = timestamp(v, k == "creationTimestamp" || k == "deletionTimestamp")
			}
		}
		out["metadata"] = meta
	}
	if v, ok := ns["spec"]; ok {
		out["spec"] = v
	}
	if st, ok := ns["status"].(map[string]any); ok {
		status := map[string]any{}
		for k, v := range st {
			status[k] = v
		}
		if conds, ok := st["conditions"].([]any); ok {
			out := make([]any, len(conds))
			for i, c := range conds {
				if m, ok := c.(map[string]any); ok {
					cp := make(map[string]any, len(m))
					for k, v := range m {
						cp[k] = timestamp(v, k == "lastTransitionTime")
					}
					c = cp
				}
				out[i] = c
			}
			status["conditions"] = out
		}
		out["status"] = status
	}
	return out
}

// timestamp is v as a time when is says it holds one (an RFC 3339
// string), else v.
func timestamp(v any, is bool) any {
	if s, ok := v.(string); ok && is {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t
		}
	}
	return v
}

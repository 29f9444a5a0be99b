package builtin

import (
	"slices"
	"sync"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

var loadCatalog = sync.OnceValues(func() (*schema.Catalog, error) { return schema.Load(brand) })

// typeDescriptor returns the descriptor of a kind of the named groups with
// its schema, as Register builds it.
func typeDescriptor(t *testing.T, kind string) *registry.Descriptor {
	t.Helper()
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Concat(coreV1(brand), networkingV1(brand), policyV1(), storageV1(brand), coordinationV1(brand), nodeV1(brand), discoveryV1(brand),
		appsV1(brand, Services{}), batchV1(brand, Services{}),
		rbacV1(brand, Services{}), schedulingV1(brand), certificatesV1(brand, Services{}), apiRegistrationV1(brand), apiExtensionsV1(brand))
	for _, d := range all {
		if d.Kind == kind {
			d.Schema = cat.ByGVK(d.Group, d.Version, d.Kind)
			if d.Schema == nil {
				t.Fatalf("no schema for %s", kind)
			}
			return d
		}
	}
	t.Fatalf("no descriptor for %s", kind)
	return nil
}

// create runs the hooks of a create in the REST layer's order and returns
// the object to store and the validation errors.
func create(d *registry.Descriptor, obj registry.Object) (registry.Object, apierr.FieldErrors) {
	obj = copyObj(obj)
	if d.Strategy.Default != nil {
		d.Strategy.Default(obj)
	}
	admitOwn(d, obj, nil)
	if d.Strategy.PrepareForCreate != nil {
		d.Strategy.PrepareForCreate(obj)
	}
	schema.ApplyDefaults(obj, d.Schema)
	if d.Strategy.Validate == nil {
		return obj, nil
	}
	return obj, d.Strategy.Validate(obj)
}

// update runs the hooks of an update of the main resource ("") or of
// status over old, as the REST layer does.
func update(d *registry.Descriptor, obj, old registry.Object, sub string) (registry.Object, apierr.FieldErrors) {
	obj, old = copyObj(obj), copyObj(old)
	next := obj
	switch sub {
	case "":
		if g, ok := mapAt(old, "metadata")["generation"]; ok {
			child(next, "metadata")["generation"] = g
		}
		if d.Subresource("status") != nil {
			next["status"] = old["status"]
		}
		if d.Strategy.Default != nil {
			d.Strategy.Default(next)
		}
	case "status":
		next = copyObj(old)
		next["status"] = obj["status"]
	}
	if d.Strategy.PrepareForUpdate != nil {
		d.Strategy.PrepareForUpdate(next, old, sub)
	}
	schema.ApplyDefaults(next, d.Schema)
	var sr *registry.Subresource
	if sub != "" {
		sr = d.Subresource(sub)
	}
	switch {
	case sr != nil && sr.Validate != nil:
		return next, sr.Validate(next, old)
	case d.Strategy.ValidateUpdate != nil:
		return next, d.Strategy.ValidateUpdate(next, old)
	case d.Strategy.Validate != nil:
		return next, d.Strategy.Validate(next)
	}
	return next, nil
}

// copyObj deep-copies a decoded object.
func copyObj(obj registry.Object) registry.Object { return schema.DeepCopy(obj).(map[string]any) }

// mustCreate creates obj and fails on any error.
func mustCreate(t *testing.T, d *registry.Descriptor, obj registry.Object) registry.Object {
	t.Helper()
	out, errs := create(d, obj)
	if len(errs) > 0 {
		t.Fatalf("creating %s: %v", d.Kind, errs)
	}
	return out
}

// subdomainMsg is the problem of a name that is no DNS-1123 subdomain.
const subdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

// labelMsg is the problem of a name that is no DNS-1123 label.
const labelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

// labelValueMsg is the problem of an invalid label value.
const labelValueMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

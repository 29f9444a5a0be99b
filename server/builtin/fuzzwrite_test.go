package builtin

import (
	"testing"

	"platd/server/registry"
	"platd/server/schema"
)

// runWriteHooks decodes data as an object of d (schema s) and runs it
// through every hook a write calls: defaults, create preparation, schema
// defaults, warnings, allocation and claims, validation, update
// preparation and validation both ways for the main resource and its
// status, subresource writes and field selectors. The fuzz tests call it so
// that each type's rules meet arbitrary shapes; it requires only that
// nothing panics. It returns the object as created, nil for data the
// schema refuses.
func runWriteHooks(t *testing.T, d *registry.Descriptor, s *schema.Schema, data []byte) registry.Object {
	t.Helper()
	dec, err := schema.Decode(data, s)
	if err != nil {
		return nil
	}
	old, err := schema.Decode(data, s)
	if err != nil {
		t.Fatalf("second decode failed: %v", err)
	}
	obj, st := dec.Object, d.Strategy
	if st.Default != nil {
		st.Default(obj)
		st.Default(old.Object)
	}
	if st.PrepareForCreate != nil {
		st.PrepareForCreate(obj)
	}
	schema.ApplyDefaults(obj, s)
	if st.Warnings != nil {
		st.Warnings(obj, nil)
		st.Warnings(obj, old.Object)
	}
	if st.Allocate != nil {
		for _, free := range []func(registry.Claim) bool{
			func(registry.Claim) bool { return true },
			func(registry.Claim) bool { return false },
		} {
			st.Allocate(deepCopyMap(obj), nil, free)
			st.Allocate(deepCopyMap(obj), old.Object, free)
		}
	}
	if st.Claims != nil {
		st.Claims(obj)
		st.Claims(old.Object)
	}
	if st.Validate != nil {
		st.Validate(obj)
	}
	for _, sub := range []string{"", "status"} {
		next := deepCopyMap(obj)
		if st.PrepareForUpdate != nil {
			st.PrepareForUpdate(next, old.Object, sub)
		}
		if st.ValidateUpdate != nil {
			st.ValidateUpdate(next, old.Object)
			st.ValidateUpdate(old.Object, next)
		}
	}
	for _, sr := range d.Subresources {
		if sr.Validate == nil {
			continue
		}
		next := deepCopyMap(obj)
		if sr.Copy != nil {
			sr.Copy(next, old.Object)
		}
		sr.Validate(next, old.Object)
		sr.Validate(deepCopyMap(obj), old.Object)
	}
	for _, f := range d.FieldSelectors {
		f.Get(obj)
	}
	return obj
}

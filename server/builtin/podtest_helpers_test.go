package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

var (
	catalogOnce sync.Once
	catalogs    map[string]*schema.Catalog
	catalogErr  error
)

// testCatalog returns the schemas of the built-in types under b.
func testCatalog(t testing.TB, b config.Brand) *schema.Catalog {
	t.Helper()
	catalogOnce.Do(func() {
		catalogs = map[string]*schema.Catalog{}
		for _, name := range config.BrandNames() {
			c, err := schema.Load(config.Brands[name])
			if err != nil {
				catalogErr = err
				return
			}
			catalogs[config.Brands[name].Domain] = c
		}
	})
	if catalogErr != nil {
		t.Fatal(catalogErr)
	}
	return catalogs[b.Domain]
}

// decodeJSON reads a test object; integers become int64 as the decoder
// makes them.
func decodeJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return intsOf(v).(map[string]any)
}

// canonicalJSON renders a decoded value with sorted keys, for comparing.
func canonicalJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runCreate runs what a create runs on a decoded object before it is
// stored: type defaults, the type's own mutating admission (no other
// type's: d is the type alone), create preparation, schema defaults,
// validation.
func runCreate(t testing.TB, d *registry.Descriptor, obj registry.Object) []string {
	t.Helper()
	if d.Strategy.Default != nil {
		d.Strategy.Default(obj)
	}
	admitOwn(d, obj, nil)
	if d.Strategy.PrepareForCreate != nil {
		d.Strategy.PrepareForCreate(obj)
	}
	schema.ApplyDefaults(obj, testCatalog(t, brand).ByGVK("", "v1", d.Kind))
	return errStrings(d.Strategy.Validate(obj))
}

// runUpdate runs what an update of the object (sub "") or its status
// runs: the stored object is old, already created.
func runUpdate(t testing.TB, d *registry.Descriptor, obj, old registry.Object, sub string) []string {
	t.Helper()
	if sub == "" && d.Strategy.Default != nil {
		d.Strategy.Default(obj)
	}
	if sub == "" {
		admitOwn(d, obj, old)
	}
	if d.Strategy.PrepareForUpdate != nil {
		d.Strategy.PrepareForUpdate(obj, old, sub)
	}
	schema.ApplyDefaults(obj, testCatalog(t, brand).ByGVK("", "v1", d.Kind))
	if sub != "" {
		if v := d.Subresource(sub).Validate; v != nil {
			return errStrings(v(obj, old))
		}
	}
	return errStrings(d.Strategy.ValidateUpdate(obj, old))
}

// checkStrings compares rendered errors; nil wants none.
func checkStrings(t *testing.T, name string, got, want []string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", name, got, want)
	}
}

// admitOwn runs the mutating admission steps d has of its own, which
// read no other objects (the default tolerations, the protection
// finalizers), as a write runs them before preparing it.
func admitOwn(d *registry.Descriptor, obj, old registry.Object) {
	for _, st := range d.Strategy.AdmissionSteps {
		if st.Admit != nil && (st.Plugin == config.PluginDefaultTolerationSeconds || st.Plugin == config.PluginStorageObjectInUseProtection) {
			_ = st.Admit(context.Background(), nil, obj, old)
		}
	}
}

package schema

import (
	"reflect"
	"testing"

	"platd/config"
)

func testBrand(t testing.TB, name string) config.Brand {
	t.Helper()
	b, err := config.LookupBrand(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	svc := c.ByGVK("", "v1", "Service")
	obj := map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(81), "protocol": "UDP"}}}}
	ApplyDefaults(obj, svc)
	ports := obj["spec"].(map[string]any)["ports"].([]any)
	if p := ports[0].(map[string]any)["protocol"]; p != "TCP" {
		t.Errorf("port 0 protocol = %v", p)
	}
	if p := ports[1].(map[string]any)["protocol"]; p != "UDP" {
		t.Errorf("port 1 protocol = %v", p)
	}
	if m, ok := obj["metadata"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("metadata = %#v", obj["metadata"])
	}
	// Defaults are copies: changing one object leaves the next untouched.
	obj["metadata"].(map[string]any)["name"] = "x"
	again := map[string]any{}
	ApplyDefaults(again, svc)
	if !reflect.DeepEqual(again["metadata"], map[string]any{}) {
		t.Errorf("default shared: %#v", again["metadata"])
	}
}

// TestDefaultedFields holds the fields defaulting visits to a plain
// search: in every catalog schema, a field left out has no default and
// reaches none, however deep.
func TestDefaultedFields(t *testing.T) {
	for _, brand := range []string{"plat", "kubernetes"} {
		c := testCatalog(t, brand)
		var reaches func(s *Schema, seen map[*Schema]bool) bool
		reaches = func(s *Schema, seen map[*Schema]bool) bool {
			if s == nil || seen[s] {
				return false
			}
			seen[s] = true
			switch s.Type {
			case Object:
				for _, f := range s.Fields {
					if !f.Inline && (f.hasD || reaches(f.Schema, seen)) {
						return true
					}
				}
			case Map, Array:
				if e := s.Elem; e != nil && (e.Type == Object || e.Type == Map || e.Type == Array) {
					return reaches(e, seen)
				}
			}
			return false
		}
		checked := 0
		for name, s := range c.byName {
			if !s.sealed {
				t.Fatalf("%s: not sealed", name)
			}
			in := map[*Field]bool{}
			for _, f := range s.defaulted {
				in[f] = true
			}
			for _, f := range s.Fields {
				want := !f.Inline && (f.hasD || reaches(f.Schema, map[*Schema]bool{}))
				if in[f] != want {
					t.Errorf("%s %s.%s: defaulted %v, want %v", brand, name, f.Name, in[f], want)
				}
				checked++
			}
		}
		if checked < 1000 {
			t.Fatalf("%s: only %d fields checked", brand, checked)
		}
	}
}

package admission

import (
	"reflect"
	"testing"

	"platd/server/registry"
)

// countingLookup counts the reads of a fakeLookup.
type countingLookup struct {
	fakeLookup
	gets map[string]int
}

func (l *countingLookup) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	l.gets[name]++
	return l.fakeLookup.Get(d, ns, name)
}

// A request's matching reads each namespace once, however many policies
// or webhooks ask; a failed read is tried again; the request's own
// equivalent resources are computed once.
func TestMatchCache(t *testing.T) {
	t.Parallel()
	core := &registry.Descriptor{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	grouped := &registry.Descriptor{Group: "events.example", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true,
		Storage: &registry.Storage{Descriptor: core}}
	reg := registry.New()
	reg.Add(namespaces)
	reg.Add(core)
	reg.Add(grouped)
	lookup := &countingLookup{gets: map[string]int{}, fakeLookup: fakeLookup{
		"prod": {"metadata": map[string]any{"name": "prod", "labels": map[string]any{"env": "prod"}}},
		"bare": {"metadata": map[string]any{"name": "bare"}},
	}}
	c := newMatchCache(reg, lookup, &equivalences{reg: reg}, core)

	tests := []struct {
		name    string
		want    map[string]string
		wantErr bool
	}{
		{"prod", map[string]string{"env": "prod"}, false},
		{"prod", map[string]string{"env": "prod"}, false},
		{"bare", map[string]string{}, false},
		{"gone", nil, true},
		{"gone", nil, true},
		{"bare", map[string]string{}, false},
	}
	for i, tt := range tests {
		got, err := c.nsLabels(tt.name)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%d %s: labels %v, %v; want %v, error %v", i, tt.name, got, err, tt.want, tt.wantErr)
		}
	}
	if ns, err := c.namespace("prod"); err != nil || ns["metadata"].(map[string]any)["name"] != "prod" {
		t.Errorf("namespace prod: %v, %v", ns, err)
	}
	if want := map[string]int{"prod": 1, "bare": 1, "gone": 2}; !reflect.DeepEqual(lookup.gets, want) {
		t.Errorf("reads %v, want %v", lookup.gets, want)
	}

	first := c.equivalents(core)
	if !reflect.DeepEqual(first, []*registry.Descriptor{grouped}) || !reflect.DeepEqual(c.equivalents(grouped), []*registry.Descriptor{core}) {
		t.Fatalf("equivalents %v", first)
	}
	// Kept for the request even when the registry changes under it.
	reg.Add(&registry.Descriptor{Group: "events.example", Version: "v1beta1", Resource: "events", Kind: "Event", Namespaced: true,
		Storage: &registry.Storage{Descriptor: core}})
	if again := c.equivalents(core); len(again) != 1 || &again[0] != &first[0] {
		t.Errorf("own equivalents read again: %v", again)
	}
	if got := c.equivalents(grouped); len(got) != 2 {
		t.Errorf("other equivalents after a change: %v", got)
	}

	// No namespace resource: no namespace, no error.
	none := newMatchCache(registry.New(), lookup, &equivalences{reg: registry.New()}, core)
	if l, err := none.nsLabels("prod"); l != nil || err != nil {
		t.Errorf("without namespaces: %v, %v", l, err)
	}
}

package controllers

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
)

func TestKept(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.api.EnsureNamespace(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	cm := e.lookup(t, "", "v1", "configmaps")
	c := &Kept{Source: e.store, Objects: e.api, Log: e.log, Wanted: []Wanted{{
		Descriptor: cm, Fields: []string{"data"}, Recreate: []string{"metadata.labels"},
		Object: registry.Object{"metadata": map[string]any{"name": "kept", "namespace": "default", "labels": map[string]any{"gen": "1"}}, "data": map[string]any{"a": "1"}},
	}}}
	if err := c.EnsureAll(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := e.api.Get(cm, "default", "kept")
	if err != nil || path(first, "data.a") != "1" {
		t.Fatalf("created: %v %v", first, err)
	}
	e.run(t, c.Run)

	get := func() registry.Object {
		obj, err := e.api.Get(cm, "default", "kept")
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
			t.Fatal(err)
		}
		return obj
	}
	// Changed data is written back; other fields stay.
	if _, err := e.api.Update(ctx, cm, "default", "kept", "", func(old registry.Object) registry.Object {
		old["data"] = map[string]any{"a": "2"}
		child(child(old, "metadata"), "annotations")["note"] = "mine"
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "data repaired", func() bool { o := get(); return o != nil && path(o, "data.a") == "1" })
	if o := get(); path(o, "metadata.annotations.note") != "mine" || metaString(o, "uid") != metaString(first, "uid") {
		t.Errorf("repair touched more than the kept fields: %v", o)
	}
	// Deleted, it comes back.
	if _, err := e.api.Delete(ctx, cm, "default", "kept", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "recreated", func() bool { o := get(); return o != nil && metaString(o, "uid") != metaString(first, "uid") })
	second := get()
	// A field that cannot change in place makes it a new object.
	if _, err := e.api.Update(ctx, cm, "default", "kept", "", func(old registry.Object) registry.Object {
		child(old, "metadata")["labels"] = map[string]any{"gen": "2"}
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "recreated for its labels", func() bool {
		o := get()
		return o != nil && metaString(o, "uid") != metaString(second, "uid") && path(o, "metadata.labels.gen") == "1"
	})
	// A new wanted state is written, and is the one kept from then on.
	c.Set(Wanted{
		Descriptor: cm, Fields: []string{"data"}, Recreate: []string{"metadata.labels"},
		Object: registry.Object{"metadata": map[string]any{"name": "kept", "namespace": "default", "labels": map[string]any{"gen": "1"}}, "data": map[string]any{"a": "3"}},
	})
	waitFor(t, "new wanted data written", func() bool { o := get(); return o != nil && path(o, "data.a") == "3" })
	if _, err := e.api.Update(ctx, cm, "default", "kept", "", func(old registry.Object) registry.Object {
		old["data"] = map[string]any{"a": "1"}
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "repaired to the new wanted data", func() bool { o := get(); return o != nil && path(o, "data.a") == "3" })
}

// path reads a dotted path of nested maps.
func path(obj registry.Object, p string) any { return getField(obj, p) }

func TestFieldPath(t *testing.T) {
	t.Parallel()
	for path, want := range map[string][]string{
		"data":                              {"data"},
		"spec.ports":                        {"spec", "ports"},
		"metadata.labels[example.com/tier]": {"metadata", "labels", "example.com/tier"},
		"a[b.c].d":                          {"a", "b.c", "d"},
		"[x.y]":                             {"x.y"},
		"a[open.end":                        {"a", "open.end"},
	} {
		if got := fieldPath(path); !slices.Equal(got, want) {
			t.Errorf("fieldPath(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestKeptMapKey keeps one key of a map: the key's value is written back,
// and the map's other keys, an operator's, stay.
func TestKeptMapKey(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.api.EnsureNamespace(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	cm := e.lookup(t, "", "v1", "configmaps")
	const key = "example.com/kept"
	c := &Kept{Source: e.store, Objects: e.api, Log: e.log, Wanted: []Wanted{{
		Descriptor: cm, Fields: []string{"metadata.labels[" + key + "]"},
		Object: registry.Object{"metadata": map[string]any{"name": "kept", "namespace": "default", "labels": map[string]any{key: "yes"}}},
	}}}
	if err := c.EnsureAll(ctx); err != nil {
		t.Fatal(err)
	}
	e.run(t, c.Run)
	labels := func() map[string]any {
		o, err := e.api.Get(cm, "default", "kept")
		if err != nil {
			t.Fatal(err)
		}
		l, _ := path(o, "metadata.labels").(map[string]any)
		return l
	}
	for _, tc := range []struct {
		name   string
		labels map[string]any
	}{
		{"key changed", map[string]any{key: "no", "mine": "1"}},
		{"key removed", map[string]any{"mine": "2"}},
		{"all removed", nil},
	} {
		if _, err := e.api.Update(ctx, cm, "default", "kept", "", func(old registry.Object) registry.Object {
			child(old, "metadata")["labels"] = tc.labels
			return old
		}); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{key: "yes"}
		if mine, ok := tc.labels["mine"]; ok {
			want["mine"] = mine
		}
		waitFor(t, tc.name+": labels repaired", func() bool { return reflect.DeepEqual(labels(), want) })
	}
}

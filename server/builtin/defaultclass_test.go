package builtin

import (
	"context"
	"errors"
	"testing"

	"platd/server/registry"
)

// class is a class object created at ts, with annotations.
func class(name, ts string, annotations map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": name, "creationTimestamp": ts, "annotations": annotations}}
}

func TestDefaultIngressClass(t *testing.T) {
	t.Parallel()
	ds := networkingV1(brand)
	a := defaultIngressClass(brand, kindOf(ds, "IngressClass"))
	isDefault := "ingressclass." + brand.LongDomain + "/is-default-class"
	legacy := brand.Label("ingress.class")
	def := map[string]any{isDefault: "true"}
	const t1, t2 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
	tests := []struct {
		name    string
		classes []registry.Object
		ingress string
		old     bool
		// want is the ingressClassName admitted, "-" for none.
		want string
	}{
		{"no classes", nil, `{}`, false, "-"},
		{"no default", []registry.Object{class("a", t1, nil), class("b", t1, map[string]any{isDefault: "True"})}, `{}`, false, "-"},
		{"one default", []registry.Object{class("a", t1, nil), class("b", t1, def)}, `{}`, false, "b"},
		{"newest default", []registry.Object{class("new", t2, def), class("old", t1, def)}, `{}`, false, "new"},
		{"same age: first by name", []registry.Object{class("y", t2, def), class("x", t2, def), class("old", t1, def)}, `{}`, false, "x"},
		{"class named", []registry.Object{class("a", t1, def)}, `{"spec":{"ingressClassName":"mine"}}`, false, "mine"},
		{"empty class named", []registry.Object{class("a", t1, def)}, `{"spec":{"ingressClassName":""}}`, false, ""},
		{"legacy annotation", []registry.Object{class("a", t1, def)}, `{"metadata":{"annotations":{"` + legacy + `":""}}}`, false, "-"},
		{"other annotation", []registry.Object{class("a", t1, def)}, `{"metadata":{"annotations":{"x":"y"}}}`, false, "a"},
		{"update", []registry.Object{class("a", t1, def)}, `{}`, true, "-"},
	}
	for _, tt := range tests {
		l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{a.classes: tt.classes}}
		obj := decodeJSON(t, tt.ingress)
		var old registry.Object
		if tt.old {
			old = copyObj(obj)
		}
		if err := a.admit(context.Background(), l, obj, old); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := "-"
		if v, ok := mapAt(obj, "spec")["ingressClassName"]; ok {
			got = strOf(v)
		}
		if got != tt.want {
			t.Errorf("%s: class %q, want %q", tt.name, got, tt.want)
		}
	}
	err := a.admit(context.Background(), fakeLookup{err: errors.New("boom")}, registry.Object{}, nil)
	if got := admissionError(err); got != "denied: boom" {
		t.Errorf("lookup failure: %q", got)
	}
}

func TestDefaultStorageClass(t *testing.T) {
	t.Parallel()
	a := defaultStorageClass(brand, kindOf(storageV1(brand), "StorageClass"))
	current := map[string]any{"storageclass." + brand.LongDomain + "/is-default-class": "true"}
	beta := map[string]any{"storageclass.beta." + brand.LongDomain + "/is-default-class": "true"}
	off := map[string]any{"storageclass." + brand.LongDomain + "/is-default-class": "false"}
	betaClass := "volume.beta." + brand.Label("storage-class")
	const t1, t2 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
	tests := []struct {
		name    string
		classes []registry.Object
		claim   string
		old     bool
		// want is the storageClassName admitted, "-" for none.
		want string
	}{
		{"no default", []registry.Object{class("a", t2, off), class("b", t2, nil)}, `{"spec":{}}`, false, "-"},
		{"default", []registry.Object{class("a", t1, nil), class("std", t1, current)}, `{"spec":{}}`, false, "std"},
		{"beta default", []registry.Object{class("old", t1, beta)}, `{}`, false, "old"},
		{"newest of both", []registry.Object{class("a", t1, current), class("b", t2, beta)}, `{}`, false, "b"},
		{"same age: first by name", []registry.Object{class("b", t2, current), class("a", t2, beta)}, `{}`, false, "a"},
		{"class named", []registry.Object{class("std", t1, current)}, `{"spec":{"storageClassName":"fast"}}`, false, "fast"},
		{"no class asked for", []registry.Object{class("std", t1, current)}, `{"spec":{"storageClassName":""}}`, false, ""},
		{"beta annotation", []registry.Object{class("std", t1, current)}, `{"metadata":{"annotations":{"` + betaClass + `":"fast"}}}`, false, "-"},
		{"update", []registry.Object{class("std", t1, current)}, `{"spec":{}}`, true, "-"},
	}
	for _, tt := range tests {
		l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{a.classes: tt.classes}}
		obj := decodeJSON(t, tt.claim)
		var old registry.Object
		if tt.old {
			old = copyObj(obj)
		}
		if err := a.admit(context.Background(), l, obj, old); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := "-"
		if v, ok := mapAt(obj, "spec")["storageClassName"]; ok {
			got = strOf(v)
		}
		if got != tt.want {
			t.Errorf("%s: class %q, want %q", tt.name, got, tt.want)
		}
	}
}

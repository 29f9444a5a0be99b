package rest

import (
	"context"
	"testing"

	"platd/server/apierr"
)

// TestCreateOnly: CreateOnly stores what Create stores, defaults and
// metadata included, and fails with the same Status errors.
func TestCreateOnly(t *testing.T) {
	t.Parallel()
	h, _, _ := newTestHandler(t, Config{})
	ctx := context.Background()
	d := h.reg.Lookup("", "v1", "configmaps")
	cm := func(name string) Object {
		return Object{"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"a": "b"}},
			"data": map[string]any{"k": "v"}}
	}
	created, err := h.Create(ctx, d, cm("by-create"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CreateOnly(ctx, d, cm("by-create-only")); err != nil {
		t.Fatal(err)
	}
	got, err := h.Get(d, "default", "by-create-only")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Object{created, got} {
		md, _ := o["metadata"].(map[string]any)
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
			if md[k] == nil {
				t.Errorf("%v: metadata.%s not set", md["name"], k)
			}
		}
		if o["kind"] != "ConfigMap" || o["apiVersion"] != "v1" {
			t.Errorf("%v: kind %v apiVersion %v", md["name"], o["kind"], o["apiVersion"])
		}
		if data, _ := o["data"].(map[string]any); data["k"] != "v" {
			t.Errorf("%v: data %v", md["name"], o["data"])
		}
	}
	err = h.CreateOnly(ctx, d, cm("by-create-only"))
	_, errCreate := h.Create(ctx, d, cm("by-create-only"))
	if apierr.ReasonOf(err) != apierr.ReasonAlreadyExists || err.Error() != errCreate.Error() {
		t.Fatalf("second create: CreateOnly %v, Create %v", err, errCreate)
	}
	bad := cm("Not_A_Name")
	err = h.CreateOnly(ctx, d, bad)
	if apierr.ReasonOf(err) != apierr.ReasonInvalid {
		t.Fatalf("invalid name: %v", err)
	}
}

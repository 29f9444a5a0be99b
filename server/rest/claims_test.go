package rest

import (
	"context"
	"errors"
	"testing"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// TestClaims: a type's claims are written, moved and released with its
// objects, and a claim another object holds is a Conflict.
func TestClaims(t *testing.T) {
	t.Parallel()
	h, _, store := newTestHandler(t, Config{})
	ctx := context.Background()
	d := *h.reg.Lookup("", "v1", "configmaps")
	// Each config map claims the value of its "seat" data key.
	d.Strategy.Claims = func(obj Object) []registry.Claim {
		data, _ := obj["data"].(map[string]any)
		if seat, _ := data["seat"].(string); seat != "" {
			return []registry.Claim{{Pool: "seats", Value: seat}}
		}
		return nil
	}
	seat := func(name, v string) Object {
		return Object{"metadata": map[string]any{"name": name, "namespace": "default"}, "data": map[string]any{"seat": v}}
	}
	held := func(v string) bool {
		_, err := store.Get(registry.ClaimKey(registry.Claim{Pool: "seats", Value: v}))
		if err != nil && !errors.Is(err, bolt.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	if _, err := h.Create(ctx, &d, seat("a", "1")); err != nil {
		t.Fatal(err)
	}
	if !held("1") {
		t.Fatal("claim not recorded")
	}
	_, err := h.Create(ctx, &d, seat("b", "1"))
	if apierr.ReasonOf(err) != apierr.ReasonConflict || err.Error() != `Operation cannot be fulfilled on configmaps "b": seats 1 is held by another object` {
		t.Fatalf("second claim of one seat: %v", err)
	}
	if _, err := store.Get(d.Key("default", "b")); !errors.Is(err, bolt.ErrNotFound) {
		t.Fatalf("refused object stored: %v", err)
	}
	if _, err := h.Create(ctx, &d, seat("b", "2")); err != nil {
		t.Fatal(err)
	}
	// Moving to a held seat is refused; to a free one moves the claim.
	move := func(name, v string) error {
		_, err := h.Update(ctx, &d, "default", name, "", func(old Object) Object {
			old["data"] = map[string]any{"seat": v}
			return old
		})
		return err
	}
	if err := move("b", "1"); apierr.ReasonOf(err) != apierr.ReasonConflict {
		t.Fatalf("move to a held seat: %v", err)
	}
	if err := move("b", "3"); err != nil {
		t.Fatal(err)
	}
	if held("2") || !held("3") {
		t.Fatalf("claim not moved: 2 %v 3 %v", held("2"), held("3"))
	}
	// Deleting releases.
	if _, err := h.Delete(ctx, &d, "default", "a", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if held("1") {
		t.Fatal("claim kept after delete")
	}
	if err := move("b", "1"); err != nil {
		t.Fatal(err)
	}
}

package controllers

import (
	"testing"
	"time"

	"platd/server/registry"
)

// TestSetAvailable checks upstream's rule for a condition: the transition
// time moves with the status only, and an unchanged condition is no write.
func TestSetAvailable(t *testing.T) {
	t0, t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	obj := registry.Object{}
	down := condition{"False", "ServiceNotFound", "gone"}
	if !setAvailable(obj, down, t0) {
		t.Fatal("first condition not written")
	}
	if setAvailable(obj, down, t1) {
		t.Error("an unchanged condition was written again")
	}
	cond := func() map[string]any { return list(obj["status"].(map[string]any)["conditions"])[0].(map[string]any) }
	if !setAvailable(obj, condition{"False", "MissingEndpoints", "none"}, t1) || cond()["lastTransitionTime"] != "2026-01-01T00:00:00Z" || cond()["reason"] != "MissingEndpoints" {
		t.Errorf("same status, new reason: %v", cond())
	}
	if !setAvailable(obj, condition{"Unknown", "ServiceAccessError", "x"}, t1) || cond()["lastTransitionTime"] != "2026-02-01T00:00:00Z" || cond()["status"] != "Unknown" {
		t.Errorf("new status: %v", cond())
	}
	if n := len(list(obj["status"].(map[string]any)["conditions"])); n != 1 {
		t.Errorf("%d conditions, want 1", n)
	}
}

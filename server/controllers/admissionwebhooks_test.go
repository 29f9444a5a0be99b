package controllers

import (
	"context"
	"testing"

	"platd/server/admission"
	"platd/server/registry"
)

// TestAdmissionWebhooksFollowTheStore checks that configurations stored
// before Load are called at once, and that later creations and
// deletions are followed, per phase.
func TestAdmissionWebhooksFollowTheStore(t *testing.T) {
	e := newTestEnv(t)
	g := e.brand.Group("admissionregistration")
	w := admission.NewWebhooks(e.reg, e.api, nil, e.brand)
	c := &AdmissionWebhooks{Source: e.store, Webhooks: w, Log: e.log,
		Validating: e.lookup(t, g, "v1", "validatingwebhookconfigurations"), Mutating: e.lookup(t, g, "v1", "mutatingwebhookconfigurations")}
	ctx := context.Background()
	config := func(name string) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": name}, "webhooks": []any{map[string]any{
			"name": "h.example.com", "clientConfig": map[string]any{"url": "https://127.0.0.1:1/h"},
			"sideEffects": "None", "admissionReviewVersions": []any{"v1"},
		}}}
	}
	if _, err := e.api.Create(ctx, c.Validating, config("v")); err != nil {
		t.Fatal(err)
	}
	if err := c.Load(); err != nil {
		t.Fatal(err)
	}
	if w.ValidatingEmpty() || !w.MutatingEmpty() {
		t.Fatalf("after Load: validating empty %v, mutating empty %v", w.ValidatingEmpty(), w.MutatingEmpty())
	}
	e.run(t, c.Run)
	if _, err := e.api.Create(ctx, c.Mutating, config("m")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the mutating configuration", func() bool { return !w.MutatingEmpty() })
	if _, err := e.api.Delete(ctx, c.Validating, "", "v", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the validating configuration's removal", w.ValidatingEmpty)
}

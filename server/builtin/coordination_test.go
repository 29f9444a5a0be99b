package builtin

import (
	"testing"

	"platd/server/registry"
)

func lease(spec map[string]any) registry.Object { return named("l", map[string]any{"spec": spec}) }

func TestLease(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Lease")
	if !d.UpdateCreates {
		t.Error("a PUT of a missing lease must create it, as leader election expects")
	}
	got := mustCreate(t, d, lease(map[string]any{
		"holderIdentity": "a", "leaseDurationSeconds": int64(15), "leaseTransitions": int64(0),
		"acquireTime": "2026-01-02T03:04:05.123456Z", "strategy": "OldestEmulationVersion", "preferredHolder": "b",
	}))
	spec := mapAt(got, "spec")
	if present(spec, "strategy") || present(spec, "preferredHolder") || str(spec, "acquireTime") != "2026-01-02T03:04:05.123456Z" {
		t.Errorf("created spec: %v", spec)
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"empty", map[string]any{}, nil},
		{"counts", map[string]any{"leaseDurationSeconds": int64(0), "leaseTransitions": int64(-1)}, []string{
			"spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
			"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, lease(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}
	_, errs := update(d, lease(map[string]any{"leaseDurationSeconds": int64(-5)}), got, "")
	checkErrs(t, "update", errs, []string{"spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0"})
}

func TestLeaseStrategyKeptWhenStored(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Lease")
	stored := mustCreate(t, d, lease(map[string]any{"holderIdentity": "a"}))
	stored["spec"].(map[string]any)["strategy"] = "OldestEmulationVersion"
	next, errs := update(d, lease(map[string]any{"strategy": "Newest", "preferredHolder": "b"}), stored, "")
	if present(mapAt(next, "spec"), "preferredHolder") {
		t.Errorf("a preferred holder the stored lease lacks was kept: %v", next["spec"])
	}
	checkErrs(t, "strategy", errs, []string{
		`spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"`,
	})
	checkErrs(t, "qualified", validateLease(lease(map[string]any{"strategy": "example.com/a/b"})), []string{
		"spec.strategy.strategy: Invalid value: \"example.com/a/b\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
	})
	checkErrs(t, "holder without strategy", validateLease(lease(map[string]any{"preferredHolder": "b"})), []string{
		"spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined",
	})
}

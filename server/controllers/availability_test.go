package controllers

import (
	"context"
	"errors"
	"sync/atomic"
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

func TestAvailabilityBackoff(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, 5 * time.Millisecond},
		{1, 10 * time.Millisecond},
		{4, 80 * time.Millisecond},
		{12, 20480 * time.Millisecond},
		{13, 30 * time.Second},
		{40, 30 * time.Second},
		{1000, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := availabilityBackoff(tt.failures); got != tt.want {
			t.Errorf("availabilityBackoff(%d) = %v, want %v", tt.failures, got, tt.want)
		}
	}
}

// TestAvailabilityRetriesFailedCheck: an APIService whose discovery check
// fails is checked again on its own, with backoff, without any change
// and well before the resync: it turns Available once its server
// answers.
func TestAvailabilityRetriesFailedCheck(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	services, endpoints := e.lookup(t, "", "v1", "services"), e.lookup(t, "", "v1", "endpoints")
	apiServices := e.lookup(t, e.brand.Group("apiregistration"), "v1", "apiservices")
	for _, o := range []struct {
		d   *registry.Descriptor
		obj registry.Object
	}{
		{e.lookup(t, "", "v1", "namespaces"), registry.Object{"metadata": map[string]any{"name": "default"}}},
		{services, registry.Object{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "api", "namespace": "default"},
			"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": int64(443)}}}}},
		{endpoints, registry.Object{"apiVersion": "v1", "kind": "Endpoints", "metadata": map[string]any{"name": "api", "namespace": "default"},
			"subsets": []any{map[string]any{"addresses": []any{map[string]any{"ip": "10.0.0.7"}}, "ports": []any{map[string]any{"name": "https", "port": int64(8443)}}}}}},
		{apiServices, registry.Object{"apiVersion": apiServices.Group + "/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1.w.example.com"},
			"spec": map[string]any{"group": "w.example.com", "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
				"insecureSkipTLSVerify": true, "service": map[string]any{"namespace": "default", "name": "api", "port": int64(443)}}}},
	} {
		if _, err := e.api.Create(ctx, o.d, o.obj); err != nil {
			t.Fatal(err)
		}
	}
	const failFirst = 4
	var checks atomic.Int32
	c := &APIServiceAvailability{Source: e.store, Objects: e.api, APIServices: apiServices, Services: services, Endpoints: endpoints, Log: e.log,
		CheckDiscovery: func(context.Context, string, map[string]any) error {
			if checks.Add(1) <= failFirst {
				return errors.New("failing or missing response")
			}
			return nil
		}}
	e.run(t, c.Run)
	waitFor(t, "the APIService to turn Available", func() bool {
		as, err := e.api.Get(apiServices, "", "v1.w.example.com")
		if err != nil {
			return false
		}
		conds, _ := child(as, "status")["conditions"].([]any)
		cond, _ := first(conds).(map[string]any)
		return str(cond, "status") == "True" && str(cond, "reason") == "Passed"
	})
}

func first(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

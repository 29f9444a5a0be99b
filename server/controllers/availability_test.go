package controllers

import (
	"testing"
	"time"

	"platd/server/registry"
)

func TestDiscoveryURL(t *testing.T) {
	spec := map[string]any{"group": "metrics.example.com", "version": "v1beta1"}
	svc := func(kv ...any) map[string]any {
		m := map[string]any{"ports": []any{map[string]any{"port": int64(443)}}}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name, apiService string
		svcSpec          map[string]any
		port             int64
		want, err        string
	}{
		{"cluster IP", "v1beta1.metrics.example.com", svc("clusterIP", "10.0.0.7"), 443, "https://10.0.0.7:443/apis/metrics.example.com/v1beta1", ""},
		{"IPv6 cluster IP", "v1beta1.metrics.example.com", svc("clusterIP", "fd00::7"), 8443, "https://[fd00::7]:8443/apis/metrics.example.com/v1beta1", ""},
		{"legacy group", "v1.", svc("clusterIP", "10.0.0.7"), 443, "https://10.0.0.7:443/api/v1beta1", ""},
		{"external name", "v1beta1.metrics.example.com", svc("type", "ExternalName", "externalName", "metrics.example.org"), 443, "https://metrics.example.org:443/apis/metrics.example.com/v1beta1", ""},
		{"headless", "v1beta1.metrics.example.com", svc("clusterIP", "None"), 443, "", `cannot route to service with ClusterIP "None"`},
		{"node port without the port", "v1beta1.metrics.example.com", svc("type", "NodePort", "clusterIP", "10.0.0.7"), 8443, "", `no service port 8443 found for service "metrics"`},
		{"node port", "v1beta1.metrics.example.com", svc("type", "NodePort", "clusterIP", "10.0.0.7"), 443, "https://10.0.0.7:443/apis/metrics.example.com/v1beta1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := discoveryURL(tt.apiService, spec, "metrics", tt.svcSpec, tt.port)
			if got != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
				t.Errorf("got %q, %v; want %q, %q", got, err, tt.want, tt.err)
			}
		})
	}
}

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

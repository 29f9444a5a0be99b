package controllers

import (
	"context"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"platd/server/registry"
)

func TestIdentityLeaseName(t *testing.T) {
	// Upstream's derivation for host "node-a" and "kube-apiserver"
	// (computed independently: sha256 of the length-prefixed parts).
	got := IdentityLeaseName("node-a", "kube-apiserver")
	if got != "apiserver-kcaaxytsc3gyd2kyybqqvf4bl4" {
		t.Fatalf("name %q", got)
	}
	if got == IdentityLeaseName("node-b", "kube-apiserver") || got == IdentityLeaseName("node-a", "platd") {
		t.Fatal("names of different hosts or components collide")
	}
	if IdentityLeaseName("ab", "c") == IdentityLeaseName("a", "bc") {
		t.Fatal("the parts are not length-prefixed")
	}
}

// endpointIPs returns the addresses the API's Endpoints and EndpointSlice
// list, or nil when either is missing.
func endpointIPs(e *testEnv, t *testing.T) (eps, slice []string) {
	ed := e.lookup(t, "", "v1", "endpoints")
	sd := e.lookup(t, e.brand.Group("discovery"), "v1", "endpointslices")
	ep, err := e.api.Get(ed, "default", e.brand.APIServiceName)
	if err != nil {
		return nil, nil
	}
	sl, err := e.api.Get(sd, "default", e.brand.APIServiceName)
	if err != nil {
		return nil, nil
	}
	for _, s := range ep["subsets"].([]any) {
		for _, a := range s.(map[string]any)["addresses"].([]any) {
			eps = append(eps, a.(map[string]any)["ip"].(string))
		}
	}
	for _, ep := range sl["endpoints"].([]any) {
		slice = append(slice, ep.(map[string]any)["addresses"].([]any)[0].(string))
	}
	return eps, slice
}

func TestAPIServerEndpointsListLiveReplicas(t *testing.T) {
	e := newTestEnv(t)
	for _, ns := range []string{"default", e.brand.SystemNamespace} {
		if err := e.api.EnsureNamespace(context.Background(), ns); err != nil {
			t.Fatal(err)
		}
	}
	leases := e.lookup(t, e.brand.Group("coordination"), "v1", "leases")
	label, ann := "apiserver."+e.brand.LongDomain+"/identity", e.brand.Label("peer-advertise-address")
	identity := func(host, addr string) *Identity {
		name := IdentityLeaseName(host, e.brand.FieldManager)
		return &Identity{Objects: e.api, Leases: leases, Namespace: e.brand.SystemNamespace, Name: name, Holder: name + "_x",
			Labels: map[string]any{label: e.brand.FieldManager}, Annotations: map[string]any{ann: addr},
			Renew: 20 * time.Millisecond, Log: e.log}
	}
	ctxs := map[string]context.CancelFunc{}
	dones := map[string]chan struct{}{}
	for i, addr := range []string{"192.0.2.3:6443", "192.0.2.1:6443", "192.0.2.2:6443"} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		id := identity("host"+string(rune('a'+i)), addr)
		go func() { defer close(done); id.Run(ctx) }()
		ctxs[addr], dones[addr] = cancel, done
		t.Cleanup(func() { cancel(); <-done })
	}
	rec := &APIServerEndpoints{Source: e.store, Objects: e.api, Leases: leases, Namespace: e.brand.SystemNamespace,
		Label: label, Component: e.brand.FieldManager, AddressAnnotation: ann, TTL: 300 * time.Millisecond,
		Wanted: func(addrs []netip.Addr) []Wanted { return APIServerEndpointObjects(e.reg, e.brand, addrs, 6443) }, Log: e.log}
	e.run(t, rec.Run)

	want := func(ips ...string) {
		t.Helper()
		waitFor(t, "endpoints "+strings.Join(ips, ","), func() bool {
			eps, slice := endpointIPs(e, t)
			return reflect.DeepEqual(eps, ips) && reflect.DeepEqual(slice, ips)
		})
	}
	want("192.0.2.1", "192.0.2.2", "192.0.2.3")

	// The renewed lease carries upstream's labels and a renew time.
	lease, err := e.api.Get(leases, e.brand.SystemNamespace, IdentityLeaseName("hostb", e.brand.FieldManager))
	if err != nil {
		t.Fatal(err)
	}
	if l := child(lease, "metadata")["labels"].(map[string]any); l[label] != e.brand.FieldManager {
		t.Fatalf("labels %v", l)
	}
	if spec := child(lease, "spec"); registry.Int64(spec["leaseDurationSeconds"]) != 3600 || spec["holderIdentity"] == "" {
		t.Fatalf("spec %v", spec)
	}

	// A replica that stops cleanly deletes its lease: dropped at once.
	ctxs["192.0.2.2:6443"]()
	<-dones["192.0.2.2:6443"]
	want("192.0.2.1", "192.0.2.3")

	// A replica that renewed once and died is listed until its renewal
	// is older than the TTL.
	stamp := time.Now().UTC().Format(microTime)
	if _, err := e.api.Create(context.Background(), leases, registry.Object{
		"metadata": map[string]any{"name": "apiserver-dead", "namespace": e.brand.SystemNamespace,
			"labels": map[string]any{label: e.brand.FieldManager}, "annotations": map[string]any{ann: "10.0.0.9:6443"}},
		"spec": map[string]any{"holderIdentity": "apiserver-dead_1", "leaseDurationSeconds": int64(3600), "renewTime": stamp},
	}); err != nil {
		t.Fatal(err)
	}
	want("10.0.0.9", "192.0.2.1", "192.0.2.3")
	want("192.0.2.1", "192.0.2.3")

	// Leases of other components are not replicas of this API.
	if _, err := e.api.Create(context.Background(), leases, registry.Object{
		"metadata": map[string]any{"name": "other", "namespace": e.brand.SystemNamespace,
			"labels": map[string]any{label: "other-apiserver"}, "annotations": map[string]any{ann: "10.0.0.8:6443"}},
		"spec": map[string]any{"holderIdentity": "o", "leaseDurationSeconds": int64(3600), "renewTime": time.Now().UTC().Format(microTime)},
	}); err != nil {
		t.Fatal(err)
	}
	want("192.0.2.1", "192.0.2.3")

	// An identity lease past its own duration is deleted (upstream's
	// identity lease collector); another component's is left alone.
	old := time.Now().Add(-5 * time.Second).UTC().Format(microTime)
	for _, l := range []struct{ name, component string }{{"apiserver-expired", e.brand.FieldManager}, {"other-expired", "other-apiserver"}} {
		if _, err := e.api.Create(context.Background(), leases, registry.Object{
			"metadata": map[string]any{"name": l.name, "namespace": e.brand.SystemNamespace, "labels": map[string]any{label: l.component}},
			"spec":     map[string]any{"holderIdentity": l.name + "_1", "leaseDurationSeconds": int64(1), "renewTime": old},
		}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the expired identity lease deleted", func() bool {
		_, err := e.api.Get(leases, e.brand.SystemNamespace, "apiserver-expired")
		return err != nil
	})
	if _, err := e.api.Get(leases, e.brand.SystemNamespace, "other-expired"); err != nil {
		t.Fatalf("another component's lease: %v", err)
	}
	// The live replicas' leases stay.
	if _, err := e.api.Get(leases, e.brand.SystemNamespace, IdentityLeaseName("hosta", e.brand.FieldManager)); err != nil {
		t.Fatalf("a live replica's lease: %v", err)
	}
	want("192.0.2.1", "192.0.2.3")
}

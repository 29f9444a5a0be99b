package controllers

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"platd/server/registry"
)

// TestAPIServerEndpointsKept: of the API's Endpoints, only the skip-mirror
// label, the set of address IPs and the ports are kept, as upstream's
// reconciler keeps them; an operator's labels and whatever else the one
// subset holds stay.
func TestAPIServerEndpointsKept(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.api.EnsureNamespace(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	addrs := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")}
	wanted := APIServerEndpointObjects(e.reg, e.brand, addrs, 6443)
	c := &Kept{Source: e.store, Objects: e.api, Log: e.log, Wanted: wanted}
	if err := c.EnsureAll(ctx); err != nil {
		t.Fatal(err)
	}
	e.run(t, c.Run)
	eps := e.lookup(t, "", "v1", "endpoints")
	name := e.brand.APIServiceName
	skipMirror := "endpointslice." + e.brand.LongDomain + "/skip-mirror"
	get := func() registry.Object {
		o, err := e.api.Get(eps, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	wantSubsets := copyValue(get()["subsets"])
	port := map[string]any{"name": "https", "port": int64(6443), "protocol": "TCP"}
	addr := func(ip string) map[string]any { return map[string]any{"ip": ip} }
	subset := func(ports []any, ips ...string) map[string]any {
		var l []any
		for _, ip := range ips {
			l = append(l, addr(ip))
		}
		return map[string]any{"addresses": l, "ports": ports}
	}
	ours := []any{port}
	// Each change takes the skip-mirror label off too: once it is back,
	// the change has been looked at.
	for i, tc := range []struct {
		name    string
		subsets []any
		kept    bool
	}{
		{"addresses reordered, with more about them", []any{map[string]any{
			"addresses":         []any{map[string]any{"ip": "192.0.2.2", "hostname": "second"}, addr("192.0.2.1")},
			"notReadyAddresses": []any{addr("192.0.2.9")},
			"ports":             ours,
		}}, true},
		{"an address replaced", []any{subset(ours, "192.0.2.1", "192.0.2.3")}, false},
		{"an address missing", []any{subset(ours, "192.0.2.1")}, false},
		{"an address twice", []any{subset(ours, "192.0.2.1", "192.0.2.1")}, false},
		{"another port", []any{subset([]any{map[string]any{"name": "https", "port": int64(1), "protocol": "TCP"}}, "192.0.2.1", "192.0.2.2")}, false},
		{"a second subset", []any{subset(ours, "192.0.2.1", "192.0.2.2"), subset([]any{map[string]any{"port": int64(80), "protocol": "TCP"}}, "192.0.2.5")}, false},
	} {
		if _, err := e.api.Update(ctx, eps, "default", name, "", func(old registry.Object) registry.Object {
			child(old, "metadata")["labels"] = map[string]any{"mine": fmt.Sprint(i)}
			old["subsets"] = tc.subsets
			return old
		}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		waitFor(t, tc.name+": skip-mirror label back", func() bool { return path(get(), "metadata.labels").(map[string]any)[skipMirror] == "true" })
		got := get()
		if want := map[string]any{"mine": fmt.Sprint(i), skipMirror: "true"}; !reflect.DeepEqual(path(got, "metadata.labels"), want) {
			t.Errorf("%s: labels %v, want %v", tc.name, path(got, "metadata.labels"), want)
		}
		want := wantSubsets
		if tc.kept {
			want = tc.subsets
		}
		if !sameJSON(got["subsets"], want) {
			t.Errorf("%s: subsets %v, want %v", tc.name, got["subsets"], want)
		}
	}
}

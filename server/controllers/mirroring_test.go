package controllers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"platd/server/registry"
)

func TestMirroredGroups(t *testing.T) {
	t.Parallel()
	var ep registry.Object
	if err := json.Unmarshal([]byte(`{"subsets":[
		{"ports":[{"name":"http","port":80,"protocol":"TCP"}],
		 "addresses":[{"ip":"10.0.0.1","hostname":"a","nodeName":"n1","targetRef":{"kind":"Pod","name":"p"}},{"ip":"not-an-ip"},{"ip":"fd00::0001"}],
		 "notReadyAddresses":[{"ip":"10.0.0.2"}]},
		{"ports":[{"name":"http","port":80,"protocol":"TCP"}],"addresses":[{"ip":"10.0.0.1","hostname":"a","nodeName":"n1","targetRef":{"kind":"Pod","name":"p"}},{"ip":"10.0.0.3"}]},
		{"ports":[{"name":"dns","port":53,"protocol":"UDP","appProtocol":"dns"}],"addresses":[{"ip":"10.0.0.4"}]}]}`), &ep); err != nil {
		t.Fatal(err)
	}
	groups, order := wanted(ep)
	var got []string
	for _, k := range order {
		g := groups[k]
		b, _ := json.Marshal(map[string]any{"type": g.addressType, "ports": g.ports, "endpoints": g.endpoints})
		got = append(got, string(b))
	}
	want := []string{
		// The same subset ports share a slice, an endpoint listed twice
		// appears once, and invalid IPs are left out.
		`{"endpoints":[{"addresses":["10.0.0.1"],"conditions":{"ready":true},"hostname":"a","nodeName":"n1","targetRef":{"kind":"Pod","name":"p"}},{"addresses":["10.0.0.2"],"conditions":{"ready":false}},{"addresses":["10.0.0.3"],"conditions":{"ready":true}}],"ports":[{"name":"http","port":80,"protocol":"TCP"}],"type":"IPv4"}`,
		// IPv6 goes to a slice of its own, its address in canonical form.
		`{"endpoints":[{"addresses":["fd00::1"],"conditions":{"ready":true}}],"ports":[{"name":"http","port":80,"protocol":"TCP"}],"type":"IPv6"}`,
		`{"endpoints":[{"addresses":["10.0.0.4"],"conditions":{"ready":true}}],"ports":[{"appProtocol":"dns","name":"dns","port":53,"protocol":"UDP"}],"type":"IPv4"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMirroredSubsetLimit(t *testing.T) {
	t.Parallel()
	var addrs []any
	for i := range 1200 {
		addrs = append(addrs, map[string]any{"ip": "10.1." + itoa(i/250) + "." + itoa(i%250)})
	}
	ep := registry.Object{"subsets": []any{map[string]any{"ports": []any{}, "addresses": addrs[:600], "notReadyAddresses": addrs[600:]}}}
	groups, order := wanted(ep)
	if len(order) != 1 || len(groups[order[0]].endpoints) != maxMirroredPerSubset {
		t.Fatalf("mirrored %d endpoints of 1200, want %d", len(groups[order[0]].endpoints), maxMirroredPerSubset)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestSlicePrefix(t *testing.T) {
	t.Parallel()
	longest, long := strings.Repeat("a", 252), strings.Repeat("a", 253)
	for name, want := range map[string]string{"svc": "svc-", longest: longest + "-", long: long} {
		if got := slicePrefix(name); got != want {
			t.Errorf("prefix of %.20s…: %.20s…", name, got)
		}
	}
}

package server_test

import (
	"net/url"
	"reflect"
	"testing"
)

// TestEndpointSliceMirroring follows upstream's conformance test of the
// mirroring controller and goes on: the Endpoints of a service without
// a selector are mirrored to a slice with their labels, followed through
// an update (the slice is reused) and a deletion; a slice deleted by
// someone else comes back; Endpoints marked skip-mirror, or of a service
// with a selector, lose their slices.
func TestEndpointSliceMirroring(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	slicesPath := groupPath(b.Group("discovery"), "v1", "default", "endpointslices")
	endpointsPath := "/api/v1/namespaces/default/endpoints"
	mirrored := func(name string) []any {
		q := url.Values{"labelSelector": {b.Label("service-name") + "=" + name}}
		items, _ := e.do("GET", slicesPath+"?"+q.Encode(), nil).mustCode(t, 200).obj(t)["items"].([]any)
		return items
	}
	until := func(what string, cond func(items []any) bool) []any {
		t.Helper()
		var items []any
		eventually(t, what, func() bool {
			items = mirrored("custom")
			return cond(items)
		})
		return items
	}
	endpoints := func(ip string, port int) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "custom", "labels": map[string]any{"team": "a"}},
			"subsets": []any{map[string]any{"ports": []any{map[string]any{"port": port}}, "addresses": []any{map[string]any{"ip": ip}}}}}
	}
	holds := func(items []any, ip string, port float64) bool {
		return len(items) == 1 && at(items[0], "ports", 0, "port") == port && at(items[0], "endpoints", 0, "addresses", 0) == ip &&
			len(at(items[0], "endpoints").([]any)) == 1
	}

	e.do("POST", servicesPath, svc("custom", map[string]any{"ports": ports(tcpPort(80, "name", "example"))})).mustCode(t, 201)
	ep := e.do("POST", endpointsPath, endpoints("10.1.2.3", 80)).mustCode(t, 201).obj(t)
	items := until("the new Endpoints mirrored", func(items []any) bool { return holds(items, "10.1.2.3", 80) })
	slice := items[0].(map[string]any)
	wantLabels := map[string]any{"team": "a", b.Label("service-name"): "custom", "endpointslice." + b.LongDomain + "/managed-by": "endpointslicemirroring-controller." + b.Domain}
	if !reflect.DeepEqual(at(slice, "metadata", "labels"), wantLabels) || at(slice, "addressType") != "IPv4" ||
		at(slice, "endpoints", 0, "conditions", "ready") != true || at(slice, "ports", 0, "protocol") != "TCP" {
		t.Errorf("mirrored slice %v", slice)
	}
	owner := at(slice, "metadata", "ownerReferences", 0)
	if at(owner, "kind") != "Endpoints" || at(owner, "name") != "custom" || at(owner, "uid") != at(ep, "metadata", "uid") || at(owner, "controller") != true {
		t.Errorf("owner %v", owner)
	}

	// An update: other ports make another group, whose slice reuses the old.
	cur := e.do("GET", endpointsPath+"/custom", nil).mustCode(t, 200).obj(t)
	cur["subsets"] = endpoints("10.2.3.4", 8090)["subsets"]
	e.do("PUT", endpointsPath+"/custom", cur).mustCode(t, 200)
	items = until("the updated Endpoints mirrored", func(items []any) bool { return holds(items, "10.2.3.4", 8090) })
	if at(items[0], "metadata", "name") != at(slice, "metadata", "name") {
		t.Errorf("slice %v replaced by %v; the old one is reused", at(slice, "metadata", "name"), at(items[0], "metadata", "name"))
	}

	// A slice deleted by someone else is mirrored again.
	e.do("DELETE", slicesPath+"/"+at(items[0], "metadata", "name").(string), nil).mustCode(t, 200)
	until("the deleted slice back", func(items []any) bool { return holds(items, "10.2.3.4", 8090) })

	// Marked skip-mirror: the slices go; unmarked, they come back.
	e.do("PATCH", endpointsPath+"/custom", `{"metadata":{"labels":{"endpointslice.`+b.LongDomain+`/skip-mirror":"true"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	until("the slices of skipped Endpoints gone", func(items []any) bool { return len(items) == 0 })
	e.do("PATCH", endpointsPath+"/custom", `{"metadata":{"labels":{"endpointslice.`+b.LongDomain+`/skip-mirror":null}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	until("the slices back", func(items []any) bool { return holds(items, "10.2.3.4", 8090) })

	// The service gets a selector: its Endpoints are no longer hand-written.
	e.do("PATCH", servicesPath+"/custom", `{"spec":{"selector":{"app":"x"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	until("the slices of a service with a selector gone", func(items []any) bool { return len(items) == 0 })
	e.do("PATCH", servicesPath+"/custom", `{"spec":{"selector":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	until("the slices back", func(items []any) bool { return holds(items, "10.2.3.4", 8090) })

	e.do("DELETE", endpointsPath+"/custom", nil).mustCode(t, 200)
	until("the slices of deleted Endpoints gone", func(items []any) bool { return len(items) == 0 })

	// The API server's own Endpoints are never mirrored.
	if items := mirrored(b.APIServiceName); len(items) != 1 || at(items[0], "metadata", "labels", "endpointslice."+b.LongDomain+"/managed-by") == "endpointslicemirroring-controller."+b.Domain {
		t.Errorf("slices of the API's service: %v", items)
	}
}

package server_test

import (
	"fmt"
	"testing"

	"net"
)

// closedPort is a port of ip nothing listens on.
func closedPort(t *testing.T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestAPIServiceAvailability walks an APIService that names a service
// through upstream's availability checks, one fixed at a time: each step
// is the condition upstream's aggregator writes, with its reason and
// message, and the transition time moves only with the status. Requests
// for the group-version meet 503 while it is unavailable, and the
// server's 404 once it is local again.
func TestAPIServiceAvailability(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	apiServices := groupPath(b.Group("apiregistration"), "v1", "", "apiservices")
	const name, ns = "v1.avail.example.com", "avail-ns"
	created := e.do("POST", apiServices, map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{
		"group": "avail.example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10,
		"service": map[string]any{"namespace": ns, "name": "backend", "port": 8443}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True"}}},
	}).mustCode(t, 201).obj(t)
	if st := at(created, "status"); fmt.Sprint(st) != "map[]" {
		t.Errorf("status on create = %v, want it reset", st)
	}

	var transition any
	expect := func(status, reason, message string) {
		t.Helper()
		var got map[string]any
		eventually(t, reason, func() bool {
			got = e.do("GET", apiServices+"/"+name, nil).mustCode(t, 200).obj(t)
			return at(got, "status", "conditions", 0, "reason") == reason
		})
		cond := at(got, "status", "conditions", 0).(map[string]any)
		if cond["type"] != "Available" || cond["status"] != status || cond["message"] != message {
			t.Errorf("condition = %v\nwant %s %s %q", cond, status, reason, message)
		}
		if n := len(at(got, "status", "conditions").([]any)); n != 1 {
			t.Errorf("%d conditions, want 1", n)
		}
		if transition == nil {
			transition = cond["lastTransitionTime"]
		} else if cond["lastTransitionTime"] != transition {
			t.Errorf("lastTransitionTime moved from %v to %v without a status change", transition, cond["lastTransitionTime"])
		}
		var byServer bool
		for _, f := range at(got, "metadata", "managedFields").([]any) {
			fm := f.(map[string]any)
			byServer = byServer || fm["manager"] == b.FieldManager && fm["subresource"] == "status"
		}
		if !byServer {
			t.Errorf("the condition is not recorded as the server's status write: %v", at(got, "metadata", "managedFields"))
		}
	}
	unavailable := func() {
		t.Helper()
		r := e.do("GET", "/apis/avail.example.com/v1/things", nil).mustCode(t, 503)
		if string(r.body) != "service unavailable\n" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("503: %q %v", r.body, r.header)
		}
	}

	expect("False", "ServiceNotFound", `service/backend in "avail-ns" is not present`)
	unavailable()

	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	services := "/api/v1/namespaces/" + ns + "/services"
	e.do("POST", services, map[string]any{"metadata": map[string]any{"name": "backend"}, "spec": map[string]any{
		"ports": []any{map[string]any{"name": "https", "port": 443}}}}).mustCode(t, 201)
	expect("False", "ServicePortError", `service/backend in "avail-ns" is not listening on port 8443`)

	e.do("PATCH", services+"/backend", `{"spec":{"ports":[{"name":"https","port":443},{"name":"api","port":8443}]}}`,
		"Content-Type", "application/strategic-merge-patch+json").mustCode(t, 200).obj(t)
	expect("False", "EndpointsNotFound", `cannot find endpoints for service/backend in "avail-ns"`)

	endpoints := "/api/v1/namespaces/" + ns + "/endpoints"
	e.do("POST", endpoints, map[string]any{"metadata": map[string]any{"name": "backend"}, "subsets": []any{map[string]any{
		"notReadyAddresses": []any{map[string]any{"ip": "10.9.8.6"}}, "ports": []any{map[string]any{"name": "api", "port": 9443}}}}}).mustCode(t, 201)
	expect("False", "MissingEndpoints", `endpoints for service/backend in "avail-ns" have no addresses with port name "api"`)

	// The discovery check goes to the ready endpoint, where nothing
	// listens.
	ip := hostIP(t)
	closed := closedPort(t, ip)
	e.do("PUT", endpoints+"/backend", map[string]any{"metadata": map[string]any{"name": "backend"}, "subsets": []any{map[string]any{
		"addresses": []any{map[string]any{"ip": ip}}, "ports": []any{map[string]any{"name": "api", "port": closed}}}}}).mustCode(t, 200)
	url := fmt.Sprintf("https://%s:%d/apis/avail.example.com/v1", ip, closed)
	expect("False", "FailedDiscoveryCheck", fmt.Sprintf(`failing or missing response from %s: Get %q: dial tcp %s:%d: connect: connection refused`, url, url, ip, closed))
	unavailable()

	// Local again: the write marks it available, and the group-version,
	// which nothing serves, is not found.
	e.do("PATCH", apiServices+"/"+name, `{"spec":{"service":null,"insecureSkipTLSVerify":null,"caBundle":null}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
	got := e.do("GET", apiServices+"/"+name, nil).mustCode(t, 200).obj(t)
	if at(got, "status", "conditions", 0, "status") != "True" || at(got, "status", "conditions", 0, "reason") != "Local" {
		t.Errorf("local again: %v", got["status"])
	}
	e.do("GET", "/apis/avail.example.com/v1/things", nil).mustCode(t, 404)

	// An APIService naming a service for a group-version platd serves,
	// its own included, never shuts that API out.
	own := "v1." + b.Group("apiregistration")
	e.do("POST", apiServices, map[string]any{"metadata": map[string]any{"name": own}, "spec": map[string]any{
		"group": b.Group("apiregistration"), "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10,
		"service": map[string]any{"namespace": ns, "name": "backend", "port": 8443}}}).mustCode(t, 201)
	eventually(t, "the own group's APIService checked", func() bool {
		got := e.do("GET", apiServices+"/"+own, nil).mustCode(t, 200).obj(t)
		return at(got, "status", "conditions", 0, "reason") == "FailedDiscoveryCheck"
	})
	e.do("GET", apiServices, nil).mustCode(t, 200)
	e.do("DELETE", apiServices+"/"+own, nil).mustCode(t, 200)
}

package server_test

import (
	"testing"

	"platd/config"
)

// TestLeaderElectionLease drives a Lease the way client-go's resource
// lock does: get (missing), create, get, update with the read
// resourceVersion, and a competing update from a stale read.
func TestLeaderElectionLease(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	base := groupPath(b.Group("coordination"), "v1", b.SystemNamespace, "leases")

	nf := e.do("GET", base+"/controller-leader", nil).mustCode(t, 404).obj(t)
	if nf["reason"] != "NotFound" || nf["message"] != `leases.`+b.Group("coordination")+` "controller-leader" not found` {
		t.Fatalf("missing lease: %v", nf)
	}

	// What LeaseLock.Create sends: the typed object with its TypeMeta, a
	// null creationTimestamp, and microsecond times.
	body := `{"kind":"Lease","apiVersion":"` + b.Group("coordination") + `/v1",` +
		`"metadata":{"name":"controller-leader","namespace":"` + b.SystemNamespace + `","creationTimestamp":null},` +
		`"spec":{"holderIdentity":"host-a_0f1e","leaseDurationSeconds":15,` +
		`"acquireTime":"2026-03-01T10:00:00.123456Z","renewTime":"2026-03-01T10:00:00.123456Z","leaseTransitions":0}}`
	created := e.do("POST", base, body).mustCode(t, 201).obj(t)
	if at(created, "spec", "acquireTime") != "2026-03-01T10:00:00.123456Z" || at(created, "spec", "leaseDurationSeconds") != 15.0 ||
		at(created, "spec", "leaseTransitions") != 0.0 || at(created, "spec", "holderIdentity") != "host-a_0f1e" {
		t.Errorf("created spec: %v", created["spec"])
	}

	// Renew: the lock updates the object it read.
	cur := e.do("GET", base+"/controller-leader", nil).mustCode(t, 200).obj(t)
	stale := e.do("GET", base+"/controller-leader", nil).mustCode(t, 200).obj(t)
	cur["spec"].(map[string]any)["renewTime"] = "2026-03-01T10:00:02.654321Z"
	renewed := e.do("PUT", base+"/controller-leader", cur).mustCode(t, 200).obj(t)
	if at(renewed, "spec", "renewTime") != "2026-03-01T10:00:02.654321Z" ||
		at(renewed, "metadata", "resourceVersion") == at(cur, "metadata", "resourceVersion") {
		t.Errorf("renewed: %v", renewed)
	}

	// Another candidate acting on an old read loses.
	spec := stale["spec"].(map[string]any)
	spec["holderIdentity"], spec["leaseTransitions"] = "host-b_77aa", 1
	conflict := e.do("PUT", base+"/controller-leader", stale).mustCode(t, 409).obj(t)
	if conflict["reason"] != "Conflict" {
		t.Errorf("stale takeover: %v", conflict)
	}
	got := e.do("GET", base+"/controller-leader", nil).mustCode(t, 200).obj(t)
	if at(got, "spec", "holderIdentity") != "host-a_0f1e" || at(got, "spec", "renewTime") != "2026-03-01T10:00:02.654321Z" {
		t.Errorf("stored after the lost race: %v", got["spec"])
	}

	// A PUT of a lease that does not exist creates it.
	put := `{"metadata":{"name":"other"},"spec":{"holderIdentity":"x","leaseDurationSeconds":10}}`
	if c := e.do("PUT", base+"/other", put).mustCode(t, 201).obj(t); at(c, "spec", "holderIdentity") != "x" {
		t.Errorf("created by PUT: %v", c)
	}
}

// TestUnconditionalUpdateRefused checks that a Lease, like the other types
// whose updates must name the version they replace, refuses a PUT without
// a resourceVersion, and still creates through PUT.
func TestUnconditionalUpdateRefused(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	base := groupPath(b.Group("coordination"), "v1", "default", "leases")
	body := `{"metadata":{"name":"l"},"spec":{"holderIdentity":"a"}}`
	e.do("PUT", base+"/l", body).mustCode(t, 201)
	r := e.do("PUT", base+"/l", body).mustCode(t, 422).obj(t)
	if r["message"] != `Lease.`+b.Group("coordination")+` "l" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update` {
		t.Errorf("unconditional update: %v", r["message"])
	}
	// A ConfigMap accepts it: last write wins.
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("c", nil, nil)).mustCode(t, 201)
	e.do("PUT", "/api/v1/namespaces/default/configmaps/c", cm("c", map[string]string{"k": "v"}, nil)).mustCode(t, 200)
}

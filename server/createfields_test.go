package server_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// createdEntries is the managedFields of an object's JSON, each entry's
// FieldsV1 kept as the bytes the server wrote.
type createdEntries struct {
	Metadata struct {
		ManagedFields []struct {
			Manager, Operation, APIVersion, FieldsType, Time, Subresource string
			FieldsV1                                                      json.RawMessage
		}
	}
}

// TestCreateRecordsOwnershipOfEverySetField creates the benchmark's 3 KB
// pod and checks its one Update entry, whose FieldsV1 must be byte for
// byte what the comparison with the type's zero object recorded before
// creates were tracked by a walk of the new object
// (testdata/pod-3k-fieldsv1.json), in the answer and in the stored
// object.
func TestCreateRecordsOwnershipOfEverySetField(t *testing.T) {
	t.Parallel()
	e, body := startWithBenchPod(t)
	want, err := os.ReadFile("testdata/pod-3k-fieldsv1.json")
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.TrimSpace(want)
	before := time.Now().UTC().Truncate(time.Second)
	created := e.do("POST", "/api/v1/namespaces/bench/pods", body).mustCode(t, 201)
	after := time.Now().UTC()
	var name struct{ Metadata struct{ Name string } }
	if err := json.Unmarshal(created.body, &name); err != nil {
		t.Fatal(err)
	}
	got := e.do("GET", "/api/v1/namespaces/bench/pods/"+name.Metadata.Name, nil).mustCode(t, 200)
	for what, b := range map[string][]byte{"answer": created.body, "stored": got.body} {
		var obj createdEntries
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := len(obj.Metadata.ManagedFields); n != 1 {
			t.Fatalf("%s: %d managedFields entries, want 1: %s", what, n, b)
		}
		mf := obj.Metadata.ManagedFields[0]
		if mf.Manager != "platd-test" || mf.Operation != "Update" || mf.APIVersion != "v1" || mf.FieldsType != "FieldsV1" || mf.Subresource != "" {
			t.Errorf("%s: entry %+v, want manager platd-test, operation Update, apiVersion v1, fieldsType FieldsV1", what, mf)
		}
		if at, err := time.Parse(time.RFC3339, mf.Time); err != nil || at.Before(before) || at.After(after) {
			t.Errorf("%s: entry time %q, want a time between %s and %s", what, mf.Time, before, after)
		}
		if !bytes.Equal(mf.FieldsV1, want) {
			t.Errorf("%s: fieldsV1\n got  %s\n want %s", what, mf.FieldsV1, want)
		}
	}
}

// TestCreateOwnershipOfStatusAndManager checks a create through the
// fieldManager query: the entry is the query's manager's, and status,
// written through its subresource, is not owned even when the body sets
// it; a body that owns nothing but kept fields records no entry.
func TestCreateOwnershipOfStatusAndManager(t *testing.T) {
	t.Parallel()
	e := start(t)
	p := e.do("POST", "/api/v1/namespaces/default/pods?fieldManager=maker",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"owned","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}`).mustCode(t, 201)
	var obj createdEntries
	if err := json.Unmarshal(p.body, &obj); err != nil {
		t.Fatal(err)
	}
	if n := len(obj.Metadata.ManagedFields); n != 1 {
		t.Fatalf("%d entries, want 1: %s", n, p.body)
	}
	mf := obj.Metadata.ManagedFields[0]
	const want = `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`
	if mf.Manager != "maker" || string(mf.FieldsV1) != want {
		t.Errorf("entry %s %s,\n want maker %s", mf.Manager, mf.FieldsV1, want)
	}
	cm := e.do("POST", "/api/v1/namespaces/default/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bare"}}`).mustCode(t, 201)
	if bytes.Contains(cm.body, []byte(`"managedFields"`)) {
		t.Errorf("a create owning nothing recorded an entry: %s", cm.body)
	}
}

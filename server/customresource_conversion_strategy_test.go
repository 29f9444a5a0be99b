package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"platd/bolt"
	"platd/server/rest"
)

// setCRDSpec replaces the spec of the CRD name.
func setCRDSpec(t *testing.T, e *env, name string, spec any) {
	t.Helper()
	cur := e.do("GET", crdPath+"/"+name, nil).mustCode(t, 200).obj(t)
	cur["spec"] = spec
	e.do("PUT", crdPath+"/"+name, cur).mustCode(t, 200)
}

// hostsCRDNone is hostsCRD with conversion strategy None.
func hostsCRDNone(group, storage string) map[string]any {
	crd := hostsCRD(group, storage, nil)
	crd["spec"].(map[string]any)["conversion"] = map[string]any{"strategy": "None"}
	return crd
}

// awaitStored waits until hook converts what is written through v1 into
// storage, the storage version of the definition just applied.
func awaitStored(t *testing.T, e *env, hook *hostsWebhook, group, storage string) {
	t.Helper()
	if storage == "v1" {
		// Nothing written through v1 is converted: wait for a read
		// through v2 to be.
		eventually(t, "webhook conversion", func() bool {
			r := e.do("GET", groupPath(group, "v2", "default", "hosts")+"/a", nil)
			return r.code == 200 && len(hook.take()) > 0
		})
		return
	}
	eventually(t, "webhook conversion into "+storage, func() bool {
		e.do("POST", groupPath(group, "v1", "default", "hosts"), map[string]any{"apiVersion": group + "/v1", "kind": "Host",
			"metadata": map[string]any{"generateName": "p-"}, "spec": map[string]any{"hostPort": "p:1"}})
		for _, rv := range hook.take() {
			if at(rv, "request", "desiredAPIVersion") == group+"/"+storage {
				return true
			}
		}
		return false
	})
}

// Objects written while a CRD's conversion strategy is None are stored in
// the storage version of the time and read as such ever after: moved to
// Webhook conversion with another storage version, directly or in two
// steps, the CRD reads them as v1 objects and converts them, as upstream,
// whose stored objects carry the apiVersion they were written in.
func TestCustomResourceNoneEraObjectsKeepTheirVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, group string
		steps       []string // storage versions of the Webhook definitions applied in turn
	}{
		{"webhook with v2 stored", "nonetov2.example.com", []string{"v2"}},
		{"webhook with v1 stored, then v2", "nonetov1v2.example.com", []string{"v1", "v2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := start(t)
			hook := newHostsWebhook(t)
			group := tc.group
			name := "hosts." + group
			e.do("POST", crdPath, hostsCRDNone(group, "v1")).mustCode(t, 201)
			v1, v2 := groupPath(group, "v1", "default", "hosts"), groupPath(group, "v2", "default", "hosts")
			eventually(t, "served", func() bool { return e.do("GET", v1, nil).code == 200 })
			e.do("POST", v1, map[string]any{"apiVersion": group + "/v1", "kind": "Host", "metadata": map[string]any{"name": "a"},
				"spec": map[string]any{"hostPort": "a.example.org:80"}}).mustCode(t, 201)
			for _, storage := range tc.steps {
				setCRDSpec(t, e, name, hostsCRD(group, storage, hook.clientConfig(), "v1")["spec"])
				awaitStored(t, e, hook, group, storage)
			}
			got := e.do("GET", v2+"/a", nil).mustCode(t, 200).obj(t)
			if at(got, "spec", "host") != "a.example.org" || at(got, "spec", "port") != "80" {
				t.Errorf("object written in v1 under None, read through v2: %v", got["spec"])
			}
			got = e.do("GET", v1+"/a", nil).mustCode(t, 200).obj(t)
			if at(got, "spec", "hostPort") != "a.example.org:80" {
				t.Errorf("object written in v1 under None, read through v1: %v", got["spec"])
			}
		})
	}
}

// topLevelKeys counts the members of a JSON object by name, at its top
// level only (a duplicate is counted twice).
func topLevelKeys(t *testing.T, body []byte) map[string]int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", body)
	}
	out := map[string]int{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out[k.(string)]++
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Back from Webhook to None: objects written under Webhook name their
// version in storage, as do those written under None, and the None read
// paths (the object served as stored, the decoded one, the streamed list,
// the watch) read it and do not pass it on: every object is served with
// one apiVersion, the one addressed.
func TestCustomResourceWebhookToNoneServesOneAPIVersion(t *testing.T) {
	t.Parallel()
	e := start(t)
	hook := newHostsWebhook(t)
	const group = "tonone.example.com"
	name := "hosts." + group
	e.do("POST", crdPath, hostsCRD(group, "v2", hook.clientConfig(), "v1")).mustCode(t, 201)
	v1, v2 := groupPath(group, "v1", "default", "hosts"), groupPath(group, "v2", "default", "hosts")
	eventually(t, "served", func() bool { return e.do("GET", v1, nil).code == 200 })
	e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"host": "a", "port": "80"}}).mustCode(t, 201)
	setCRDSpec(t, e, name, hostsCRDNone(group, "v1")["spec"])
	eventually(t, "None in effect", func() bool {
		e.do("GET", v1+"/a", nil)
		return len(hook.take()) == 0
	})
	e.do("POST", v1, map[string]any{"apiVersion": group + "/v1", "kind": "Host", "metadata": map[string]any{"name": "b"},
		"spec": map[string]any{"hostPort": "b:80"}}).mustCode(t, 201)
	w := e.watch(v1 + "?watch=true")
	seen := map[string]any{}
	for range 2 {
		ev := w.expect("ADDED", "")
		seen[path(ev.Object, "metadata.name").(string)] = ev.Object["apiVersion"]
	}
	if seen["a"] != group+"/v1" || seen["b"] != group+"/v1" {
		t.Errorf("watch through v1 after the switch to None: apiVersions %v", seen)
	}
	for _, n := range []string{"a", "b"} {
		got := e.do("GET", v1+"/"+n, nil).mustCode(t, 200)
		if k := topLevelKeys(t, got.body); k["apiVersion"] != 1 || at(got.obj(t), "apiVersion") != group+"/v1" {
			t.Errorf("GET %s through v1 after the switch to None: %s", n, got.body)
		}
	}
	if got := e.do("GET", v1+"/b", nil).obj(t); at(got, "spec", "hostPort") != "b:80" {
		t.Errorf("object written under None: %v", got["spec"])
	}
	var l struct{ Items []json.RawMessage }
	if err := json.Unmarshal(e.do("GET", v1, nil).mustCode(t, 200).body, &l); err != nil || len(l.Items) != 2 {
		t.Fatalf("list: %v %d items", err, len(l.Items))
	}
	for _, it := range l.Items {
		var o map[string]any
		_ = json.Unmarshal(it, &o)
		if k := topLevelKeys(t, it); k["apiVersion"] != 1 || o["apiVersion"] != group+"/v1" {
			t.Errorf("list item through v1 after the switch to None: %s", it)
		}
	}
}

// Objects stored before custom resources named their version (by an
// earlier build) are of the storage version of the time: read as such
// after a restart, and still after the storage version changes.
func TestCustomResourceUnversionedObjectsKeepTheirStorageVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hook := newHostsWebhook(t)
	const group = "unversioned.example.com"
	name := "hosts." + group
	o := testOptions(t, dir)
	e := startWith(t, o)
	e.do("POST", crdPath, hostsCRDNone(group, "v1")).mustCode(t, 201)
	v1, v2 := groupPath(group, "v1", "default", "hosts"), groupPath(group, "v2", "default", "hosts")
	eventually(t, "served", func() bool { return e.do("GET", v1, nil).code == 200 })
	e.do("POST", v1, map[string]any{"apiVersion": group + "/v1", "kind": "Host", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"hostPort": "a.example.org:80"}}).mustCode(t, 201)
	e.stop()

	// As an earlier build stored it: without its version.
	db, err := bolt.Open(o.DBPath(), bolt.Options{Stamp: rest.Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	key := "/hosts." + group + "/default/a"
	kv, err := db.Get(key)
	// The member follows the metadata.
	member := `},"apiVersion":"` + group + `/v1"`
	if err != nil || bytes.Count(kv.Value, []byte(member)) != 1 {
		t.Fatalf("stored: %s %v", kv.Value, err)
	}
	if _, err := db.Update(context.Background(), key, kv.ModRevision, bytes.Replace(kv.Value, []byte(member), []byte("}"), 1)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	e = startWith(t, testOptions(t, dir))
	defer e.stop()
	eventually(t, "served", func() bool { return e.do("GET", v1, nil).code == 200 })
	if got := e.do("GET", v1+"/a", nil).mustCode(t, 200).obj(t); at(got, "spec", "hostPort") != "a.example.org:80" {
		t.Errorf("unversioned object read through v1: %v", got)
	}
	setCRDSpec(t, e, name, hostsCRD(group, "v2", hook.clientConfig(), "v1")["spec"])
	awaitStored(t, e, hook, group, "v2")
	got := e.do("GET", v2+"/a", nil).mustCode(t, 200).obj(t)
	if at(got, "spec", "host") != "a.example.org" || at(got, "spec", "port") != "80" {
		t.Errorf("unversioned object read through v2 after the storage version changed: %v", got["spec"])
	}
}

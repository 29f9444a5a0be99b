package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var updateCreatePin = flag.Bool("update-createpin", false, "rewrite testdata/pod-3k-created.json from the current server")

// TestCreatePodPinned creates the benchmark's 3 KB pod and holds the
// answer and the stored object (read back) byte for byte to
// testdata/pod-3k-created.json, with the values a create makes anew (uid,
// times, resourceVersion) replaced by placeholders: work on the create
// path must not change a byte of either.
func TestCreatePodPinned(t *testing.T) {
	t.Parallel()
	e, body := startWithBenchPod(t)
	created := e.do("POST", "/api/v1/namespaces/bench/pods", body).mustCode(t, 201)
	var obj struct {
		Metadata struct {
			Name, UID, CreationTimestamp, ResourceVersion string
			ManagedFields                                 []struct{ Time string }
		}
	}
	if err := json.Unmarshal(created.body, &obj); err != nil {
		t.Fatal(err)
	}
	m := obj.Metadata
	if len(m.ManagedFields) != 1 {
		t.Fatalf("%d managedFields entries, want 1: %s", len(m.ManagedFields), created.body)
	}
	stored := e.do("GET", "/api/v1/namespaces/bench/pods/"+m.Name, nil).mustCode(t, 200)
	mask := func(b []byte) []byte {
		for _, r := range [][2]string{
			{`"uid":"` + m.UID + `"`, `"uid":"UID"`},
			{`"creationTimestamp":"` + m.CreationTimestamp + `"`, `"creationTimestamp":"CREATED"`},
			{`"resourceVersion":"` + m.ResourceVersion + `"`, `"resourceVersion":"RV"`},
			{`"time":"` + m.ManagedFields[0].Time + `"`, `"time":"TIME"`},
		} {
			if bytes.Count(b, []byte(r[0])) != 1 {
				t.Fatalf("%s appears %d times, want once: %s", r[0], bytes.Count(b, []byte(r[0])), b)
			}
			b = bytes.Replace(b, []byte(r[0]), []byte(r[1]), 1)
		}
		return b
	}
	got := append(append(mask(created.body), '\n'), mask(stored.body)...)
	const pin = "testdata/pod-3k-created.json"
	if *updateCreatePin {
		if err := os.WriteFile(pin, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(pin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("answer and stored pod differ from %s:\n got  %s\n want %s", pin, got, want)
	}
}

// startWithBenchPod starts a server holding the bench namespace and the
// pod's service account, and returns it with the benchmark's 3 KB pod
// (rest/testdata/pod-3k.json) to create.
func startWithBenchPod(t *testing.T) (*env, []byte) {
	t.Helper()
	e := start(t)
	e.do("POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}`).mustCode(t, 201)
	// The pod's service account, which mounts no token: the pinned pod
	// is what the create path makes of the body, no volume added.
	e.do("POST", "/api/v1/namespaces/bench/serviceaccounts", `{"metadata":{"name":"checkout"},"automountServiceAccountToken":false}`).mustCode(t, 201)
	body, err := os.ReadFile("rest/testdata/pod-3k.json")
	if err != nil {
		t.Fatal(err)
	}
	return e, body
}

package rest

import (
	"context"
	"os"
	"testing"

	"platd/bolt"
)

// createStore is a Storage that holds a few objects (a namespace, the
// pod's service account) and accepts every create without keeping it: the
// create pipeline without the engine.
type createStore struct {
	Storage
	objs []bolt.KV
}

func (s *createStore) Get(key string) (bolt.KV, error) {
	for _, kv := range s.objs {
		if kv.Key == key {
			return kv, nil
		}
	}
	return bolt.KV{}, bolt.ErrNotFound
}

// List finds nothing: no PriorityClass, so pods take the default priority.
func (s *createStore) List(string, bolt.ListOptions) (bolt.ListResult, error) {
	return bolt.ListResult{Revision: 1}, nil
}

func (s *createStore) Create(_ context.Context, key string, value []byte) (bolt.KV, error) {
	return bolt.KV{Key: key, Value: value, ModRevision: 2, CreateRevision: 2}, nil
}

// BenchmarkCreatePod runs the create pipeline of a realistic 3 KB Pod
// (testdata/pod-3k.json, what BenchmarkPodCreates sends) in process:
// decode, metadata, defaults, validation and the stored encoding.
func BenchmarkCreatePod(b *testing.B) {
	body, err := os.ReadFile("testdata/pod-3k.json")
	if err != nil {
		b.Fatal(err)
	}
	h, _ := configMapHandler(b)
	d := h.reg.Lookup("", "v1", "pods")
	nd := h.reg.Namespaces()
	sad := h.reg.Lookup("", "v1", "serviceaccounts")
	store := &createStore{objs: []bolt.KV{
		{Key: nd.Key("", "bench"), Value: []byte(`{"metadata":{"name":"bench"}}`), ModRevision: 1, CreateRevision: 1},
		{Key: sad.Key("bench", "checkout"), Value: []byte(`{"metadata":{"name":"checkout","namespace":"bench"}}`), ModRevision: 1, CreateRevision: 1},
	}}
	h.store = store
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s := &scope{d: d, ns: "bench"}
		dec, err := h.decodeJSON(body, s, writeOptions{fieldValidation: validationStrict})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.prepareAndCreate(ctx, s, dec.obj, false); err != nil {
			b.Fatal(err)
		}
	}
}

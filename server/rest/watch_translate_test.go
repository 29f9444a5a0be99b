package rest

import (
	"testing"

	"platd/bolt"
	"platd/server/registry"
)

// TestTranslateDeleteWithoutValue: a DELETED event with no object (a
// corrupt value deleted on another etcd replica) is not sent, rather than
// sent with an empty object; one with its object is.
func TestTranslateDeleteWithoutValue(t *testing.T) {
	h := &Handler{}
	pred := &predicate{}
	d := &registry.Descriptor{}
	if typ, obj, _, ok, _ := h.translate(d, pred, bolt.Event{Type: bolt.Delete, Revision: 7, KV: bolt.KV{Key: "/s/ns/a", ModRevision: 7}}); ok || obj != nil {
		t.Fatalf("delete without a value: %q %q sent", typ, obj)
	}
	v := []byte(`{"metadata":{"name":"a"}}`)
	typ, obj, _, ok, _ := h.translate(d, pred, bolt.Event{Type: bolt.Delete, Revision: 7, KV: bolt.KV{Key: "/s/ns/a", Value: v, ModRevision: 7}})
	if !ok || typ != eventDeleted || string(obj) != string(v) {
		t.Fatalf("delete with a value: %q %q %v", typ, obj, ok)
	}
}

package server

import (
	"context"
	"time"

	"platd/bolt"
	"platd/server/metrics"
	"platd/server/registry"
	"platd/server/rest"
)

// timedStore is the store as the REST layer sees it, timing each request
// into bolt_request_duration_seconds. Controllers use the store directly:
// as upstream's metric, it measures what API requests wait for.
type timedStore struct {
	rest.Storage
	m *metrics.Registry
}

func (t timedStore) Get(key string) (bolt.KV, error) {
	start := time.Now()
	kv, err := t.Storage.Get(key)
	t.m.ObserveStorage("get", registry.StorageType(key), time.Since(start))
	return kv, err
}

func (t timedStore) List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	start := time.Now()
	l, err := t.Storage.List(prefix, opts)
	t.m.ObserveStorage("list", registry.StorageType(prefix), time.Since(start))
	return l, err
}

func (t timedStore) Create(ctx context.Context, key string, value []byte) (bolt.KV, error) {
	start := time.Now()
	kv, err := t.Storage.Create(ctx, key, value)
	t.m.ObserveStorage("create", registry.StorageType(key), time.Since(start))
	return kv, err
}

func (t timedStore) Update(ctx context.Context, key string, rev int64, value []byte) (bolt.KV, error) {
	start := time.Now()
	kv, err := t.Storage.Update(ctx, key, rev, value)
	t.m.ObserveStorage("update", registry.StorageType(key), time.Since(start))
	return kv, err
}

func (t timedStore) Delete(ctx context.Context, key string, rev int64) (bolt.KV, error) {
	start := time.Now()
	kv, err := t.Storage.Delete(ctx, key, rev)
	t.m.ObserveStorage("delete", registry.StorageType(key), time.Since(start))
	return kv, err
}

// Txn is labelled with its first operation's resource: the object written,
// the claims and dependents it carries along come after it.
func (t timedStore) Txn(ctx context.Context, ops []bolt.Op) ([]bolt.KV, error) {
	start := time.Now()
	kvs, err := t.Storage.Txn(ctx, ops)
	typ := ""
	if len(ops) > 0 {
		typ = registry.StorageType(ops[0].Key)
	}
	t.m.ObserveStorage("txn", typ, time.Since(start))
	return kvs, err
}

// Stale passes the engine's stale-value check through (rest's optional
// staleChecker).
func (t timedStore) Stale(key string) bool {
	if sc, ok := t.Storage.(interface{ Stale(string) bool }); ok {
		return sc.Stale(key)
	}
	return false
}

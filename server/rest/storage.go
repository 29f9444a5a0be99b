package rest

import (
	"context"

	"platd/bolt"
)

// Storage is what the REST layer needs of the storage engine. bolt.Store,
// the conformance contract every engine satisfies, provides it.
type Storage interface {
	Get(key string) (bolt.KV, error)
	List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error)
	Create(ctx context.Context, key string, value []byte) (bolt.KV, error)
	Update(ctx context.Context, key string, expectedRevision int64, value []byte) (bolt.KV, error)
	Delete(ctx context.Context, key string, expectedRevision int64) (bolt.KV, error)
	Txn(ctx context.Context, ops []bolt.Op) ([]bolt.KV, error)
	Watch(ctx context.Context, prefix string, fromRevision int64) (bolt.Watcher, error)
	Revision() int64
	CompactedRevision() int64
	WaitForRevision(ctx context.Context, rev int64) error
}

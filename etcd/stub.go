package etcd

import (
	"context"

	"platd/bolt"
)

var errStub = bolt.ErrClosed

func (db *DB) Get(key string) (bolt.KV, error) { return bolt.KV{}, errStub }
func (db *DB) List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	return bolt.ListResult{}, errStub
}
func (db *DB) Count(prefix string) int64 { return 0 }
func (db *DB) Create(ctx context.Context, key string, value []byte) (bolt.KV, error) {
	return bolt.KV{}, errStub
}
func (db *DB) Update(ctx context.Context, key string, rev int64, value []byte) (bolt.KV, error) {
	return bolt.KV{}, errStub
}
func (db *DB) Delete(ctx context.Context, key string, rev int64) (bolt.KV, error) {
	return bolt.KV{}, errStub
}
func (db *DB) Txn(ctx context.Context, ops []bolt.Op) ([]bolt.KV, error) { return nil, errStub }
func (db *DB) Watch(ctx context.Context, prefix string, from int64) (bolt.Watcher, error) {
	return nil, errStub
}
func (db *DB) Revision() int64                                      { return 0 }
func (db *DB) CompactedRevision() int64                             { return 0 }
func (db *DB) WaitForRevision(ctx context.Context, rev int64) error { return errStub }
func (db *DB) Compact(ctx context.Context, rev int64) error         { return errStub }
func (db *DB) Close() error                                         { return nil }

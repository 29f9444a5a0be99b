package etcd

import (
	"context"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// DB is a bolt.Store on etcd. Its methods are safe for concurrent use.
type DB struct {
	cli *clientv3.Client
}

var _ bolt.Store = (*DB)(nil)

// Open connects to etcd, loads the state under opts.Prefix into memory and
// follows it. The DB owns the client; Close closes both.
func Open(ctx context.Context, opts Options) (*DB, error) {
	return nil, errors.New("etcd: not implemented yet")
}

// Client returns the etcd client the DB uses (leader election, allocators).
// It is closed by Close.
func (db *DB) Client() *clientv3.Client { return db.cli }

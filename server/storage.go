package server

import (
	"context"
	"fmt"

	"platd/bolt"
	"platd/config"
	"platd/server/rest"
)

// The server holds its engine as the storage contract (bolt.Store); what
// only some engines can do is found by asking for these small interfaces,
// so nothing else of the server names an engine.
type (
	// taggedStore records what the store is for (the brand), in stores
	// written before that was recorded (brandrecord.go).
	taggedStore interface {
		Untagged() bool
		RecordTag() error
	}
	// fileStore is kept in one local file: its size is a metric.
	fileStore interface{ Path() string }
	// defragStore rewrites its file online (metrics).
	defragStore interface{ DefragStats() bolt.DefragStats }
	// historyStore reports the memory its watch history keeps (metrics).
	historyStore interface{ HistoryStats() bolt.HistoryStats }
	// erasableStore deletes everything it holds, for a migration that
	// failed into a store it found empty (etcd: no file to remove).
	erasableStore interface {
		Erase(ctx context.Context) error
	}
	// staleStore marks values a new encryption configuration would
	// write differently, so unchanged updates rewrite them.
	staleStore interface {
		RecheckStale(stale func(key string, stored []byte) bool) error
	}
)

// storeOpener opens the engine o.StorageBackend names. t is the value
// transformer of --encryption-provider-config (nil without it). It runs
// while New reads the key material and registers the types: of the
// Server it may read only what is set before (the options, the logger,
// what preflight read).
type storeOpener func(ctx context.Context, s *Server, t bolt.Transformer) (bolt.Store, error)

// openers maps each --storage-backend to its opener.
var openers = map[string]storeOpener{
	config.StorageBackendBBolt: openBolt,
	config.StorageBackendETCD3: openEtcd,
}

// openStore opens the engine of --storage-backend. Its errors say what to
// do about them.
func (s *Server) openStore(ctx context.Context, t bolt.Transformer) (bolt.Store, error) {
	open := openers[s.opts.StorageBackend]
	if s.opts.StorageBackend == "" {
		open = openBolt
	}
	if open == nil {
		return nil, fmt.Errorf("%w: --storage-backend %q is not supported", config.ErrInvalid, s.opts.StorageBackend)
	}
	return open(ctx, s, t)
}

// openBolt opens the data directory's bbolt file. The brand is recorded
// at the first start (in the open's own transaction) and a start with
// another brand is refused; its lock keeps a second platd out of the
// directory.
func openBolt(_ context.Context, s *Server, t bolt.Transformer) (bolt.Store, error) {
	o := s.opts
	db, err := bolt.Open(o.DBPath(), bolt.Options{Stamp: rest.Stamp, HistoryRetention: o.HistoryRetention, HistoryMaxBytes: o.WatchHistoryMaxBytes,
		NoFsync: o.UnsafeNoFsync, Logger: s.log, Tag: o.Brand.Name, DefragThreshold: o.StorageDefragThreshold, Transformer: t, Verify: rest.VerifyStored})
	if err != nil {
		return nil, s.openError(err)
	}
	return db, nil
}

// closeStore closes the store if the server opened it.
func (s *Server) closeStore() error {
	if !s.ownStore {
		return nil
	}
	return s.store.Close()
}

// noBoltFileHint says, for a command that works on the bbolt file, why a
// data directory may have none: a platd on etcd keeps its objects there,
// and etcd's own tool does the command's work.
func noBoltFileHint(command, etcdTool string) string {
	return fmt.Sprintf(" (a platd with --storage-backend=%s keeps its objects in etcd, not in the data directory: platd %s works on the %s file only; for etcd use %s)",
		config.StorageBackendETCD3, command, config.StorageBackendBBolt, etcdTool)
}

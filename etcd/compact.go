package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// Compact implements bolt.Store: it records rev in the compaction key (so
// every replica learns it) and compacts etcd at rev. The put moves the
// key's version, so a compactor running meanwhile (CompactionInterval)
// loses its next interval and compacts one interval later: harmless.
func (db *DB) Compact(ctx context.Context, rev int64) error {
	db.mu.RLock()
	cur, done := db.rev, db.compacted
	db.mu.RUnlock()
	if rev > cur {
		return fmt.Errorf("%w: compact at %d, current %d", bolt.ErrFutureRevision, rev, cur)
	}
	if rev <= done {
		return nil
	}
	if _, err := db.cli.Put(ctx, db.prefix+compactKey, strconv.FormatInt(rev, 10)); err != nil {
		return fmt.Errorf("%w: record compaction: %v", bolt.ErrIO, err)
	}
	return db.compact(ctx, rev)
}

// compact compacts etcd at rev and moves the compacted revision.
func (db *DB) compact(ctx context.Context, rev int64) error {
	if _, err := db.cli.Compact(ctx, rev); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("%w: compact at %d: %v", bolt.ErrIO, rev, err)
	}
	db.mu.Lock()
	db.compactedAt(rev)
	db.mu.Unlock()
	db.log.Info("compact", "prefix", db.prefix, "revision", rev)
	return nil
}

// compactor compacts etcd every interval from whichever replica wins the
// interval, as upstream's compactor does: each replica tries a transaction
// on the compaction key's version; the one that moves it compacts at the
// revision it saw one interval before, so every replica has had an
// interval to read past it, and the others learn the version to try next.
func (db *DB) compactor(interval time.Duration) {
	defer db.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	var version, last int64
	for {
		select {
		case <-db.ctx.Done():
			return
		case <-t.C:
		}
		var err error
		version, last, err = db.compactOnce(version, last)
		if err != nil && db.ctx.Err() == nil {
			db.log.Warn("compact", "prefix", db.prefix, "err", err)
		}
	}
}

// compactOnce is one interval of the compactor: it returns the compaction
// key's version and the revision to compact at next time.
func (db *DB) compactOnce(version, last int64) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(db.ctx, db.readTimeout)
	defer cancel()
	k := db.prefix + compactKey
	resp, err := db.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(k), "=", version)).
		Then(clientv3.OpPut(k, strconv.FormatInt(last, 10))).
		Else(clientv3.OpGet(k)).Commit()
	if err != nil {
		return version, last, err
	}
	cur := resp.Header.Revision
	if !resp.Succeeded {
		// Another replica compacted in this interval.
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
			return kvs[0].Version, cur, nil
		}
		return 0, cur, nil
	}
	if last == 0 {
		return version + 1, cur, nil
	}
	return version + 1, cur, db.compact(ctx, last)
}

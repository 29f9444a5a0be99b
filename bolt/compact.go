package bolt

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"
)

const (
	// compactMaxInterval bounds how stale the history may get past its
	// retention: one pass per 30 s at most (a tenth of the default 5 min).
	compactMaxInterval = 30 * time.Second
	// compactMinInterval keeps a very short retention (as in tests) from
	// turning the timer into a busy loop.
	compactMinInterval = 10 * time.Millisecond
	// compactTxEvents caps the events deleted per transaction so a large
	// compaction never holds the file's writer lock (and so the committer)
	// for long.
	compactTxEvents = 1_000
)

// compactInterval is how often the compactor runs: a tenth of the
// retention, within [compactMinInterval, compactMaxInterval].
func compactInterval(retention time.Duration) time.Duration {
	return min(max(retention/10, compactMinInterval), compactMaxInterval)
}

// Compact implements Store: events at and below rev are dropped from the
// file and from memory and CompactedRevision becomes rev. Compacting at or
// below the current CompactedRevision does nothing; rev above the current
// revision is ErrFutureRevision.
func (db *DB) Compact(ctx context.Context, rev int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	if cur := db.rev.Load(); rev > cur {
		return fmt.Errorf("%w: compact at %d, current is %d", ErrFutureRevision, rev, cur)
	}
	if rev <= db.compacted.Load() {
		return nil
	}
	return db.compactTo(rev)
}

// compactTo deletes history up to rev from the file in bounded
// transactions, each of which already records rev as compacted (Open skips
// leftovers at or below it), then trims memory. Caller holds compactMu.
func (db *DB) compactTo(rev int64) error {
	start := time.Now()
	limit := u64key(rev)
	deleted := 0
	for {
		n := 0
		err := db.bdb.Update(func(tx *bbolt.Tx) error {
			h := tx.Bucket(bucketHistory)
			var keys [][]byte
			c := h.Cursor()
			for k, _ := c.First(); k != nil && len(keys) < compactTxEvents; k, _ = c.Next() {
				if string(k) > string(limit) {
					break
				}
				keys = append(keys, k)
			}
			for _, k := range keys {
				if err := h.Delete(k); err != nil {
					return err
				}
			}
			n = len(keys)
			return tx.Bucket(bucketMeta).Put(metaCompacted, limit)
		})
		if err != nil {
			return fmt.Errorf("bolt: compact at %d: %w", rev, err)
		}
		deleted += n
		if n < compactTxEvents {
			break
		}
	}
	db.fileCompacted = rev
	db.dropMapped()
	db.mu.Lock()
	// trimHistory may have dropped these events from memory already.
	if rev > db.compacted.Load() {
		i := sort.Search(len(db.hist), func(i int) bool { return db.hist[i].Revision > rev })
		for j := range i {
			db.histBytes -= eventCost(&db.hist[j].Event)
		}
		// A fresh slice: watchers may still be replaying from the old one.
		db.hist = slices.Clone(db.hist[i:])
		db.compacted.Store(rev)
	}
	db.mu.Unlock()
	db.log.Info("compact", "revision", rev, "events", deleted, "took", time.Since(start))
	return nil
}

// compactLoop drops events older than the retention, on a timer, and
// deletes from the file the events trimHistory dropped from memory as soon
// as it reports them.
func (db *DB) compactLoop() {
	interval := compactInterval(db.opts.HistoryRetention)
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-db.closing:
			return
		case <-t.C:
		case <-db.trimmed:
			t.Stop()
		}
		db.mu.RLock()
		trimmed := db.trimTo
		db.mu.RUnlock()
		rev := max(db.expiredRevision(time.Now()), trimmed)
		if err := db.compactFile(rev); err != nil && err != ErrClosed {
			db.log.Error("compact", "revision", rev, "err", err)
		}
		db.maybeDefrag()
		t.Reset(interval)
	}
}

// compactFile compacts at rev (at most the current revision) unless the
// file is compacted there already; unlike Compact it also catches the file
// up with a compaction trimHistory made in memory only.
func (db *DB) compactFile(rev int64) error {
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	if rev <= db.fileCompacted || rev <= 0 {
		return nil
	}
	return db.compactTo(rev)
}

// expiredRevision is the newest revision committed before now minus the
// retention, or 0 when no retained event has expired.
func (db *DB) expiredRevision(now time.Time) int64 {
	cutoff := now.Add(-db.opts.HistoryRetention).UnixNano()
	db.mu.RLock()
	defer db.mu.RUnlock()
	i := sort.Search(len(db.hist), func(i int) bool { return db.hist[i].at >= cutoff })
	if i == 0 {
		return 0
	}
	return db.hist[i-1].Revision
}

// dropMapped drops the file's mapped pages from the resident set, as the
// committer does once a second (releaseMapped): deleting events makes
// bbolt read and rewrite the records beside them, which with large values
// is megabytes of mapped pages, and a compaction after a burst may be the
// last write for a long time. The read transaction keeps the map in place.
func (db *DB) dropMapped() {
	err := db.bdb.View(func(tx *bbolt.Tx) error {
		db.dropResident(tx)
		return nil
	})
	if err != nil {
		db.log.Debug("releasing mapped pages", "err", err)
	}
}

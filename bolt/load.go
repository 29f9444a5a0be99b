package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// histEvent is an Event with its commit time (unix nanoseconds), which the
// compactor compares against the retention, and whether it continues the
// transaction of the event before it, which lists at past revisions use to
// read whole transactions only.
type histEvent struct {
	Event
	at     int64
	joined bool
}

// load creates the buckets of a new file, then reads the meta values, the
// history and the current state into memory. Bytes read from the file are
// copied (the mapping is only valid inside the transaction); a state value
// equal to its key's newest history event shares that event's bytes.
func (db *DB) load() error {
	upgrade := false
	err := db.bdb.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketState, bucketHistory} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := db.checkTag(meta); err != nil {
			return err
		}
		if meta.Get(metaFormat) == nil {
			return meta.Put(metaFormat, u64key(formatVersion))
		}
		form, err := readForm(meta)
		if err != nil {
			return err
		}
		if form.format != formatVersion {
			upgrade = true
			return startUpgrade(meta) // upgrade.go
		}
		upgrade = form.mark != nil
		return nil
	})
	if err == nil && upgrade {
		err = db.upgradeRecords()
	}
	if err != nil {
		return fmt.Errorf("bolt: initialize %s: %w", db.path, err)
	}
	err = db.bdb.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		rev, err := readMeta(meta, metaRevision)
		if err != nil {
			return err
		}
		compacted, err := readMeta(meta, metaCompacted)
		if err != nil {
			return err
		}
		newest, cut, err := db.loadHistory(tx.Bucket(bucketHistory), compacted, rev)
		if err != nil {
			return err
		}
		db.fileCompacted = compacted
		compacted = max(compacted, cut)
		for i := range db.hist {
			db.histBytes += eventCost(&db.hist[i].Event)
		}
		if db.trimHistory() {
			compacted = db.trimTo
			db.trimmed <- struct{}{} // the compactor deletes them from the file
			db.log.Info("history trimmed to its byte bound", "compacted", compacted, "events", len(db.hist), "bytes", db.histBytes)
		}
		err = db.loadState(tx.Bucket(bucketState), newest, rev)
		db.staleRevs = nil
		if err != nil {
			return err
		}
		db.rev.Store(rev)
		db.compacted.Store(compacted)
		// Everything is in memory now; the pages the load read need not
		// stay resident. The open read transaction keeps the map in place.
		db.lastRelease = time.Now()
		if err := dropPages(db.bdb.Info().Data, uintptr(tx.Size())); err != nil {
			db.log.Debug("releasing mapped pages", "err", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bolt: load %s: %w", db.path, err)
	}
	return nil
}

// checkTag compares Options.Tag with the file's: a file that has never
// held an object records it, one recorded with another is refused, and
// one with objects but no tag is left for the caller (Untagged).
func (db *DB) checkTag(meta *bbolt.Bucket) error {
	want := db.opts.Tag
	if want == "" {
		return nil
	}
	switch have := meta.Get(metaTag); {
	case have != nil && string(have) != want:
		return &TagError{Recorded: string(have), Wanted: want}
	case have != nil:
		return nil
	}
	if rev, err := readMeta(meta, metaRevision); err != nil || rev > 0 {
		db.untagged = err == nil
		return err
	}
	return meta.Put(metaTag, []byte(want))
}

func readMeta(b *bbolt.Bucket, key []byte) (int64, error) {
	v := b.Get(key)
	if v == nil {
		return 0, nil
	}
	return readU64(v)
}

// loadHistory reads the events above compacted (those at or below it are
// left over from an interrupted compaction and are skipped). It returns, per
// key, the state written by the key's newest Put event, for sharing. An
// event whose value cannot be read back (see fromStorage) ends the replayable
// history: it and every event before it are dropped from memory and the
// compacted revision in memory moves up to it, so no watch or past list ever
// serves a value that could not be read; a watch from before it is told to
// re-list.
func (db *DB) loadHistory(b *bbolt.Bucket, compacted, rev int64) (map[string]*KV, int64, error) {
	newest := make(map[string]*KV)
	db.staleRevs = make(map[string]int64)
	cut := int64(0)
	c := b.Cursor()
	order := keyOrder{what: "history"}
	for k, v := c.Seek(u64key(compacted + 1)); k != nil; k, v = c.Next() {
		r, err := readU64(k)
		if err == nil {
			err = order.next(k) // damage.go
		}
		if err != nil {
			return nil, 0, err
		}
		if r > rev {
			return nil, 0, fmt.Errorf("%w: event %d above revision counter %d", ErrCorrupt, r, rev)
		}
		h, err := decodeEvent(r, v)
		if errors.Is(err, ErrChecksum) {
			cut = db.damagedEvent(r, err) // damage.go
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		ev := &h.Event
		if !db.readEvent(ev, newest) {
			cut = r
			delete(newest, ev.KV.Key)
			continue
		}
		if ev.Type == Put {
			kv := ev.KV
			newest[kv.Key] = &kv
		} else {
			delete(newest, ev.KV.Key)
		}
		db.hist = append(db.hist, h)
	}
	if cut > 0 {
		i := sort.Search(len(db.hist), func(i int) bool { return db.hist[i].Revision > cut })
		db.hist = slices.Clone(db.hist[i:])
		db.log.Warn("history cut at an unreadable value", "revision", cut)
	}
	return newest, cut, nil
}

// readEvent replaces the values of ev, which alias the file, by copies read
// back through the transformer; the previous state shares the key's newest
// value when it is that. It reports false when a value cannot be read.
func (db *DB) readEvent(ev *Event, newest map[string]*KV) bool {
	if db.opts.Transformer == nil && db.opts.Verify == nil {
		ev.KV.Value = bytes.Clone(ev.KV.Value)
		if ev.Prev != nil {
			if p := newest[ev.KV.Key]; p != nil && p.ModRevision == ev.Prev.ModRevision {
				ev.Prev = p
			} else {
				ev.Prev.Value = bytes.Clone(ev.Prev.Value)
			}
		}
		return true
	}
	v, stale, cerr := db.fromStorage(ev.KV.Key, ev.KV.ModRevision, ev.KV.Value)
	if cerr != nil {
		return false
	}
	ev.KV.Value = v
	if stale {
		db.staleRevs[ev.KV.Key] = ev.KV.ModRevision
	}
	if ev.Prev != nil {
		if p := newest[ev.KV.Key]; p != nil && p.ModRevision == ev.Prev.ModRevision {
			ev.Prev = p
		} else if ev.Prev.Value, _, cerr = db.fromStorage(ev.KV.Key, ev.Prev.ModRevision, ev.Prev.Value); cerr != nil {
			return false
		}
	}
	return true
}

// loadState fills the index in key order (the bucket's order). A state
// equal to its key's newest event shares that event's bytes (with a
// transformer the event's revision decides, as the check of the file
// guarantees the two agree). A value that cannot be read back is kept as
// stored and its key marked corrupt.
func (db *DB) loadState(b *bbolt.Bucket, newest map[string]*KV, rev int64) error {
	plain := db.opts.Transformer == nil && db.opts.Verify == nil
	order := keyOrder{what: "state"}
	return b.ForEach(func(k, v []byte) error {
		if err := order.next(k); err != nil { // damage.go
			return err
		}
		kv, err := decodeState(string(k), v)
		if errors.Is(err, ErrChecksum) {
			db.idx.appendSorted(db.damagedState(string(k), v, rev, err, newest[string(k)])) // damage.go
			return nil
		}
		if err != nil {
			return err
		}
		if kv.ModRevision > rev || kv.CreateRevision > kv.ModRevision {
			return fmt.Errorf("%w: state %q revisions %d/%d, counter %d",
				ErrCorrupt, kv.Key, kv.CreateRevision, kv.ModRevision, rev)
		}
		p := newest[kv.Key]
		stale := false
		switch {
		case p != nil && p.ModRevision == kv.ModRevision && (!plain || bytes.Equal(p.Value, kv.Value)):
			kv.Value = p.Value
			stale = db.staleRevs[kv.Key] == kv.ModRevision
		case plain:
			kv.Value = bytes.Clone(kv.Value)
		default:
			val, st, cerr := db.fromStorage(kv.Key, kv.ModRevision, kv.Value)
			stale = st
			if cerr != nil {
				if db.corrupt == nil {
					db.corrupt = make(map[string]*CorruptError)
				}
				db.corrupt[kv.Key] = cerr
				db.log.Warn("corrupt value", "key", kv.Key, "revision", kv.ModRevision, "err", cerr.Err)
				val = bytes.Clone(kv.Value)
			}
			kv.Value = val
		}
		if stale {
			if db.stale == nil {
				db.stale = make(map[string]struct{})
			}
			db.stale[kv.Key] = struct{}{}
		}
		db.idx.appendSorted(kv)
		return nil
	})
}

package bolt

import (
	"bytes"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// Upgrading a version 1 or 2 file to version 3 (record checksums).
//
// Open rewrites every state and event record with its checksum, in place,
// in transactions of at most upgradeTxBytes of records, before it loads
// the file. The first transaction sets the layout version to 3 and records
// the progress under metaUpgrade, and each later one moves the progress
// with the records it rewrote, so a crash midway leaves a file that older
// code refuses and that the next Open finishes upgrading. The progress is
// a phase byte ('s' for the state bucket, then 'h' for the history) and
// the last key rewritten in it (none at the start of a phase).
//
// Rewriting in place rather than reading both forms keeps one form on
// disk: a record never depends on a marker that a flipped bit could turn
// into "no checksum here".

// upgradeTxBytes bounds the records one upgrade transaction rewrites:
// the memory it holds and the pages one commit writes.
const upgradeTxBytes = 8 << 20

// upgradeLogEvery is how often a long upgrade logs its progress.
const upgradeLogEvery = 2 * time.Second

const (
	upgradeState   = 's'
	upgradeHistory = 'h'
)

// startUpgrade marks the file, in the transaction that read its layout
// version from (1 or 2), as being upgraded to formatVersion.
func startUpgrade(meta *bbolt.Bucket) error {
	tx := meta.Tx()
	for _, name := range [][]byte{bucketState, bucketHistory} {
		if err := notSealed(tx.Bucket(name).Cursor().First()); err != nil {
			return err // before anything changes
		}
	}
	if err := meta.Put(metaUpgrade, []byte{upgradeState}); err != nil {
		return err
	}
	return meta.Put(metaFormat, u64key(formatVersion))
}

// notSealed refuses a record of an older layout that verifies as sealed:
// a record without a checksum matches one by chance once in 2^32, so this
// is a version 3 file whose layout version was damaged, and sealing it
// again would corrupt every record.
func notSealed(k, v []byte) error {
	if k == nil {
		return nil
	}
	if _, err := openRecord(k, v); err == nil {
		return fmt.Errorf("%w: an older layout version, but record %q carries a checksum: the meta bucket is damaged", ErrCorrupt, k)
	}
	return nil
}

// upgradeRecords finishes an upgrade started by startUpgrade.
func (db *DB) upgradeRecords() error {
	start, lastLog := time.Now(), time.Now()
	var total, done int64
	_ = db.bdb.View(func(tx *bbolt.Tx) error {
		total = int64(tx.Bucket(bucketState).Stats().KeyN + tx.Bucket(bucketHistory).Stats().KeyN)
		return nil
	})
	db.log.Info("upgrading the file layout", "path", db.path, "to", formatVersion, "records", total)
	for finished := false; !finished; {
		err := db.bdb.Update(func(tx *bbolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			mark := meta.Get(metaUpgrade)
			if len(mark) == 0 {
				finished = true
				return meta.Delete(metaUpgrade)
			}
			phase, after := mark[0], mark[1:]
			var b *bbolt.Bucket
			switch phase {
			case upgradeState:
				b = tx.Bucket(bucketState)
			case upgradeHistory:
				b = tx.Bucket(bucketHistory)
			default:
				return fmt.Errorf("%w: upgrade progress %q", ErrCorrupt, mark)
			}
			c := b.Cursor()
			k, v := c.First()
			if len(after) > 0 {
				if k, v = c.Seek(after); bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			// Collect first: a put moves the cursor's pages.
			var recs [][2][]byte
			size := 0
			for ; k != nil && size < upgradeTxBytes; k, v = c.Next() {
				if len(after) > 0 && bytes.Compare(k, after) <= 0 {
					return fmt.Errorf("%w: upgrade: keys out of order at %q: a damaged page", ErrCorrupt, k)
				}
				if err := notSealed(k, v); err != nil {
					return err
				}
				rec := sealRecord(append(make([]byte, 0, len(v)+checksumSize), v...), 0, k)
				recs = append(recs, [2][]byte{bytes.Clone(k), rec})
				size += len(k) + len(rec)
			}
			for _, r := range recs {
				if err := b.Put(r[0], r[1]); err != nil {
					return err
				}
			}
			done += int64(len(recs))
			switch {
			case k != nil:
				mark = append([]byte{phase}, recs[len(recs)-1][0]...)
			case phase == upgradeState:
				mark = []byte{upgradeHistory}
			default:
				finished = true
				return meta.Delete(metaUpgrade)
			}
			return meta.Put(metaUpgrade, mark)
		})
		if err != nil {
			return fmt.Errorf("upgrading the layout: %w", err)
		}
		if time.Since(lastLog) >= upgradeLogEvery {
			lastLog = time.Now()
			db.log.Info("upgrading the file layout", "path", db.path, "records", done, "of", total)
		}
	}
	db.log.Info("upgraded the file layout", "path", db.path, "to", formatVersion, "records", done, "took", time.Since(start))
	return nil
}

// layoutForm says which records of a file carry a checksum: all of a
// version 3 file, none of an older one, and those before the progress
// mark of a file whose upgrade was interrupted.
type layoutForm struct {
	format int64
	mark   []byte // nil unless an upgrade is unfinished
}

// readForm reads the layout of the file from its meta bucket. A file
// without a version is new, hence current.
func readForm(meta *bbolt.Bucket) (layoutForm, error) {
	f := layoutForm{format: formatVersion}
	if v := meta.Get(metaFormat); v != nil {
		var err error
		if f.format, err = readU64(v); err != nil {
			return f, err
		}
	}
	switch f.format {
	case formatVersion:
		if m := meta.Get(metaUpgrade); m != nil {
			f.mark = bytes.Clone(m)
		}
	case formatVersionV1, formatVersionV2:
	default:
		return f, fmt.Errorf("%w: layout version %d, want %d", ErrCorrupt, f.format, formatVersion)
	}
	return f, nil
}

// sealed reports whether the record under key in the bucket of phase
// (upgradeState, upgradeHistory) carries a checksum.
func (f layoutForm) sealed(phase byte, key []byte) bool {
	switch {
	case f.format != formatVersion:
		return false
	case len(f.mark) == 0:
		return true
	case phase != f.mark[0]:
		return phase == upgradeState // the state is upgraded first
	}
	return len(f.mark) > 1 && bytes.Compare(key, f.mark[1:]) <= 0
}

// decodeState is decodeState for a record of this form.
func (f layoutForm) decodeState(key string, rec []byte) (KV, error) {
	if f.sealed(upgradeState, strBytes(key)) {
		return decodeState(key, rec)
	}
	return parseState(key, rec)
}

// decodeEvent is decodeEvent for a record of this form.
func (f layoutForm) decodeEvent(rev int64, rec []byte) (histEvent, error) {
	if f.sealed(upgradeHistory, u64key(rev)) {
		return decodeEvent(rev, rec)
	}
	return parseEvent(rev, rec)
}

package bolt

import (
	"bytes"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// checkMaxErrors bounds the problems CheckFile reports; past a few, more
// detail does not help a repair.
const checkMaxErrors = 20

// checkProgressEvery is how many records Check reads between two calls
// of CheckOptions.Progress.
const checkProgressEvery = 50_000

// CheckOptions tune Check.
type CheckOptions struct {
	// Transformer reads values back as Open would (see CheckFileWith).
	Transformer Transformer
	// MaxProblems caps the problems reported (a last one counts the rest);
	// 0 means checkMaxErrors.
	MaxProblems int
	// Progress, when set, is called every checkProgressEvery records with
	// the records read and the records to read.
	Progress func(done, total int64)
	// RevisionsOnly compares records by key and revisions, not values: for
	// a file written with a transformer that is not at hand, whose equal
	// values are stored as different bytes. Checksums still cover every
	// record's bytes.
	RevisionsOnly bool
}

// CheckFile verifies a closed engine file, opened read-only: the page
// structure (pages.go), bbolt's own page consistency check, every
// record's checksum, then the engine's invariants: every history
// revision is above the compacted revision and at most the counter, the
// retained history is contiguous, each event's previous state matches the
// key's earlier event, the events of a transaction share their commit time
// and touch distinct keys, and the state bucket equals what the newest
// event of each key says. It returns nil or the problems found, joined,
// each wrapping ErrCorrupt; ErrLocked when a process holds the file. It
// never panics, whatever the file holds.
func CheckFile(path string) error { return Check(path, CheckOptions{}) }

// CheckFileWith is CheckFile for a file written with the transformer t:
// values are compared as t reads them back, and one it cannot read is a
// problem. CheckFile on such a file compares the stored bytes, which a
// transformer with random nonces makes differ for equal values.
func CheckFileWith(path string, t Transformer) error {
	return Check(path, CheckOptions{Transformer: t})
}

// Check is CheckFile with options.
func Check(path string, o CheckOptions) error {
	if _, err := verifyFile(path, walkKeys); err != nil {
		return fmt.Errorf("bolt: check %s: %w", path, err)
	}
	return guard("checking "+path, func() error { return check(path, o) })
}

func check(path string, o CheckOptions) error {
	t := o.Transformer
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: fileLockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("bolt: check %s: %w: %s", path, ErrLocked, path)
	}
	if err != nil {
		return fmt.Errorf("bolt: check %s: %w", path, err)
	}
	defer bdb.Close()
	limit := o.MaxProblems
	if limit <= 0 {
		limit = checkMaxErrors
	}
	var (
		errs []error
		more int
	)
	report := func(format string, args ...any) {
		if len(errs) >= limit {
			more++
			return
		}
		if len(args) == 1 && format == "%v" {
			if e, ok := args[0].(error); ok && errors.Is(e, ErrCorrupt) {
				errs = append(errs, e)
				return
			}
		}
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...))
	}
	same := sameKV
	if o.RevisionsOnly {
		same = sameRevisions
	}
	var done, total int64
	progress := func() {
		if done++; o.Progress != nil && done%checkProgressEvery == 0 {
			o.Progress(done, total)
		}
	}
	err = bdb.View(func(tx *bbolt.Tx) error {
		if err := checkBuckets(tx); err != nil {
			report("%v", err)
		}
		for e := range tx.Check() {
			report("bbolt: %v", e)
		}
		meta, state, hist := tx.Bucket(bucketMeta), tx.Bucket(bucketState), tx.Bucket(bucketHistory)
		if meta == nil || state == nil || hist == nil {
			return nil
		}
		if o.Progress != nil {
			total = int64(state.Stats().KeyN + hist.Stats().KeyN)
		}
		form, err := readForm(meta)
		if err != nil {
			report("meta: %v", err)
			return nil
		}
		rev, err1 := readMeta(meta, metaRevision)
		comp, err2 := readMeta(meta, metaCompacted)
		if err := errors.Join(err1, err2); err != nil {
			report("meta: %v", err)
			return nil
		}
		if comp > rev {
			report("compacted %d above revision %d", comp, rev)
		}
		newest := make(map[string]*Event)
		want := comp + 1
		var (
			lastAt  int64               // commit time of the previous event
			txnKeys = map[string]bool{} // keys of the transaction being read
		)
		err = hist.ForEach(func(k, v []byte) error {
			progress()
			r, err := readU64(k)
			if err != nil {
				report("history key: %v", err)
				return nil
			}
			if r <= comp {
				return nil // left over from an interrupted compaction
			}
			if r > rev {
				report("event %d above revision %d", r, rev)
			}
			if r != want {
				report("history gap: event %d, expected %d", r, want)
			}
			want = r + 1
			h, err := form.decodeEvent(r, v)
			if err != nil {
				report("%v", err)
				return nil
			}
			ev := h.Event
			if t != nil && !readBack(t, &ev, report) {
				return nil
			}
			if !h.joined {
				clear(txnKeys)
			} else if r > comp+1 {
				if h.at != lastAt {
					report("event %d joins the transaction of %d but was committed at another time", r, r-1)
				}
				if txnKeys[ev.KV.Key] {
					report("event %d writes %s twice in one transaction", r, ev.KV.Key)
				}
			}
			txnKeys[ev.KV.Key] = true
			lastAt = h.at
			before := newest[ev.KV.Key]
			switch {
			case ev.Prev == nil && before != nil && before.Type == Put:
				report("event %d creates %s, which exists since %d", r, ev.KV.Key, before.Revision)
			case ev.Prev != nil && before != nil && before.Type == Delete:
				report("event %d has a previous state of deleted %s", r, ev.KV.Key)
			case ev.Prev != nil && before != nil && !same(&before.KV, ev.Prev):
				report("event %d previous state differs from event %d", r, before.Revision)
			}
			e := ev
			e.KV.Value = bytes.Clone(ev.KV.Value)
			newest[ev.KV.Key] = &e
			return nil
		})
		if err != nil {
			return err
		}
		if rev > comp && want != rev+1 {
			report("history ends at %d, revision is %d", want-1, rev)
		}
		err = state.ForEach(func(k, v []byte) error {
			progress()
			kv, err := form.decodeState(string(k), v)
			if err != nil {
				report("%v", err)
				return nil
			}
			if t != nil {
				if kv.Value, _, err = t.FromStorage(kv.Key, kv.Value); err != nil {
					report("state %s: %v", kv.Key, err)
					return nil
				}
			}
			if kv.ModRevision > rev || kv.CreateRevision > kv.ModRevision || kv.CreateRevision <= 0 {
				report("state %s revisions %d/%d, counter %d", kv.Key, kv.CreateRevision, kv.ModRevision, rev)
			}
			ev := newest[kv.Key]
			delete(newest, kv.Key)
			switch {
			case ev == nil && kv.ModRevision > comp:
				report("state %s at %d has no event", kv.Key, kv.ModRevision)
			case ev != nil && ev.Type == Delete:
				report("state %s exists, deleted at %d", kv.Key, ev.Revision)
			case ev != nil && !same(&ev.KV, &kv):
				report("state %s differs from its event %d", kv.Key, ev.Revision)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for key, ev := range newest {
			if ev.Type == Put {
				report("state lacks %s, written at %d", key, ev.Revision)
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("%w: %d more problems", ErrCorrupt, more))
	}
	if o.Progress != nil {
		o.Progress(done, total)
	}
	return errors.Join(errs...)
}

func sameKV(a, b *KV) bool {
	return a.Key == b.Key && a.CreateRevision == b.CreateRevision &&
		a.ModRevision == b.ModRevision && bytes.Equal(a.Value, b.Value)
}

func sameRevisions(a, b *KV) bool {
	return a.Key == b.Key && a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

// readBack replaces ev's values by what t reads back, reporting a failure.
func readBack(t Transformer, ev *Event, report func(string, ...any)) bool {
	v, _, err := t.FromStorage(ev.KV.Key, ev.KV.Value)
	if err != nil {
		report("event %d: %v", ev.Revision, err)
		return false
	}
	ev.KV.Value = v
	if ev.Prev != nil {
		prev := *ev.Prev
		if prev.Value, _, err = t.FromStorage(prev.Key, prev.Value); err != nil {
			report("event %d previous state: %v", ev.Revision, err)
			return false
		}
		ev.Prev = &prev
	}
	return true
}

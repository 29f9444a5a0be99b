package bolt

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// checkKey accepts "/a/b" style keys: leading slash, no trailing slash.
func checkKey(key string) error {
	if len(key) < 2 || key[0] != '/' || key[len(key)-1] == '/' {
		return fmt.Errorf("%w: key %q", ErrInvalid, key)
	}
	return nil
}

// checkPrefix accepts "/" and "/a/…/" prefixes.
func checkPrefix(prefix string) error {
	if len(prefix) == 0 || prefix[0] != '/' || prefix[len(prefix)-1] != '/' {
		return fmt.Errorf("%w: prefix %q must start and end with /", ErrInvalid, prefix)
	}
	return nil
}

// prefixEnd is the smallest key greater than every key under prefix, which
// ends in '/'.
func prefixEnd(prefix string) string {
	return prefix[:len(prefix)-1] + string(rune('/'+1))
}

// Get implements Store. The returned Value is shared with the store.
func (db *DB) Get(key string) (KV, error) {
	if db.closed.Load() {
		return KV{}, ErrClosed
	}
	db.mu.RLock()
	kv, ok := db.idx.get(key)
	var bad *CorruptError
	if db.corrupt != nil {
		bad = db.corrupt[key]
	}
	db.mu.RUnlock()
	if !ok {
		return KV{}, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if bad != nil {
		return KV{}, bad
	}
	return kv, nil
}

// Count implements Store. It is 0 for a malformed prefix or a closed DB.
func (db *DB) Count(prefix string) int64 {
	if checkPrefix(prefix) != nil || db.closed.Load() {
		return 0
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	return int64(db.idx.countRange(prefix, prefixEnd(prefix)))
}

// List implements Store. A page at the current revision walks the index; a
// page at a past revision walks the index with the keys changed since that
// revision replaced by their state at it (taken from the history). Values
// are shared with the store.
func (db *DB) List(prefix string, opts ListOptions) (ListResult, error) {
	if err := checkPrefix(prefix); err != nil {
		return ListResult{}, err
	}
	if opts.Revision < 0 || opts.Limit < 0 {
		return ListResult{}, fmt.Errorf("%w: revision %d, limit %d", ErrInvalid, opts.Revision, opts.Limit)
	}
	if db.closed.Load() {
		return ListResult{}, ErrClosed
	}
	from, end := prefix, prefixEnd(prefix)
	if opts.StartKey > from {
		from = opts.StartKey
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.corrupt != nil {
		if opts.ReportCorrupt {
			if bad := db.corruptIn(from, end); len(bad) > 0 {
				return ListResult{}, &CorruptListError{Keys: bad}
			}
		} else {
			keep, corrupt := opts.Filter, db.corrupt // read under mu, held for the whole list
			opts.Filter = func(kv *KV) bool {
				if _, bad := corrupt[kv.Key]; bad {
					return false
				}
				return keep == nil || keep(kv)
			}
		}
	}
	cur, comp := db.rev.Load(), db.compacted.Load()
	rev := opts.Revision
	switch {
	case rev == 0:
		rev = cur
	case rev > cur:
		return ListResult{}, fmt.Errorf("%w: %d, current is %d", ErrFutureRevision, rev, cur)
	case rev < comp:
		return ListResult{}, fmt.Errorf("%w: list at %d, compacted at %d", ErrCompacted, rev, comp)
	case rev < cur:
		rev = db.txnEnd(rev)
	}
	p := pager{limit: opts.Limit, filter: opts.Filter}
	if from >= end {
		return ListResult{Revision: rev}, nil
	}
	if rev == cur {
		if opts.Filter == nil {
			n := db.idx.countRange(from, end)
			if p.limit > 0 {
				n = min(n, p.limit)
			}
			p.items, p.more = db.idx.appendRange(make([]KV, 0, n), from, end, p.limit)
			if len(p.items) > 0 {
				p.lastK = p.items[len(p.items)-1].Key
			}
		} else {
			db.idx.ascend(from, func(kv *KV) bool { return kv.Key < end && p.visit(kv) })
		}
		res := ListResult{Items: p.items, Revision: rev, More: p.more}
		if p.more {
			res.Remaining = int64(db.idx.countRange(afterKey(p.last()), end))
		}
		return res, nil
	}
	return db.listPast(from, end, rev, &p), nil
}

// txnEnd is rev, or the last revision of the transaction rev is inside of:
// the state between two ops of a transaction was never visible, so no list
// may show it. rev is within the history and below the current revision.
func (db *DB) txnEnd(rev int64) int64 {
	i := sort.Search(len(db.hist), func(i int) bool { return db.hist[i].Revision > rev })
	for ; i < len(db.hist) && db.hist[i].joined; i++ {
		rev = db.hist[i].Revision
	}
	return rev
}

// listPast lists [from, end) as of rev, which is within the history.
func (db *DB) listPast(from, end string, rev int64, p *pager) ListResult {
	// then holds, for each key in range written after rev, its state at rev
	// (nil: absent): the Prev of its oldest event after rev.
	i := sort.Search(len(db.hist), func(i int) bool { return db.hist[i].Revision > rev })
	then := make(map[string]*KV)
	for _, e := range db.hist[i:] {
		k := e.KV.Key
		if k < from || k >= end {
			continue
		}
		if _, seen := then[k]; !seen {
			then[k] = e.Prev
		}
	}
	changed := make([]KV, 0, len(then)) // key order; Key set, ModRevision 0 when absent at rev
	for k, old := range then {
		if old != nil {
			changed = append(changed, *old)
		} else {
			changed = append(changed, KV{Key: k})
		}
	}
	slices.SortFunc(changed, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	if p.filter == nil {
		n := db.idx.countRange(from, end) + len(changed)
		if p.limit > 0 {
			n = min(n, p.limit)
		}
		p.items = make([]KV, 0, n)
	}

	// Merge the index with changed; a changed key's state at rev wins.
	ci := 0
	visitChanged := func(c *KV) bool { return c.ModRevision == 0 || p.visit(c) }
	stopped := false
	db.idx.ascend(from, func(kv *KV) bool {
		if kv.Key >= end {
			return false
		}
		for ; ci < len(changed) && changed[ci].Key <= kv.Key; ci++ {
			if !visitChanged(&changed[ci]) {
				stopped = true
				return false
			}
			if changed[ci].Key == kv.Key {
				ci++
				return true
			}
		}
		if !p.visit(kv) {
			stopped = true
			return false
		}
		return true
	})
	for ; !stopped && ci < len(changed); ci++ {
		if !visitChanged(&changed[ci]) {
			break
		}
	}
	res := ListResult{Items: p.items, Revision: rev, More: p.more}
	if p.more {
		after := afterKey(p.last())
		n := db.idx.countRange(after, end)
		for _, c := range changed {
			if c.Key < after {
				continue
			}
			if c.ModRevision != 0 {
				n++
			}
			if _, now := db.idx.get(c.Key); now {
				n--
			}
		}
		res.Remaining = int64(n)
	}
	return res
}

// afterKey is the smallest key greater than key.
func afterKey(key string) string { return key + "\x00" }

// pager collects one page of a list.
type pager struct {
	limit  int
	filter func(*KV) bool
	items  []KV
	more   bool
	lastK  string
}

// visit offers the next key in order; false means the page is full and a
// further key exists (more is set).
func (p *pager) visit(kv *KV) bool {
	if p.limit > 0 && len(p.items) == p.limit {
		p.more = true
		return false
	}
	if p.filter != nil {
		c := *kv // the filter gets a copy so it cannot alter the store
		if !p.filter(&c) {
			return true
		}
	}
	p.items = append(p.items, *kv)
	p.lastK = kv.Key
	return true
}

// last is the key of the last item taken.
func (p *pager) last() string { return p.lastK }

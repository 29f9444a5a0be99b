package bolt

// Index is the ordered in-memory state bolt keeps (a map for point reads,
// sorted chunks of KVs held by value for range scans), for another engine
// that keeps the same state in memory (etcd's mirror). The zero value is
// not usable: NewIndex. It is not safe for concurrent mutation: its owner
// guards it, as bolt's DB does with its lock. Value bytes are never
// modified: a Put replaces the KV.
type Index struct{ ix index }

// NewIndex returns an empty Index.
func NewIndex() *Index { return &Index{ix: index{byKey: make(map[string]KV)}} }

// Get returns the current state of key.
func (x *Index) Get(key string) (KV, bool) { return x.ix.get(key) }

// Len is the number of keys.
func (x *Index) Len() int { return x.ix.len() }

// Put inserts or replaces kv.
func (x *Index) Put(kv KV) { x.ix.put(kv) }

// Remove deletes key if present.
func (x *Index) Remove(key string) { x.ix.remove(key) }

// AppendSorted adds kv, which must sort after every present key, to the
// ordered chunks only (loading in key order); MapKeys must follow before
// the Index is read.
func (x *Index) AppendSorted(kv KV) { x.ix.appendSorted(kv) }

// MapKeys makes point reads see every key AppendSorted added.
func (x *Index) MapKeys() { x.ix.mapKeys() }

// CountRange is the number of keys k with from <= k < to.
func (x *Index) CountRange(from, to string) int { return x.ix.countRange(from, to) }

// Ascend calls fn for every key >= from in order until fn returns false.
// fn must not retain the pointer.
func (x *Index) Ascend(from string, fn func(kv *KV) bool) { x.ix.ascend(from, fn) }

// AppendRange appends up to limit (0: all) KVs with from <= key < to to
// dst and reports whether a further key in the range exists.
func (x *Index) AppendRange(dst []KV, from, to string, limit int) ([]KV, bool) {
	return x.ix.appendRange(dst, from, to, limit)
}

package bolt

import "sort"

// chunkMax bounds the length of one chunk of the ordered index. An insert
// moves at most this many entries (56 bytes each) and counting a range sums
// one length per chunk it spans, so 256 keeps both cheap from a handful of
// keys up to millions.
const chunkMax = 256

// index is the in-memory current state: a map for point reads and a list of
// sorted chunks for ordered range scans. Entries are held by value so a
// list copies contiguous memory. It is not safe for concurrent mutation; the
// DB guards it with its read/write lock. Value bytes are never modified: a
// write replaces the entry.
type index struct {
	byKey  map[string]KV
	chunks [][]KV // each sorted and non-empty; chunk i's keys < chunk i+1's
}

func newIndex() *index {
	return &index{byKey: make(map[string]KV)}
}

// get returns the current state of key.
func (ix *index) get(key string) (KV, bool) {
	kv, ok := ix.byKey[key]
	return kv, ok
}

// len is the number of keys.
func (ix *index) len() int { return len(ix.byKey) }

// seek returns the position of the first key >= key. The position may be
// (len(chunks), 0) when every key is smaller.
func (ix *index) seek(key string) (ci, i int) {
	ci = sort.Search(len(ix.chunks), func(c int) bool {
		ch := ix.chunks[c]
		return ch[len(ch)-1].Key >= key
	})
	if ci == len(ix.chunks) {
		return ci, 0
	}
	ch := ix.chunks[ci]
	i = sort.Search(len(ch), func(j int) bool { return ch[j].Key >= key })
	return ci, i
}

// countRange is the number of keys k with from <= k < to. Only the chunks
// the range spans are counted, so a small range costs two searches however
// many keys come before it.
func (ix *index) countRange(from, to string) int {
	if from >= to {
		return 0
	}
	fc, fi := ix.seek(from)
	tc, ti := ix.seek(to)
	n := ti - fi
	for c := fc; c < tc; c++ {
		n += len(ix.chunks[c])
	}
	return n
}

// put inserts or replaces kv.
func (ix *index) put(kv KV) {
	_, exists := ix.byKey[kv.Key]
	ix.byKey[kv.Key] = kv
	if len(ix.chunks) == 0 {
		ix.chunks = append(ix.chunks, append(make([]KV, 0, chunkMax+1), kv))
		return
	}
	ci, i := ix.seek(kv.Key)
	if exists {
		ix.chunks[ci][i] = kv
		return
	}
	if ci == len(ix.chunks) { // larger than every key: append to the last chunk
		ci = len(ix.chunks) - 1
		i = len(ix.chunks[ci])
	}
	ch := append(ix.chunks[ci], KV{})
	copy(ch[i+1:], ch[i:])
	ch[i] = kv
	if len(ch) <= chunkMax {
		ix.chunks[ci] = ch
		return
	}
	half := len(ch) / 2
	right := make([]KV, len(ch)-half, chunkMax+1)
	copy(right, ch[half:])
	clear(ch[half:])
	ix.chunks = append(ix.chunks, nil)
	copy(ix.chunks[ci+2:], ix.chunks[ci+1:])
	ix.chunks[ci] = ch[:half]
	ix.chunks[ci+1] = right
}

// appendSorted adds kv, which must sort after every present key, to the
// ordered chunks only: it is the fast path for loading a file in key
// order, and mapKeys must follow before the index is read. Chunks are left
// partly empty so later inserts rarely split them.
func (ix *index) appendSorted(kv KV) {
	n := len(ix.chunks)
	if n == 0 || len(ix.chunks[n-1]) >= chunkMax*3/4 {
		ix.chunks = append(ix.chunks, make([]KV, 0, chunkMax+1))
		n++
	}
	ix.chunks[n-1] = append(ix.chunks[n-1], kv)
}

// mapKeys makes the point-read map hold every key of the chunks, sized
// once for them instead of growing entry by entry.
func (ix *index) mapKeys() {
	n := 0
	for _, ch := range ix.chunks {
		n += len(ch)
	}
	ix.byKey = make(map[string]KV, n)
	for _, ch := range ix.chunks {
		for _, kv := range ch {
			ix.byKey[kv.Key] = kv
		}
	}
}

// remove deletes key if present.
func (ix *index) remove(key string) {
	if _, ok := ix.byKey[key]; !ok {
		return
	}
	delete(ix.byKey, key)
	ci, i := ix.seek(key)
	ch := ix.chunks[ci]
	copy(ch[i:], ch[i+1:])
	ch[len(ch)-1] = KV{}
	ch = ch[:len(ch)-1]
	if len(ch) > 0 {
		ix.chunks[ci] = ch
		return
	}
	copy(ix.chunks[ci:], ix.chunks[ci+1:])
	ix.chunks[len(ix.chunks)-1] = nil
	ix.chunks = ix.chunks[:len(ix.chunks)-1]
}

// ascend calls fn for every key >= from in order until fn returns false.
// fn must not retain the pointer.
func (ix *index) ascend(from string, fn func(kv *KV) bool) {
	ci, i := ix.seek(from)
	for ; ci < len(ix.chunks); ci++ {
		ch := ix.chunks[ci]
		for ; i < len(ch); i++ {
			if !fn(&ch[i]) {
				return
			}
		}
		i = 0
	}
}

// appendRange appends up to limit (0: all) entries k with from <= k < to
// to dst and reports whether a further key in the range exists.
func (ix *index) appendRange(dst []KV, from, to string, limit int) ([]KV, bool) {
	ci, i := ix.seek(from)
	for ; ci < len(ix.chunks); ci++ {
		ch := ix.chunks[ci][i:]
		i = 0
		n := sort.Search(len(ch), func(j int) bool { return ch[j].Key >= to })
		if limit > 0 && n > limit-len(dst) {
			return append(dst, ch[:limit-len(dst)]...), true
		}
		dst = append(dst, ch[:n]...)
		if n < len(ch) {
			return dst, false
		}
	}
	return dst, false
}

package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	mathbits "math/bits"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"unsafe"

	bbolt "go.etcd.io/bbolt"
)

// The page structure of a bbolt file is checked here, with plain reads,
// before bbolt opens it. bbolt trusts its pages: opening a file for
// writing walks every page on a goroutine of its own, where a damaged
// page (an offset past the page, a child out of the file) panics beyond
// any recover, and a file shorter than its pages dies of SIGBUS when the
// map is read past its end. verifyPages refuses such a file with an
// error naming what is wrong instead. It reads what bbolt's walk reads:
// the meta pages, the freelist page if any, and every page reachable from
// the root with its element table and keys; values only where they are
// buckets.
//
// The layout facts (bbolt 1.x, file format version 2, host byte order):
//
//	page header   id u64, flags u16, count u16, overflow u32   (16 bytes)
//	meta          magic u32, version u32, pageSize u32, flags u32,
//	              root bucket {root u64, sequence u64}, freelist u64,
//	              pgid (high-water mark) u64, txid u64, checksum u64
//	              (FNV-64a of the fields before it), after the header
//	branch elem   pos u32, ksize u32, pgid u64    key at elem+pos
//	leaf elem     flags u32, pos u32, ksize u32, vsize u32
//	              key at elem+pos, value after it; flags 1 = a bucket,
//	              whose value is {root u64, sequence u64} and, when root
//	              is 0, an inline leaf page
//	freelist      count (0xFFFF: the count is the first u64), then ids
const (
	pageHeaderSize  = 16
	pageElemSize    = 16
	bucketHdrSize   = 16
	metaSize        = 64
	metaSumOffset   = 56
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	metaPageFlag    = 0x04
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01
	noFreelist      = ^uint64(0)
	minPageSize     = 1 << 10
	maxPageSize     = 1 << 24
	freelistOverrun = 0xFFFF
)

var ne = binary.NativeEndian

// boltMeta is one meta page's fields.
type boltMeta struct {
	pageSize           uint64
	root, freelist     uint64
	highWater, txid    uint64
	invalid            string // why the page is not a valid meta, or ""
	magicOK, versionOK bool
}

func readBoltMeta(data []byte, off uint64) boltMeta {
	if off+pageHeaderSize+metaSize > uint64(len(data)) {
		return boltMeta{invalid: "past the end of the file"}
	}
	m := data[off+pageHeaderSize : off+pageHeaderSize+metaSize]
	bm := boltMeta{
		pageSize:  uint64(ne.Uint32(m[8:])),
		root:      ne.Uint64(m[16:]),
		freelist:  ne.Uint64(m[32:]),
		highWater: ne.Uint64(m[40:]),
		txid:      ne.Uint64(m[48:]),
		magicOK:   ne.Uint32(m[0:]) == boltMagic,
		versionOK: ne.Uint32(m[4:]) == boltVersion,
	}
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	switch {
	case !bm.magicOK:
		bm.invalid = "not a bbolt meta page (magic)"
	case !bm.versionOK:
		bm.invalid = fmt.Sprintf("bbolt format version %d", ne.Uint32(m[4:]))
	case h.Sum64() != ne.Uint64(m[metaSumOffset:]):
		bm.invalid = "checksum mismatch"
	}
	return bm
}

// walkDepth says how much of a file verifyPagesData reads.
type walkDepth int

const (
	// walkMeta reads the meta pages, the size and the free-page list.
	walkMeta walkDepth = iota
	// walkPages reads as well every page reachable from the root: ids,
	// types, element tables, keys and values inside their page, branch
	// keys in order; each page once.
	walkPages
	// walkKeys checks as well the order of the keys on leaf pages.
	walkKeys
)

// Open reads a file as deep as bbolt is about to: walkMeta when the file
// holds a free-page list (freelist.go), since bbolt then reads no other
// page at open, and walkKeys when it does not, since bbolt then walks
// every page on its own goroutine. With a list, Open walks the pages
// (walkPages) through bbolt's own map, whose pages the load reads next
// anyway, and the load checks the order of what it reads (keyOrder): a
// second pass over every key of the file would cost a restart dearly.

// walked is what a walk of the pages found besides their soundness.
type walked struct {
	// pages says the walk read every page reachable from the root.
	pages bool
	// keys is the number of keys in each top-level bucket, counted on the
	// leaf pages (a hint for the load, which sizes its key map once).
	keys map[string]int
}

// verifyPagesData checks the page structure of a whole file's bytes, as
// deep as depth asks, or walkKeys when the file holds no free-page list.
// It returns nil or an error wrapping ErrCorrupt, and what it walked.
func verifyPagesData(data []byte, depth walkDepth) (wk walked, err error) {
	if len(data) == 0 {
		return walked{}, fmt.Errorf("%w: the file is empty (0 bytes)", ErrCorrupt)
	}
	meta, _, pageSize, err := newestMeta(data)
	if err != nil {
		return walked{}, err
	}
	size := uint64(len(data))
	hw := meta.highWater
	switch {
	case meta.pageSize != pageSize:
		return walked{}, fmt.Errorf("%w: meta pages disagree on the page size (%d, %d)", ErrCorrupt, pageSize, meta.pageSize)
	case hw < 3:
		return walked{}, fmt.Errorf("%w: meta page: high-water mark %d", ErrCorrupt, hw)
	case hw > size/pageSize:
		return walked{}, fmt.Errorf("%w: the file is truncated: it is %d bytes, its pages need %d pages of %d bytes", ErrCorrupt, size, hw, pageSize)
	case meta.root < 2 || meta.root >= hw:
		return walked{}, fmt.Errorf("%w: meta page: root page %d outside [2, %d)", ErrCorrupt, meta.root, hw)
	case meta.freelist != noFreelist && (meta.freelist < 2 || meta.freelist >= hw):
		return walked{}, fmt.Errorf("%w: meta page: freelist page %d outside [2, %d)", ErrCorrupt, meta.freelist, hw)
	}
	newWalker := func() *pageWalker {
		return &pageWalker{data: data, pageSize: pageSize, highWater: hw, seen: make([]uint64, (hw+63)/64)}
	}
	listed := meta.freelist != noFreelist
	if !listed {
		depth = walkKeys
	}
	if depth == walkMeta {
		if newWalker().freelist(meta.freelist) == nil {
			return walked{}, nil
		}
		// Whether the tree is sound decides what the damage costs.
		depth = walkKeys
	}
	w := newWalker()
	w.leafKeys = depth == walkKeys
	w.bucketKeys = make(map[string]int)
	// The tree first: a list that claims one of its pages is the damaged
	// part, not the tree.
	if err = w.tree(meta.root, nil, nil, 0); err == nil && listed {
		listErr := w.freelist(meta.freelist)
		if listErr == nil {
			listErr = w.freeUnreached()
		}
		if listErr != nil {
			err = &freelistError{err: listErr}
		}
	}
	return walked{pages: true, keys: w.bucketKeys}, err
}

// freelistError is damage confined to the free-page list of a file whose
// page tree is sound. The list only caches which pages the tree does not
// use, so it can be dropped and rebuilt from the tree (dropFreelist), as
// bbolt does after a crash; trusting it would hand pages still in use to
// later writes.
type freelistError struct{ err error }

func (e *freelistError) Error() string {
	return e.err.Error() + " (only the free-page list is damaged: the page tree is sound, and a start of platd rebuilds the list from it)"
}

func (e *freelistError) Unwrap() error { return e.err }

// newestMeta returns the meta page bbolt reads of a file whose first
// bytes are data, with its offset and the page size the file's first
// page says: the valid one of the two meta pages with the higher
// transaction id. The second page's place depends on the page size,
// which the first names, or, when the first is damaged, the second.
func newestMeta(data []byte) (meta boltMeta, at, pageSize uint64, err error) {
	m0 := readBoltMeta(data, 0)
	pageSize = m0.pageSize
	if m0.invalid != "" {
		// The second meta page says the page size, as bbolt finds it.
		pageSize = 0
		for ps := uint64(minPageSize); ps <= maxPageSize; ps <<= 1 {
			if m := readBoltMeta(data, ps); m.invalid == "" && m.pageSize == ps {
				pageSize = ps
				break
			}
		}
		if pageSize == 0 {
			return boltMeta{}, 0, 0, fmt.Errorf("%w: both meta pages are damaged (first: %s): this is not a readable bbolt file", ErrCorrupt, m0.invalid)
		}
	}
	if pageSize < minPageSize || pageSize > maxPageSize || pageSize&(pageSize-1) != 0 {
		return boltMeta{}, 0, 0, fmt.Errorf("%w: meta page: page size %d", ErrCorrupt, pageSize)
	}
	m1 := readBoltMeta(data, pageSize)
	switch {
	case m0.invalid != "" && m1.invalid != "":
		return boltMeta{}, 0, 0, fmt.Errorf("%w: both meta pages are damaged (%s; %s)", ErrCorrupt, m0.invalid, m1.invalid)
	case m0.invalid != "" || (m1.invalid == "" && m1.txid > m0.txid):
		return m1, pageSize, pageSize, nil
	}
	return m0, 0, pageSize, nil
}

// pageWalker walks the pages reachable from the root, each once.
type pageWalker struct {
	data      []byte
	pageSize  uint64
	highWater uint64
	seen      []uint64 // a bit per page
	// leafKeys says to check the order of the keys on leaf pages too.
	leafKeys bool
	// leaves counts the elements of the leaf pages walked.
	leaves int
	// free holds the ids the free-page list names.
	free []uint64
	// bucketKeys receives the keys of each top-level bucket walked by
	// bucketsAtOnce.
	bucketKeys map[string]int
	// splitRoot says to walk the children of the next branch page on two
	// goroutines (the root of a bucket bucketsAtOnce walks).
	splitRoot bool
	scratch   []pageElem // the elements of the leaf being read
}

func (w *pageWalker) errorf(id uint64, format string, args ...any) error {
	return fmt.Errorf("%w: page %d: %s", ErrCorrupt, id, fmt.Sprintf(format, args...))
}

// page returns the bytes of page id and its overflow pages, after
// checking its header, and marks them seen.
func (w *pageWalker) page(id uint64, flags uint16) ([]byte, error) {
	if id < 2 || id >= w.highWater {
		return nil, w.errorf(id, "outside the file's pages [2, %d)", w.highWater)
	}
	hdr := w.data[id*w.pageSize:]
	if got := ne.Uint64(hdr); got != id {
		return nil, w.errorf(id, "header names page %d", got)
	}
	f := ne.Uint16(hdr[8:])
	if flags != 0 && f != flags || flags == 0 && f != branchPageFlag && f != leafPageFlag {
		return nil, w.errorf(id, "unexpected page type %#x", f)
	}
	overflow := uint64(ne.Uint32(hdr[12:]))
	if overflow >= w.highWater-id {
		return nil, w.errorf(id, "%d overflow pages run past the file's pages", overflow)
	}
	for p := id; p <= id+overflow; p++ {
		if w.seen[p/64]&(1<<(p%64)) != 0 {
			return nil, w.errorf(p, "referenced twice")
		}
		w.seen[p/64] |= 1 << (p % 64)
	}
	return w.data[id*w.pageSize : (id+overflow+1)*w.pageSize], nil
}

func (w *pageWalker) freelist(id uint64) error {
	p, err := w.page(id, freelistFlag)
	if err != nil {
		return err
	}
	n, start := uint64(ne.Uint16(p[10:])), uint64(pageHeaderSize)
	if n == freelistOverrun {
		if len(p) < pageHeaderSize+8 {
			return w.errorf(id, "freelist count past the page")
		}
		n, start = ne.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > (uint64(len(p))-start)/8 {
		return w.errorf(id, "freelist of %d ids past the page", n)
	}
	w.free = make([]uint64, n)
	for i := range n {
		f := ne.Uint64(p[start+8*i:])
		if f < 2 || f >= w.highWater {
			return w.errorf(id, "free page %d outside the file's pages", f)
		}
		w.free[i] = f
	}
	return nil
}

// freeUnreached checks the free-page list against the pages the walk
// reached: a listed page that the tree still uses, or one listed twice,
// would be handed out to a later write while its data is live (bbolt
// panics freeing it again, or overwrites it), so such a list is damage.
func (w *pageWalker) freeUnreached() error {
	listed := make([]uint64, len(w.seen))
	for _, f := range w.free {
		bit := uint64(1) << (f % 64)
		switch {
		case w.seen[f/64]&bit != 0:
			return w.errorf(f, "in use by the page tree and listed as free")
		case listed[f/64]&bit != 0:
			return w.errorf(f, "listed as free twice")
		}
		listed[f/64] |= bit
	}
	return nil
}

// maxTreeDepth bounds the recursion; a B+tree of bbolt pages is far
// shallower, and every page is visited once anyway.
const maxTreeDepth = 64

// tree checks the page id and the pages below it; their keys lie in
// [lo, hi) (nil: unbounded).
func (w *pageWalker) tree(id uint64, lo, hi []byte, depth int) error {
	if depth > maxTreeDepth {
		return w.errorf(id, "tree deeper than %d", maxTreeDepth)
	}
	p, err := w.page(id, 0)
	if err != nil {
		return err
	}
	branch := ne.Uint16(p[8:]) == branchPageFlag
	var elems []pageElem
	if !branch {
		elems = w.scratch[:0] // a leaf's elements are done with before it recurses
	}
	elems, err = w.elements(id, p, branch, elems)
	if err != nil {
		return err
	}
	if branch && len(elems) == 0 {
		return w.errorf(id, "branch page without elements")
	}
	// bbolt finds a page in its parent by the page's first key when it
	// rewrites it: a parent that names it by another key would keep the
	// old page as well as the new one.
	if lo != nil && len(elems) > 0 && !bytes.Equal(elems[0].key, lo) {
		return w.errorf(id, "first key differs from the key its parent names it by")
	}
	if !branch && !w.leafKeys && len(elems) > 0 {
		// The load checks that the keys it reads ascend (keyOrder): with
		// a leaf's first and last key inside its parent's range, so is
		// every key between.
		for _, i := range []int{0, len(elems) - 1} {
			if err := w.inRange(id, elems[i].key, lo, hi, 0, elems); err != nil {
				return w.errorf(id, "key %d out of its parent's range", i)
			}
		}
	}
	for i, e := range elems {
		if !branch && !w.leafKeys {
			break
		}
		if err := w.inRange(id, e.key, lo, hi, i, elems); err != nil {
			return err
		}
	}
	if !branch {
		w.leaves += len(elems)
		var buckets []pageElem
		for _, e := range elems {
			if e.flags&bucketLeafFlag != 0 {
				buckets = append(buckets, e)
			}
		}
		w.scratch = elems[:0]
		if depth == 0 && len(buckets) > 1 {
			return w.bucketsAtOnce(id, buckets)
		}
		for _, e := range buckets {
			if err := w.bucket(id, e.key, e.value, depth); err != nil {
				return err
			}
		}
		return nil
	}
	if w.splitRoot && len(elems) >= 2 {
		w.splitRoot = false
		return w.childrenAtOnce(elems, hi, depth)
	}
	w.splitRoot = false
	return w.children(elems, hi, depth)
}

// children walks the subtrees under the elements of a branch page, the
// last of which ends before hi.
func (w *pageWalker) children(elems []pageElem, hi []byte, depth int) error {
	for i, e := range elems {
		next := hi
		if i+1 < len(elems) {
			next = elems[i+1].key
		}
		if err := w.tree(e.child, e.key, next, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// childrenAtOnce is children with the two halves of the elements walked
// on two goroutines, each with a walker of its own, merged as
// bucketsAtOnce merges: a bucket as large as the whole state (a history
// past its retention leaves the state alone) is then walked on both cores.
func (w *pageWalker) childrenAtOnce(elems []pageElem, hi []byte, depth int) error {
	half := len(elems) / 2
	parts := [2][]pageElem{elems[:half], elems[half:]}
	his := [2][]byte{elems[half].key, hi}
	var subs [2]*pageWalker
	var errs [2]error
	var wg sync.WaitGroup
	for i := range parts {
		sub := &pageWalker{data: w.data, pageSize: w.pageSize, highWater: w.highWater, seen: make([]uint64, len(w.seen)), leafKeys: w.leafKeys}
		subs[i] = sub
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A fault or a panic here is this goroutine's to recover.
			errs[i] = guard("checking the page structure", func() error { return sub.children(parts[i], his[i], depth) })
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return w.merge(subs[:])
}

// bucketsAtOnce walks the top-level buckets listed on root page id, each
// on its own goroutine with a walker of its own: at scale the walk is
// mostly the cost of the page faults that first touch the file's map,
// which the machine's cores then share (the state and the history are
// about the same size). A page two of them reach is found when their
// pages are merged, as the serial walk would find it.
func (w *pageWalker) bucketsAtOnce(id uint64, buckets []pageElem) error {
	subs := make([]*pageWalker, len(buckets))
	errs := make([]error, len(buckets))
	var wg sync.WaitGroup
	for i, e := range buckets {
		sub := &pageWalker{data: w.data, pageSize: w.pageSize, highWater: w.highWater, seen: make([]uint64, len(w.seen)), leafKeys: w.leafKeys, splitRoot: true}
		subs[i] = sub
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A fault or a panic here is this goroutine's to recover.
			errs[i] = guard("checking the page structure", func() error { return sub.bucket(id, e.key, e.value, 0) })
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if w.bucketKeys != nil {
		for j, sub := range subs {
			w.bucketKeys[string(buckets[j].key)] = sub.leaves
		}
	}
	return w.merge(subs)
}

// merge adds the pages and the leaf elements the walkers subs walked to
// w's: a page two of them (or w and one) walked is referenced twice.
func (w *pageWalker) merge(subs []*pageWalker) error {
	for _, sub := range subs {
		for i, bits := range sub.seen {
			if both := w.seen[i] & bits; both != 0 {
				return w.errorf(uint64(i*64+mathbits.TrailingZeros64(both)), "referenced twice")
			}
			w.seen[i] |= bits
		}
		w.leaves += sub.leaves
	}
	return nil
}

// branchKeys returns the keys of the branch page id and, levels deep, of
// the branch pages below it, in order: the first keys of the subtrees
// they lead to. A leaf ends the descent.
func (w *pageWalker) branchKeys(id uint64, levels int) ([][]byte, error) {
	p, err := w.page(id, 0)
	if err != nil || ne.Uint16(p[8:]) != branchPageFlag {
		return nil, err
	}
	elems, err := w.elements(id, p, true, nil)
	if err != nil || levels <= 1 {
		keys := make([][]byte, len(elems))
		for i, e := range elems {
			keys[i] = e.key
		}
		return keys, err
	}
	var keys [][]byte
	for _, e := range elems {
		below, err := w.branchKeys(e.child, levels-1)
		if err != nil {
			return nil, err
		}
		if below == nil { // leaves below
			below = [][]byte{e.key}
		}
		keys = append(keys, below...)
	}
	return keys, nil
}

// inRange checks that key i of a page is in [lo, hi) and above key i-1.
func (w *pageWalker) inRange(id uint64, key, lo, hi []byte, i int, elems []pageElem) error {
	switch {
	case lo != nil && bytes.Compare(key, lo) < 0, hi != nil && bytes.Compare(key, hi) >= 0:
		return w.errorf(id, "key %d out of its parent's range", i)
	case i > 0 && bytes.Compare(elems[i-1].key, key) >= 0:
		return w.errorf(id, "keys %d and %d out of order", i-1, i)
	}
	return nil
}

type pageElem struct {
	key, value []byte
	child      uint64
	flags      uint32
}

// elements decodes the element table of page p (id; page bytes, overflow
// included), checking that every key and value lies inside it.
func (w *pageWalker) elements(id uint64, p []byte, branch bool, dst []pageElem) ([]pageElem, error) {
	n := uint64(ne.Uint16(p[10:]))
	if pageHeaderSize+n*pageElemSize > uint64(len(p)) {
		return nil, w.errorf(id, "%d elements overrun the page", n)
	}
	out := slices.Grow(dst[:0], int(n))[:n]
	for i := range n {
		at := pageHeaderSize + i*pageElemSize
		el := p[at:]
		var e pageElem
		var pos, klen, vlen uint64
		if branch {
			pos, klen, e.child = uint64(ne.Uint32(el)), uint64(ne.Uint32(el[4:])), ne.Uint64(el[8:])
		} else {
			e.flags = ne.Uint32(el)
			pos, klen, vlen = uint64(ne.Uint32(el[4:])), uint64(ne.Uint32(el[8:])), uint64(ne.Uint32(el[12:]))
			if e.flags&^bucketLeafFlag != 0 {
				return nil, w.errorf(id, "element %d: flags %#x", i, e.flags)
			}
		}
		start := at + pos
		if start+klen+vlen > uint64(len(p)) {
			return nil, w.errorf(id, "element %d: key or value past the page", i)
		}
		e.key = p[start : start+klen]
		e.value = p[start+klen : start+klen+vlen]
		out[i] = e
	}
	return out, nil
}

// bucket checks a bucket's value under key on page id: a page tree of its
// own, or an inline leaf page inside the value.
func (w *pageWalker) bucket(id uint64, key, value []byte, depth int) error {
	if len(value) < bucketHdrSize {
		return w.errorf(id, "bucket %q: value of %d bytes", key, len(value))
	}
	if root := ne.Uint64(value); root != 0 {
		return w.tree(root, nil, nil, depth+1)
	}
	inline := value[bucketHdrSize:]
	if len(inline) < pageHeaderSize || ne.Uint16(inline[8:]) != leafPageFlag {
		return w.errorf(id, "bucket %q: damaged inline page", key)
	}
	elems, err := w.elements(id, inline, false, nil)
	if err != nil {
		return fmt.Errorf("inline bucket %q: %w", key, err)
	}
	for i, e := range elems {
		if e.flags != 0 {
			return w.errorf(id, "inline bucket %q holds a bucket", key)
		}
		if err := w.inRange(id, e.key, nil, nil, i, elems); err != nil {
			return fmt.Errorf("inline bucket %q: %w", key, err)
		}
	}
	return nil
}

// verifyFile checks the page structure of the engine file at path before
// bbolt opens it, as deep as verifyPagesData, holding a shared lock on it
// meanwhile, so a running server's file is reported as ErrLocked, never as
// damaged. A missing file is fine: bbolt creates it.
func verifyFile(path string, depth walkDepth) (walked, error) {
	return verifyPath(path, depth, true)
}

// verifyPath is verifyFile, without the lock when lock is false.
func verifyPath(path string, depth walkDepth, lock bool) (wk walked, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return walked{pages: true}, nil
	}
	if err != nil {
		return walked{}, err
	}
	defer f.Close()
	if lock {
		if err := lockShared(f, fileLockTimeout); err != nil {
			return walked{}, err
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return walked{}, err
	}
	if !fi.Mode().IsRegular() {
		return walked{}, fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	data, release, err := mapFile(f, fi.Size())
	if err != nil {
		return walked{}, err
	}
	defer release()
	err = guard("checking the page structure", func() (err error) {
		wk, err = verifyPagesData(data, depth)
		return err
	})
	return wk, err
}

// verifyMapped walks the pages of the file bdb has open (walkPages) through
// bbolt's map, before any transaction: the load reads the same pages next.
func verifyMapped(bdb *bbolt.DB) (wk walked, err error) {
	info := bdb.Info()
	fi, err := os.Stat(bdb.Path())
	if err != nil {
		return walked{}, err
	}
	// The map is at least the file's size; its pages within the high-water
	// mark, which verifyFile checked against the size, are readable.
	// The map is not Go memory, so its address may be held as a pointer.
	base := *(*unsafe.Pointer)(unsafe.Pointer(&info.Data))
	data := unsafe.Slice((*byte)(base), int(fi.Size()))
	err = guard("checking the page structure", func() (err error) {
		wk, err = verifyPagesData(data, walkPages)
		return err
	})
	return wk, err
}

// errPanicked marks an error guard made of a panic or a fault.
var errPanicked = errors.New("bolt: panicked")

// guard runs fn, turning a panic or a memory fault (a damaged page read
// through bbolt's map, a file cut short under the map) into ErrCorrupt
// wrapping errPanicked. Faults become panics only on the goroutine that
// runs fn.
func guard(what string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: %v%w", ErrCorrupt, what, r, quiet{errPanicked})
		}
	}()
	return fn()
}

// quiet wraps an error without adding to the message.
type quiet struct{ error }

func (quiet) Error() string { return "" }

package bolt

import (
	"bytes"
	"unsafe"
)

// Open copies every value (and key) it keeps out of the file's map. At
// scale that is most of a restart: one allocation per record, and one page
// fault for every 4 KiB of new memory touched. A slab serves the copies of
// one loading goroutine from large allocations instead, and asks the
// kernel for their pages in bulk (prefault) just before they are written.
const (
	// slabSize is the allocation unit: a thousand or so ConfigMap-sized
	// records. A slab lives as long as any record copied into it, so a
	// small unit bounds what one surviving record keeps alive.
	slabSize = 1 << 20
	// slabOwnSize is the length above which a record gets an allocation
	// of its own rather than a share of a slab.
	slabOwnSize = slabSize / 8
	// slabWindow is how much of a slab is prefaulted at a time, once a
	// slab writer has copied as much: a load of a few records makes no
	// more memory resident than it writes.
	slabWindow = 256 << 10
)

// slab hands out copies of byte strings carved from shared allocations.
// The copies are never written again (values are immutable in memory), so
// they may back strings. It is used by one goroutine.
type slab struct {
	buf []byte
	// faulted is how much of buf's capacity has been prefaulted.
	faulted int
	// copied is the bytes handed out so far, by all slabs.
	copied int
}

// bytes returns a copy of b whose capacity is its length; nil for nil.
func (s *slab) bytes(b []byte) []byte {
	switch {
	case b == nil:
		return nil
	case len(b) > slabOwnSize:
		return bytes.Clone(b)
	}
	if cap(s.buf)-len(s.buf) < len(b) {
		s.buf, s.faulted = make([]byte, 0, slabSize), 0
	}
	start, end := len(s.buf), len(s.buf)+len(b)
	if end > s.faulted && s.copied >= slabWindow {
		s.faulted = min(cap(s.buf), max(end, start+slabWindow))
		prefault(s.buf[start:s.faulted])
	}
	s.copied += len(b)
	s.buf = append(s.buf, b...)
	return s.buf[start:end:end]
}

// string returns a copy of b as a string.
func (s *slab) string(b []byte) string {
	c := s.bytes(b)
	return unsafe.String(unsafe.SliceData(c), len(c))
}

// prefaultSlice prefaults the memory of s, which is about to be written,
// when it is large enough to be an allocation of its own.
func prefaultSlice[T any](s []T) {
	n := len(s) * int(unsafe.Sizeof(*new(T)))
	if n < slabWindow {
		return
	}
	prefault(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n))
}

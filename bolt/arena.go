package bolt

// arenaChunk is the allocation unit of an arena: large enough that a batch
// of typical objects needs a few allocations, small enough not to matter
// when a batch is one small write.
const arenaChunk = 64 << 10

// arena hands out byte slices carved from larger chunks. Slices it returned
// stay valid and unchanged after later calls; it is used for one batch.
type arena struct{ buf []byte }

// tail returns an empty slice to append one record to.
func (a *arena) tail() []byte {
	if cap(a.buf)-len(a.buf) < 256 {
		a.buf = make([]byte, 0, arenaChunk)
	}
	return a.buf[len(a.buf):len(a.buf)]
}

// take claims rec, which was built by appending to tail(). When appending
// outgrew the chunk, rec lives in its own allocation and the chunk is left
// as it was.
func (a *arena) take(rec []byte) []byte {
	if len(rec) > 0 && len(a.buf) < cap(a.buf) && &a.buf[:len(a.buf)+1][len(a.buf)] == &rec[0] {
		a.buf = a.buf[:len(a.buf)+len(rec)]
	}
	return rec[:len(rec):len(rec)]
}

// reserve makes the next chunk at least n bytes, so a batch whose size is
// known up front is built in one allocation.
func (a *arena) reserve(n int) {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, arenaChunk))
	}
}

// string copies s into the arena.
func (a *arena) string(s string) []byte {
	return a.take(append(a.tail(), s...))
}

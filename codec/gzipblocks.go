package codec

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
)

// gzipBlockSize is how much of a body one compressor takes at a time: a
// list of thousands of items is a few dozen blocks, so several cores share
// it, while the window lost at each block's start costs well under a
// percent of the ratio.
const gzipBlockSize = 256 << 10

// blockGzip writes one gzip member whose deflate stream is compressed in
// blocks, several at once: each block has a compressor of its own, so no
// match reaches back into the block before it, and each but the last ends
// with a sync flush on a byte boundary, so the blocks' outputs join into
// one valid stream. While blocks compress, the body's writer goes on
// producing the next: a large list renders on one core and compresses on
// the others. Not safe for concurrent use.
type blockGzip struct {
	w io.Writer
	// cur gathers input until it is gzipBlockSize long.
	cur *gzipBlock
	// pending are the dispatched blocks, in body order.
	pending []*gzipBlock
	crc     uint32
	size    uint32
	header  bool
	err     error
}

// gzipBlock is one block of input and, once done is closed, its deflate
// output.
type gzipBlock struct {
	in   []byte
	out  bytes.Buffer
	done chan struct{}
}

var (
	gzipBlockPool = sync.Pool{New: func() any { return &gzipBlock{in: make([]byte, 0, gzipBlockSize)} }}
	flateWriters  = sync.Pool{New: func() any {
		fw, _ := flate.NewWriter(nil, gzipLevel)
		return fw
	}}
)

func newBlockGzip(w io.Writer) *blockGzip {
	return &blockGzip{w: w, cur: getGzipBlock()}
}

func getGzipBlock() *gzipBlock {
	b := gzipBlockPool.Get().(*gzipBlock)
	b.in, b.done = b.in[:0], nil
	b.out.Reset()
	return b
}

// compress deflates the block's input; last ends the stream, otherwise
// the output ends with a sync flush.
func (b *gzipBlock) compress(last bool) {
	fw := flateWriters.Get().(*flate.Writer)
	fw.Reset(&b.out)
	// Writes to a bytes.Buffer do not fail.
	_, _ = fw.Write(b.in)
	if last {
		_ = fw.Close()
	} else {
		_ = fw.Flush()
	}
	flateWriters.Put(fw)
}

// inFlight bounds the blocks compressing at once: one per core the
// runtime may use, beside the writer's.
func inFlight() int { return max(1, runtime.GOMAXPROCS(0)) }

func (g *blockGzip) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if g.err != nil {
			return n, g.err
		}
		take := min(gzipBlockSize-len(g.cur.in), len(p))
		g.cur.in = append(g.cur.in, p[:take]...)
		p, n = p[take:], n+take
		if len(g.cur.in) == gzipBlockSize {
			g.dispatch()
		}
	}
	return n, g.err
}

// dispatch starts compressing the gathered input, and writes finished
// blocks out while too many are in flight.
func (g *blockGzip) dispatch() {
	b := g.cur
	g.cur = getGzipBlock()
	g.account(b.in)
	b.done = make(chan struct{})
	g.pending = append(g.pending, b)
	go func() {
		b.compress(false)
		close(b.done)
	}()
	for len(g.pending) > inFlight() {
		g.writeOldest()
	}
}

func (g *blockGzip) account(in []byte) {
	g.crc = crc32.Update(g.crc, crc32.IEEETable, in)
	g.size += uint32(len(in))
}

// writeOldest waits for the first pending block and writes its output.
func (g *blockGzip) writeOldest() {
	b := g.pending[0]
	g.pending = g.pending[1:]
	<-b.done
	g.writeOut(b.out.Bytes())
	gzipBlockPool.Put(b)
}

func (g *blockGzip) writeOut(p []byte) {
	if g.err != nil {
		return
	}
	if !g.header {
		g.header = true
		// ID1 ID2, deflate, no flags, no time, the level hint, OS unknown:
		// what the single-stream writer writes at this level.
		xfl := byte(0)
		if gzipLevel == flate.BestSpeed {
			xfl = 4
		}
		if _, g.err = g.w.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255}); g.err != nil {
			return
		}
	}
	_, g.err = g.w.Write(p)
}

// Flush compresses what was written so far and writes it out, ending on
// a byte boundary, as a single-stream writer's Flush does.
func (g *blockGzip) Flush() error {
	if len(g.cur.in) > 0 {
		g.dispatch()
	}
	for len(g.pending) > 0 {
		g.writeOldest()
	}
	if !g.header {
		g.writeOut(nil)
	}
	return g.err
}

// Close compresses the rest, ends the stream and writes the trailer. The
// writer must not be used after.
func (g *blockGzip) Close() error {
	for len(g.pending) > 0 {
		g.writeOldest()
	}
	last := g.cur
	g.cur = nil
	g.account(last.in)
	last.compress(true)
	g.writeOut(last.out.Bytes())
	gzipBlockPool.Put(last)
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], g.crc)
	binary.LittleEndian.PutUint32(trailer[4:], g.size)
	if g.err == nil {
		_, g.err = g.w.Write(trailer[:])
	}
	return g.err
}

package codec

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// gunzipOne reads z as exactly one gzip member, as a client would, and
// fails on anything after it.
func gunzipOne(t testing.TB, z []byte) []byte {
	t.Helper()
	br := bytes.NewReader(z)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	if br.Len() != 0 {
		t.Fatalf("%d bytes after the gzip member", br.Len())
	}
	return out
}

// blockBody is n bytes that compress about as a list of objects does:
// repeated structure around random values.
func blockBody(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(`{"metadata":{"name":"cm-`)
		for range 12 {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteString(`"},"data":{"k":"`)
		for range r.IntN(300) {
			b.WriteByte(byte('0' + r.IntN(75)))
		}
		b.WriteString(`"}},`)
	}
	return b.Bytes()[:n]
}

func TestBlockGzip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		size, part int
		flushAt    int // flush after the write that reaches this many bytes; 0: never
	}{
		{"empty", 0, 1, 0},
		{"one byte", 1, 1, 0},
		{"under a block", GzipThreshold + 1, 1 << 20, 0},
		{"a block less one", gzipBlockSize - 1, 4096, 0},
		{"one block", gzipBlockSize, gzipBlockSize, 0},
		{"a block and one", gzipBlockSize + 1, gzipBlockSize, 0},
		{"many blocks, one write", 9*gzipBlockSize + 123, 10 * gzipBlockSize, 0},
		{"many blocks, odd writes", 9*gzipBlockSize + 123, 7777, 0},
		{"flush mid block", 3*gzipBlockSize + 5, 1000, gzipBlockSize + 500},
		{"flush at a block's end", 3*gzipBlockSize + 5, gzipBlockSize, gzipBlockSize},
		{"flush first", 2 * gzipBlockSize, gzipBlockSize, 1},
	} {
		body := blockBody(tc.size, uint64(tc.size))
		var z bytes.Buffer
		g := newBlockGzip(&z)
		flushed := false
		for off := 0; off < len(body); off += tc.part {
			end := min(off+tc.part, len(body))
			if n, err := g.Write(body[off:end]); n != end-off || err != nil {
				t.Fatalf("%s: Write = %d, %v", tc.name, n, err)
			}
			if tc.flushAt > 0 && !flushed && end >= tc.flushAt {
				if err := g.Flush(); err != nil {
					t.Fatalf("%s: Flush: %v", tc.name, err)
				}
				// What was flushed is readable before the end.
				if got := readFlushed(t, z.Bytes()); !bytes.Equal(got, body[:end]) {
					t.Fatalf("%s: %d bytes readable after Flush, want %d", tc.name, len(got), end)
				}
				flushed = true
			}
		}
		if err := g.Close(); err != nil {
			t.Fatalf("%s: Close: %v", tc.name, err)
		}
		if hdr := z.Bytes()[:10]; !bytes.Equal(hdr, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255}) {
			t.Errorf("%s: header % x", tc.name, hdr)
		}
		if got := gunzipOne(t, z.Bytes()); !bytes.Equal(got, body) {
			t.Errorf("%s: round trip gave %d bytes, want %d", tc.name, len(got), len(body))
		}
	}
}

// readFlushed decompresses a stream that was flushed but not closed: all
// of it up to the flush can be read.
func readFlushed(t *testing.T, z []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatalf("gzip header after Flush: %v", err)
	}
	out, err := io.ReadAll(zr)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("reading a flushed stream: %v, want unexpected EOF at its end", err)
	}
	return out
}

// TestBlockGzipRatio checks that compressing in blocks costs little of
// the ratio of one stream.
func TestBlockGzipRatio(t *testing.T) {
	t.Parallel()
	body := blockBody(8<<20, 7)
	var one, blocks bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestSpeed)
	_, _ = zw.Write(body)
	_ = zw.Close()
	g := newBlockGzip(&blocks)
	_, _ = g.Write(body)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if float64(blocks.Len()) > 1.02*float64(one.Len()) {
		t.Errorf("blocks: %d bytes, one stream: %d", blocks.Len(), one.Len())
	}
}

// shortWriter fails every write after the first n bytes.
type shortWriter struct{ n int }

var errWriteFailed = errors.New("connection gone")

func (f *shortWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errWriteFailed
	}
	f.n -= len(p)
	return len(p), nil
}

func TestBlockGzipWriteError(t *testing.T) {
	t.Parallel()
	body := blockBody(12*gzipBlockSize, 3)
	for _, room := range []int{0, 5, 10, 64 << 10} {
		g := newBlockGzip(&shortWriter{n: room})
		var err error
		for off := 0; off < len(body) && err == nil; off += 100 << 10 {
			_, err = g.Write(body[off:min(off+100<<10, len(body))])
		}
		if cerr := g.Close(); !errors.Is(cerr, errWriteFailed) {
			t.Errorf("room %d: Close = %v, want the write's error", room, cerr)
		}
		if err != nil && !errors.Is(err, errWriteFailed) {
			t.Errorf("room %d: Write = %v", room, err)
		}
	}
}

func FuzzBlockGzip(f *testing.F) {
	f.Add(uint64(1), uint32(300000), uint32(7777), uint32(0))
	f.Add(uint64(2), uint32(gzipBlockSize), uint32(gzipBlockSize), uint32(1))
	f.Add(uint64(3), uint32(0), uint32(1), uint32(0))
	f.Fuzz(func(t *testing.T, seed uint64, size, part, flushAt uint32) {
		size %= 3 * gzipBlockSize
		part = part%(gzipBlockSize+7) + 1
		body := blockBody(int(size), seed)
		var z bytes.Buffer
		g := newBlockGzip(&z)
		for off := 0; off < len(body); off += int(part) {
			end := min(off+int(part), len(body))
			if _, err := g.Write(body[off:end]); err != nil {
				t.Fatal(err)
			}
			if flushAt > 0 && uint32(end) >= flushAt%size+1 {
				if err := g.Flush(); err != nil {
					t.Fatal(err)
				}
				flushAt = 0
			}
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if got := gunzipOne(t, z.Bytes()); !bytes.Equal(got, body) {
			t.Fatalf("round trip gave %d bytes, want %d", len(got), len(body))
		}
	})
}

// BenchmarkBlockGzip compresses a 7 MB list-like body as one stream and
// in blocks: the blocks' wall time falls with the cores the runtime has.
func BenchmarkBlockGzip(b *testing.B) {
	body := blockBody(7<<20, 11)
	b.Run("one-stream", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		zw, _ := kgzip.NewWriterLevel(io.Discard, gzipLevel)
		for b.Loop() {
			zw.Reset(io.Discard)
			_, _ = zw.Write(body)
			_ = zw.Close()
		}
	})
	b.Run("blocks", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			g := newBlockGzip(io.Discard)
			for off := 0; off < len(body); off += 256 << 10 {
				_, _ = g.Write(body[off:min(off+256<<10, len(body))])
			}
			_ = g.Close()
		}
	})
}

// TestGzipWriterSpread checks that a client on another host gets the body
// compressed in blocks and a loopback client one stream, the same body
// either way.
func TestGzipWriterSpread(t *testing.T) {
	t.Parallel()
	body := blockBody(5*gzipBlockSize+17, 5)
	for addr, spread := range map[string]bool{"127.0.0.1:40000": false, "[::1]:40000": false, "192.0.2.1:40000": true} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = addr
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		w, finish := GzipWriter(rec, req)
		// Writes as a list's: each larger than the threshold.
		for off := 0; off < len(body); off += 200 << 10 {
			if _, err := w.Write(body[off:min(off+200<<10, len(body))]); err != nil {
				t.Fatal(err)
			}
		}
		_, blocks := w.(*gzipResponseWriter).gz.(*blockGzip)
		if err := finish(); err != nil {
			t.Fatal(err)
		}
		if blocks != spread {
			t.Errorf("%s: compressed in blocks %v, want %v", addr, blocks, spread)
		}
		if ce := rec.Header().Get("Content-Encoding"); ce != "gzip" {
			t.Errorf("%s: Content-Encoding %q", addr, ce)
		}
		if got := gunzipOne(t, rec.Body.Bytes()); !bytes.Equal(got, body) {
			t.Errorf("%s: body of %d bytes, want %d", addr, len(got), len(body))
		}
	}
}

package codec

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// GzipThreshold is the size the first write of a response body must exceed
// before it is compressed. Smaller bodies gain little and cost CPU on both
// ends; upstream uses the same 128 KiB.
const GzipThreshold = 128 * 1024

// gzipLevel favours speed: list bodies are large and the server's CPU is
// the bottleneck, not the link (upstream also uses BestSpeed).
const gzipLevel = flate.BestSpeed

// gzipPool holds single-stream compressors for loopback clients.
var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return w
}}

// compressor is what a response body is compressed by: one stream
// (*gzip.Writer) or blocks on several cores (*blockGzip).
type compressor interface {
	io.Writer
	Flush() error
	Close() error
}

// AcceptsGzip reports whether an Accept-Encoding header has a
// comma-separated token exactly equal to "gzip" after trimming spaces.
// Tokens with parameters ("gzip;q=1.0") do not count, as upstream.
func AcceptsGzip(acceptEncoding string) bool {
	for token := range strings.SplitSeq(acceptEncoding, ",") {
		if strings.TrimSpace(token) == "gzip" {
			return true
		}
	}
	return false
}

// GzipWriter wraps w for one non-watch response to r. When r accepts gzip
// (see AcceptsGzip) and the first Write is larger than GzipThreshold, the
// body is compressed at level 1 (for a client on another host in blocks
// on every core, see blockGzip; a loopback client, which shares the
// cores, gets one stream compressed as it is written) and the response gets
// "Content-Encoding: gzip" and "Vary: Accept-Encoding" and loses any
// Content-Length; otherwise bytes pass through. The status passed to
// WriteHeader is held back until the first Write (or finish) so the headers
// can still change. The caller must call finish exactly once after the last
// write; it flushes the compressor and returns it to a pool. When r does not
// accept gzip, GzipWriter returns w itself and a finish that does nothing.
// The returned writer is not safe for concurrent use.
func GzipWriter(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func() error) {
	if !AcceptsGzip(r.Header.Get("Accept-Encoding")) {
		return w, func() error { return nil }
	}
	g := &gzipResponseWriter{w: w, spread: !IsLoopback(r.RemoteAddr)}
	return g, g.finish
}

// errFinished reports a write after finish.
var errFinished = errors.New("codec: write after gzip writer finished")

type gzipResponseWriter struct {
	w        http.ResponseWriter
	status   int
	decided  bool // headers and status have been passed on
	finished bool
	gz       compressor
	// spread compresses in blocks on several cores: the client does not
	// share them.
	spread bool
}

func (g *gzipResponseWriter) Header() http.Header { return g.w.Header() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *gzipResponseWriter) Unwrap() http.ResponseWriter { return g.w }

func (g *gzipResponseWriter) WriteHeader(status int) {
	if g.decided || g.status != 0 {
		return
	}
	g.status = status
}

func (g *gzipResponseWriter) Write(p []byte) (int, error) {
	if g.finished {
		return 0, errFinished
	}
	if !g.decided {
		g.decide(len(p))
	}
	if g.gz != nil {
		return g.gz.Write(p)
	}
	return g.w.Write(p)
}

// decide picks compression from the size of the first write and sends the
// held-back status.
func (g *gzipResponseWriter) decide(firstWrite int) {
	g.decided = true
	if firstWrite > GzipThreshold {
		h := g.w.Header()
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		h.Del("Content-Length")
		if g.spread {
			g.gz = newBlockGzip(g.w)
		} else {
			zw := gzipPool.Get().(*gzip.Writer)
			zw.Reset(g.w)
			g.gz = zw
		}
	}
	if g.status != 0 {
		g.w.WriteHeader(g.status)
	}
}

// Flush writes out compressed data buffered so far and flushes the
// connection. Flushing before the first write sends the held-back status
// and leaves the body uncompressed.
func (g *gzipResponseWriter) Flush() {
	if g.finished {
		return
	}
	if !g.decided {
		g.decide(0)
	}
	if g.gz != nil {
		_ = g.gz.Flush()
	}
	_ = http.NewResponseController(g.w).Flush()
}

func (g *gzipResponseWriter) finish() error {
	if g.finished {
		return nil
	}
	g.finished = true
	if !g.decided {
		g.decide(0)
	}
	if g.gz == nil {
		return nil
	}
	err := g.gz.Close()
	if zw, ok := g.gz.(*gzip.Writer); ok {
		zw.Reset(nil)
		gzipPool.Put(zw)
	}
	g.gz = nil
	return err
}

// IsLoopback reports whether a request's RemoteAddr ("ip:port") is a
// loopback address. Servers may leave such clients' responses
// uncompressed: both ends share one CPU and the link costs nothing.
func IsLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

package server

import (
	"cmp"
	"crypto/tls"
	"log/slog"
	"math"
	"net/http"
	"time"
)

// Connection limits. Upstream bounds how long a connection may sit idle
// or half-open, not how many one client address may hold: clients behind
// a NAT, a proxy or a load balancer share one address, and a cap per
// address would refuse them first. platd does the same; each socket an
// unauthenticated client opens is closed by these timeouts instead.
const (
	// readHeaderTimeout bounds the TLS handshake (Go uses the shortest
	// of the server's read and write timeouts for it) and the reading of
	// a request's headers, so a client that connects and sends nothing,
	// or stops mid-handshake, is dropped: upstream's 32 s, just under the
	// longest request timeout a client may ask for.
	readHeaderTimeout = 32 * time.Second
	// idleTimeout closes keep-alive connections, HTTP/1 and HTTP/2, idle
	// this long: upstream's 90 s, the keep-alive of Go clients' default
	// transport, so clients close first.
	idleTimeout = 90 * time.Second
	// writeTimeoutGrace is how long past --request-timeout a response
	// may still be written. The timeout filter answers 504 at the
	// request's deadline; the connection's write deadline follows a
	// little later so that answer still goes out, and a response whose
	// client stopped reading fails there at the latest.
	writeTimeoutGrace = 5 * time.Second
	// maxHeaderBytes bounds request headers, as upstream (1 MiB).
	maxHeaderBytes = 1 << 20
	// defaultHTTP2MaxStreams is upstream's streams per HTTP/2 connection
	// when --http2-max-streams-per-connection is 0: the limit Go clients
	// assume until the server says otherwise, so a client that floods a
	// connection with streams is cut off early.
	defaultHTTP2MaxStreams = 100
	// http2FrameSize is upstream's HTTP/2 read frame size and per-stream
	// receive window: almost every object a client sends fits in one
	// frame, and the window per connection (this times the streams) stays
	// small.
	http2FrameSize = 256 << 10
)

// httpServer is the HTTP server of h over TLS with platd's connection
// limits.
func (s *Server) httpServer(h http.Handler, tlsConfig *tls.Config) *http.Server {
	o := s.opts
	idle, header, grace := cmp.Or(o.Conn.Idle, idleTimeout), cmp.Or(o.Conn.ReadHeader, readHeaderTimeout), cmp.Or(o.Conn.WriteGrace, writeTimeoutGrace)
	streams := cmp.Or(o.HTTP2MaxStreamsPerConnection, defaultHTTP2MaxStreams)
	hs := &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: header,
		IdleTimeout:       idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		// The HTTP/2 idle timeout is IdleTimeout.
		HTTP2:       http2Config(streams),
		ConnContext: o.Conn.Context,
	}
	// Every response must be written by its request's deadline plus the
	// grace: a client that stops reading cannot hold its response, and
	// the in-flight slot behind it, for longer. Long-running requests
	// clear the deadline (filters.Timeout); without --request-timeout
	// there is none.
	if o.RequestTimeout > 0 {
		hs.WriteTimeout = o.RequestTimeout + grace
	}
	return hs
}

// http2Config is the HTTP/2 settings for streams per connection. The
// connection's window is one frame per stream, at most HTTP/2's largest
// window (2^31-1): past it Go would fall back to its 1 MiB default, from
// --http2-max-streams-per-connection 8192 upward.
func http2Config(streams int) *http.HTTP2Config {
	window := math.MaxInt32
	if streams <= window/http2FrameSize {
		window = http2FrameSize * streams
	}
	return &http.HTTP2Config{
		MaxConcurrentStreams:          streams,
		MaxReadFrameSize:              http2FrameSize,
		MaxReceiveBufferPerStream:     http2FrameSize,
		MaxReceiveBufferPerConnection: window,
	}
}

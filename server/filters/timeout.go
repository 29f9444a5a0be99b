package filters

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"platd/server/apierr"
	"platd/server/request"
)

// Timeout gives each request that is not long-running a deadline: max
// after it arrived, or the shorter ?timeout= it asks for (0 or more than
// max leaves max). A max of 0 means the server sets none. When the
// deadline passes before the handler answers, the client gets upstream's
// 504 at once; the handler goes on in the background, its context
// cancelled and its writes discarded. A handler that had already begun
// its answer cannot be given a 504: the connection is aborted instead.
// An unparsable ?timeout= is a 400.
//
// With max set the server gives every connection a write deadline a
// little past max (server/conn.go): long-running requests clear it here,
// so a watch is served for as long as it lasts. A handler whose write is
// blocked on a client that stopped reading when the deadline passes has
// that write failed at once.
func Timeout(next http.Handler, max time.Duration, writeErr ErrorWriter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		if request.InfoFrom(r.Context()).LongRunning() {
			if max > 0 {
				_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
			}
			next.ServeHTTP(w, r)
			return
		}
		limit, err := requestLimit(r, max)
		if err != nil {
			writeErr(w, r, err)
			return
		}
		if limit == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithDeadline(r.Context(), began.Add(limit))
		defer cancel()
		r = r.WithContext(ctx)
		tw := &timeoutWriter{w: w, header: w.Header().Clone()}
		var body *timeoutBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &timeoutBody{rc: r.Body}
			r.Body = body
		}
		// The handler shares the request, as upstream's: after a timeout
		// this goroutine returns while the handler may still read it, and
		// the server changes nothing of a request once its handler returns.
		inner := r
		done := make(chan any, 1)
		go func() {
			defer func() {
				v := recover()
				if v != nil && v != http.ErrAbortHandler {
					v = fmt.Sprintf("%v\n%s", v, debug.Stack())
				}
				done <- v
			}()
			next.ServeHTTP(tw, inner)
		}()
		select {
		case v := <-done:
			if v != nil {
				panic(v)
			}
		case <-ctx.Done():
			select {
			case v := <-done: // finished just as the deadline passed
				if v != nil {
					panic(v)
				}
				return
			default:
			}
			if body != nil {
				body.expire()
			}
			tw.cutWrites()
			tw.expire()
		}
	})
}

// requestLimit is how long r may run: max, or less when ?timeout= asks
// for less. Most requests carry no timeout, so the query is parsed only
// for those that may.
func requestLimit(r *http.Request, max time.Duration) (time.Duration, error) {
	if !strings.Contains(r.URL.RawQuery, "timeout=") {
		return max, nil
	}
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return max, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierr.BadRequest("invalid timeout specified in the request URL - " + err.Error())
	}
	if d > 0 && (max == 0 || d < max) {
		return d, nil
	}
	return max, nil
}

// requestTimedOut is upstream's answer to a request past its deadline.
func requestTimedOut() *apierr.Error {
	return apierr.Timeout("request did not complete within the allotted timeout", 0)
}

// timeoutWriter holds the handler's headers apart from the connection's
// until it writes, so a timeout can still answer cleanly; after expire
// every write fails with http.ErrHandlerTimeout.
type timeoutWriter struct {
	w      http.ResponseWriter
	header http.Header

	mu      sync.Mutex
	expired bool
	wrote   bool
	// began is wrote, readable without mu: a write holds mu for as long
	// as the client takes to read it.
	began atomic.Bool
}

// writesPast is a write deadline already passed: setting it fails the
// writes in progress.
var writesPast = time.Unix(1, 0)

// cutWrites fails a write in progress when the handler has begun its
// answer, so expire does not wait on a client that stopped reading: over
// HTTP/1 the connection's writes fail, over HTTP/2 the stream is reset.
func (tw *timeoutWriter) cutWrites() {
	if tw.began.Load() {
		_ = http.NewResponseController(tw.w).SetWriteDeadline(writesPast)
	}
}

func (tw *timeoutWriter) Header() http.Header {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.expired {
		return http.Header{}
	}
	return tw.header
}

// commit sends the handler's headers; tw.mu is held.
func (tw *timeoutWriter) commit() {
	if tw.wrote {
		return
	}
	tw.wrote = true
	tw.began.Store(true)
	h := tw.w.Header()
	for k, v := range tw.header {
		h[k] = v
	}
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.expired || tw.wrote {
		return
	}
	tw.commit()
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.expired {
		return 0, http.ErrHandlerTimeout
	}
	tw.commit()
	return tw.w.Write(p)
}

// Flush passes through until the timeout.
func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.expired {
		return
	}
	tw.commit()
	_ = http.NewResponseController(tw.w).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (tw *timeoutWriter) Unwrap() http.ResponseWriter { return tw.w }

// expire answers 504 if the handler has not begun its answer, else
// aborts the connection: a half-written body cannot become a Status.
func (tw *timeoutWriter) expire() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.expired = true
	if tw.wrote {
		panic(http.ErrAbortHandler)
	}
	// Written without negotiation, as upstream: JSON whatever the
	// request accepts.
	tw.w.WriteHeader(http.StatusGatewayTimeout)
	_ = json.NewEncoder(tw.w).Encode(requestTimedOut().Status)
}

// timeoutBody makes reads of the request body fail once the request has
// timed out, so a handler still reading cannot touch the connection.
type timeoutBody struct {
	rc      io.ReadCloser
	expired atomic.Bool
}

func (b *timeoutBody) expire() { b.expired.Store(true) }

func (b *timeoutBody) Read(p []byte) (int, error) {
	if b.expired.Load() {
		return 0, http.ErrHandlerTimeout
	}
	return b.rc.Read(p)
}

func (b *timeoutBody) Close() error {
	if b.expired.Load() {
		return http.ErrHandlerTimeout
	}
	return b.rc.Close()
}

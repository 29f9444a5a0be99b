package filters

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
// An unparsable ?timeout= is a 400, recorded by failAudit (when not nil)
// as upstream audits it: before authentication, with no user.
//
// With max set the server gives every connection a write deadline a
// little past max (server/conn.go): long-running requests clear it here,
// so a watch is served for as long as it lasts. A handler whose write is
// blocked on a client that stopped reading when the deadline passes has
// that write failed at once.
//
// A handler that panics after its request timed out has no one left to
// reach: the panic is logged to log, as upstream reports post-timeout
// activity.
func Timeout(next http.Handler, max time.Duration, writeErr ErrorWriter, failAudit FailedAudit, log *slog.Logger) http.Handler {
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
			if failAudit != nil {
				w, r = failAudit(w, r, err.Error())
			}
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
		handlerWorkers.run(func() {
			defer func() {
				v := recover()
				if v != nil && v != http.ErrAbortHandler {
					v = fmt.Sprintf("%v\n%s", v, debug.Stack())
				}
				done <- v
			}()
			next.ServeHTTP(tw, inner)
		})
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
			// Deferred: expire panics to abort a begun answer.
			defer logLatePanic(log, r.Method, r.URL.Path, done)
			if body != nil {
				body.expire()
			}
			// expired first, then began: a write commits before it checks
			// expired, so one side sees the other and no write starts
			// uncut once the deadline has passed.
			tw.expired.Store(true)
			tw.cutWrites()
			if testHookExpiring != nil {
				testHookExpiring()
			}
			tw.expire()
		}
	})
}

// logLatePanic logs, in the background, a panic the handler of a request
// that timed out ends with.
func logLatePanic(log *slog.Logger, method, path string, done <-chan any) {
	go func() {
		if v := <-done; v != nil && v != http.ErrAbortHandler {
			log.Error("handler panic after timeout", "method", method, "path", path, "panic", fmt.Sprint(v))
		}
	}()
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

	mu sync.Mutex
	// began says the handler's answer is committed; set under mu, read
	// without it too, since a write holds mu for as long as the client
	// takes to read it.
	began atomic.Bool
	// expired is set by the filter at the deadline, before it reads
	// began; writes read it after setting began (see start).
	expired atomic.Bool
}

// testHookExpiring runs, when set, after the filter has cut the writes in
// progress at the deadline and before it takes the writer: a test writes
// in that window.
var testHookExpiring func()

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
	if tw.expired.Load() {
		return http.Header{}
	}
	return tw.header
}

// start commits the handler's answer before a write that may block on
// the client and reports whether the write may go ahead; tw.mu is held.
// It sets began before it reads expired, the filter sets expired before
// it reads began: either the filter sees began and cuts this write, or
// start sees expired and the write does not start. A write refused after
// its commit leaves the request to be aborted rather than answered 504.
func (tw *timeoutWriter) start() bool {
	if tw.expired.Load() {
		return false
	}
	tw.commit()
	return !tw.expired.Load()
}

// commit sends the handler's headers; tw.mu is held.
func (tw *timeoutWriter) commit() {
	if tw.began.Load() {
		return
	}
	tw.began.Store(true)
	h := tw.w.Header()
	for k, v := range tw.header {
		h[k] = v
	}
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.began.Load() || !tw.start() {
		return
	}
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.start() {
		return 0, http.ErrHandlerTimeout
	}
	return tw.w.Write(p)
}

// Flush passes through until the timeout.
func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.start() {
		return
	}
	_ = http.NewResponseController(tw.w).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (tw *timeoutWriter) Unwrap() http.ResponseWriter { return tw.w }

// expire answers 504 if the handler has not begun its answer, else
// aborts the connection: a half-written body cannot become a Status. The
// filter has set expired already, so no write starts meanwhile.
func (tw *timeoutWriter) expire() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.began.Load() {
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

package filters

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"platd/server/apierr"
	"platd/server/request"
)

// Graceful stop: once the server stops taking requests (after
// --shutdown-delay-duration), new requests are refused while those in
// flight finish. RetryAfter refuses them while the listener is still open
// (--shutdown-send-retry-after); a Drain counts what is in flight so the
// server knows when to close the listener, and spreads the end of open
// watches over --shutdown-watch-termination-grace-period.

// shutdownRetryAfter is the Retry-After of a refusal while shutting down
// with --shutdown-send-retry-after: long enough for a load balancer to have
// taken this server out, as upstream's 5 seconds.
const shutdownRetryAfter = "5"

// drainRetryAfter is the Retry-After of a request that arrives on an open
// connection once in-flight requests are being drained: another server is
// likely to answer at once, so clients retry soon (upstream's 1 second).
const drainRetryAfter = "1"

// minWatchEndRate is the fewest watches ended per second during the watch
// grace period, so that many watches over a long grace still end soon.
// Upstream uses the same floor.
const minWatchEndRate = 200

// exemptFromShutdown reports whether r is served to the end however the
// server stops: health probes and metrics scrapes are how the operator
// watches the stop.
func exemptFromShutdown(r *http.Request) bool {
	p := r.URL.Path
	for _, prefix := range [...]string{"/readyz", "/livez", "/healthz", "/metrics"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// RetryAfter answers every request but the exempt ones with upstream's
// plain-text 429, Retry-After: 5 and Connection: close once stopping is
// closed, so clients go to another server while this one drains. Over
// HTTP/2 Connection: close makes the server send GOAWAY. Without on it
// returns next.
func RetryAfter(next http.Handler, stopping <-chan struct{}, on bool) http.Handler {
	if !on {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stopping:
			if !exemptFromShutdown(r) {
				refuseRetryAfter(w)
				return
			}
		default:
		}
		next.ServeHTTP(w, r)
	})
}

// refuseRetryAfter writes upstream's refusal of a request while the server
// stops with --shutdown-send-retry-after. Upstream refuses before its
// default headers are set: a Drain's refusal, made inside them, drops the
// Cache-Control they set so both answers are the same.
func refuseRetryAfter(w http.ResponseWriter) {
	w.Header().Del("Cache-Control")
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", shutdownRetryAfter)
	http.Error(w, "The apiserver is shutting down, please try again later.", http.StatusTooManyRequests)
}

// Drain counts the requests in flight so a stopping server can wait for
// them. Create it with NewDrain, put Handler in the chain inside
// RequestInfo, and call Wait once, when the server stops taking requests.
// It is safe for concurrent use.
type Drain struct {
	requests   closableCount
	watches    closableCount
	watchGrace time.Duration
	writeErr   ErrorWriter
	// retryAfter refuses as RetryAfter does: Wait begins just before the
	// server stops taking requests, and a request arriving in between must
	// get the same answer as one arriving just after.
	retryAfter bool

	// pace spreads watch ends once Wait has begun; nil before.
	pace atomic.Pointer[pacer]
}

// NewDrain returns a Drain. With watchGrace > 0 watches are counted too:
// Wait gives them up to watchGrace to end, and spreads their ends over it.
// writeErr writes the Status of a request refused while draining; with
// retryAfter (--shutdown-send-retry-after) refusals are RetryAfter's 429
// instead.
func NewDrain(watchGrace time.Duration, retryAfter bool, writeErr ErrorWriter) *Drain {
	return &Drain{watchGrace: watchGrace, writeErr: writeErr, retryAfter: retryAfter}
}

// Handler counts the requests through next. A request that arrives once
// Wait has begun is refused with a 503 Status "apiserver is shutting down"
// and Retry-After: 1 (unless exempt, then served uncounted). A nil Drain
// counts nothing and returns next.
func (d *Drain) Handler(next http.Handler) http.Handler {
	if d == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.InfoFrom(r.Context())
		switch {
		case !info.LongRunning():
			if !d.requests.add() {
				d.refuse(w, r, next)
				return
			}
			defer d.requests.done()
		case info.Verb == "watch" && d.watchGrace > 0:
			if !d.watches.add() {
				d.refuse(w, r, next)
				return
			}
			defer d.watchDone()
		}
		next.ServeHTTP(w, r)
	})
}

func (d *Drain) refuse(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if exemptFromShutdown(r) {
		next.ServeHTTP(w, r)
		return
	}
	if d.retryAfter {
		refuseRetryAfter(w)
		return
	}
	w.Header().Set("Retry-After", drainRetryAfter)
	d.writeErr(w, r, apierr.ServiceUnavailable("apiserver is shutting down", 0))
}

// watchDone ends a watch's count, after its turn in the pacing when the
// server is draining: clients reconnecting elsewhere arrive spread out.
func (d *Drain) watchDone() {
	if p := d.pace.Load(); p != nil {
		p.wait()
	}
	d.watches.done()
}

// Wait stops counting new requests and returns a channel closed when the
// counted requests have finished and the counted watches have too, or
// the watch grace has passed. Call it once.
func (d *Drain) Wait() <-chan struct{} {
	out := make(chan struct{})
	requests := d.requests.close()
	var watches <-chan struct{}
	if d.watchGrace > 0 {
		open := d.watches.close()
		ctx, cancel := context.WithTimeout(context.Background(), d.watchGrace)
		d.pace.Store(newPacer(ctx, d.watchGrace, d.watches.count()))
		w := make(chan struct{})
		go func() {
			defer close(w)
			defer cancel()
			select {
			case <-open:
			case <-ctx.Done():
			}
		}()
		watches = w
	}
	go func() {
		defer close(out)
		<-requests
		if watches != nil {
			<-watches
		}
	}()
	return out
}

// closableCount counts things in flight until it is closed; then it takes
// no more, and its channel closes when the count is back at zero. The
// top bit of state is the closed flag, the rest the count, so that add and
// done stay one atomic operation on the request path.
type closableCount struct {
	state atomic.Int64
	once  sync.Once
	zero  chan struct{}
	init  sync.Once
}

const closedBit = int64(1) << 62

func (c *closableCount) ch() chan struct{} {
	c.init.Do(func() { c.zero = make(chan struct{}) })
	return c.zero
}

// add counts one more; false once closed.
func (c *closableCount) add() bool {
	for {
		v := c.state.Load()
		if v&closedBit != 0 {
			return false
		}
		if c.state.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// done counts one less.
func (c *closableCount) done() {
	if c.state.Add(-1) == closedBit {
		c.once.Do(func() { close(c.ch()) })
	}
}

// count is the number in flight.
func (c *closableCount) count() int { return int(c.state.Load() &^ closedBit) }

// close takes no more and returns the channel closed at zero.
func (c *closableCount) close() <-chan struct{} {
	if c.state.Or(closedBit)&^closedBit == 0 {
		c.once.Do(func() { close(c.ch()) })
	}
	return c.ch()
}

// pacer hands out turns at a steady rate until its context ends.
type pacer struct {
	ctx      context.Context
	interval time.Duration

	mu   sync.Mutex
	next time.Time
}

// newPacer spreads n turns over grace, at least minWatchEndRate a second.
func newPacer(ctx context.Context, grace time.Duration, n int) *pacer {
	interval := time.Second / minWatchEndRate
	if n > 0 && grace/time.Duration(n) < interval {
		interval = grace / time.Duration(n)
	}
	return &pacer{ctx: ctx, interval: interval, next: time.Now()}
}

// wait blocks until the caller's turn or the end of the grace.
func (p *pacer) wait() {
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = p.next.Add(p.interval)
	p.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.ctx.Done():
	}
}

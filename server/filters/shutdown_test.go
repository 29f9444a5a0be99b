package filters

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"platd/server/apierr"
)

// statusWriter writes err as compact JSON, as the server's writer does
// for a client that asks for JSON.
func statusWriter(w http.ResponseWriter, _ *http.Request, err error) {
	st := apierr.FromError(err).Status
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	stopping := make(chan struct{})
	h := RetryAfter(next, stopping, true)
	serve := func(target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		return w
	}
	if w := serve("/api/v1/namespaces"); w.Code != http.StatusTeapot {
		t.Fatalf("before stopping: %d", w.Code)
	}
	close(stopping)
	for _, target := range []string{"/api/v1/namespaces", "/apis", "/version", "/openapi/v2", "/api/v1/namespaces/default/configmaps?watch=1"} {
		w := serve(target)
		hdr := w.Header()
		if w.Code != http.StatusTooManyRequests || w.Body.String() != "The apiserver is shutting down, please try again later.\n" ||
			hdr.Get("Retry-After") != "5" || hdr.Get("Connection") != "close" || hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("%s: %d %v %q", target, w.Code, hdr, w.Body.String())
		}
	}
	for _, target := range []string{"/readyz", "/readyz/shutdown", "/livez?verbose", "/healthz", "/metrics"} {
		if w := serve(target); w.Code != http.StatusTeapot {
			t.Errorf("%s is exempt but got %d", target, w.Code)
		}
	}
	// Off, nothing is refused.
	w := httptest.NewRecorder()
	RetryAfter(next, stopping, false).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api", nil))
	if w.Code != http.StatusTeapot {
		t.Errorf("off: %d", w.Code)
	}
}

// TestDrain holds requests and a watch in flight, starts the drain and
// checks that it waits for them, refuses newcomers and serves the exempt.
func TestDrain(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan string, 8)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Block") != "" {
			entered <- r.URL.Path
			<-release
		}
		w.WriteHeader(http.StatusTeapot)
	})
	d := NewDrain(time.Minute, false, statusWriter)
	h := RequestInfo(d.Handler(next))
	serve := func(target string, block bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		if block {
			r.Header.Set("Block", "1")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	var wg sync.WaitGroup
	codes := make(chan int, 4)
	for _, target := range []string{"/api/v1/namespaces/a/configmaps/x", "/api/v1/namespaces/a/configmaps?watch=true"} {
		wg.Add(1)
		go func() { defer wg.Done(); codes <- serve(target, true).Code }()
		<-entered
	}
	drained := d.Wait()
	select {
	case <-drained:
		t.Fatal("drained with a request and a watch in flight")
	default:
	}
	w := serve("/api/v1/namespaces", false)
	const refused = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"apiserver is shutting down","reason":"ServiceUnavailable","code":503}` + "\n"
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || w.Body.String() != refused {
		t.Errorf("new request while draining: %d %v %s", w.Code, w.Header(), w.Body.String())
	}
	if w := serve("/api/v1/namespaces/a/configmaps?watch=true", false); w.Code != http.StatusServiceUnavailable {
		t.Errorf("new watch while draining: %d", w.Code)
	}
	if w := serve("/readyz", false); w.Code != http.StatusTeapot {
		t.Errorf("readyz while draining: %d", w.Code)
	}
	close(release)
	wg.Wait()
	for range 2 {
		if c := <-codes; c != http.StatusTeapot {
			t.Errorf("request in flight ended with %d", c)
		}
	}
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("not drained 10s after the last request ended")
	}
}

// With --shutdown-send-retry-after the drain begins just before the server
// stops taking requests: a request arriving in between, which RetryAfter
// still lets through, is refused by the drain with the same 429, without
// the Cache-Control the default headers gave it on its way in.
func TestDrainRetryAfterWindow(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Block") != "" {
			close(entered)
			<-release
		}
		w.WriteHeader(http.StatusTeapot)
	})
	stopping := make(chan struct{})
	d := NewDrain(0, true, statusWriter)
	h := RetryAfter(DefaultHeaders(RequestInfo(d.Handler(next))), stopping, true)
	blocked := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/configmaps", nil)
	blocked.Header.Set("Block", "1")
	done := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, blocked)
		done <- w.Code
	}()
	<-entered
	drained := d.Wait() // stopping is not closed yet
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/namespaces", nil))
	hdr := w.Header()
	if w.Code != http.StatusTooManyRequests || w.Body.String() != "The apiserver is shutting down, please try again later.\n" ||
		hdr.Get("Retry-After") != "5" || hdr.Get("Connection") != "close" || hdr.Get("Content-Type") != "text/plain; charset=utf-8" ||
		hdr.Get("Cache-Control") != "" {
		t.Errorf("request between the drain and the stop: %d %v %q", w.Code, hdr, w.Body.String())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if w.Code != http.StatusTeapot {
		t.Errorf("readyz between the drain and the stop: %d", w.Code)
	}
	close(release)
	if c := <-done; c != http.StatusTeapot {
		t.Errorf("request in flight ended with %d", c)
	}
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("not drained 10s after the last request ended")
	}
}

// Without watch grace watches are not waited for; a drain with nothing in
// flight is done at once; a watch that does not end is given up on after
// the grace.
func TestDrainWatchGrace(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-hold
	})
	defer close(hold)
	watch := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=true", nil)

	d := NewDrain(0, false, statusWriter)
	go RequestInfo(d.Handler(next)).ServeHTTP(httptest.NewRecorder(), watch)
	<-entered
	select {
	case <-d.Wait():
	case <-time.After(10 * time.Second):
		t.Fatal("a drain without watch grace waited for a watch")
	}

	d = NewDrain(50*time.Millisecond, false, statusWriter)
	go RequestInfo(d.Handler(next)).ServeHTTP(httptest.NewRecorder(), watch.Clone(context.Background()))
	<-entered
	began := time.Now()
	select {
	case <-d.Wait():
		if took := time.Since(began); took < 50*time.Millisecond {
			t.Errorf("gave up on the watch after %s, before the grace", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the drain waited past the watch grace")
	}

	var nilDrain *Drain
	if h := nilDrain.Handler(next); h == nil {
		t.Error("a nil Drain returned no handler")
	}
}

// The pacer hands out turns at least its interval apart and stops
// waiting when its context ends.
func TestPacer(t *testing.T) {
	t.Parallel()
	if p := newPacer(context.Background(), time.Minute, 10); p.interval != 5*time.Millisecond {
		t.Errorf("10 watches over a minute: interval %s, want the 200/s floor's 5ms", p.interval)
	}
	if p := newPacer(context.Background(), time.Second, 1000); p.interval != time.Millisecond {
		t.Errorf("1000 watches over a second: interval %s, want 1ms", p.interval)
	}
	p := newPacer(context.Background(), time.Second, 4)
	began := time.Now()
	for range 4 {
		p.wait()
	}
	if took := time.Since(began); took < 3*p.interval {
		t.Errorf("4 turns in %s, want at least %s", took, 3*p.interval)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p = newPacer(ctx, time.Hour, 1)
	p.interval = time.Hour
	p.wait()
	done := make(chan struct{})
	go func() { p.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("pacer waited past its context")
	}
}

func TestClosableCount(t *testing.T) {
	t.Parallel()
	var c closableCount
	if !c.add() || !c.add() || c.count() != 2 {
		t.Fatalf("count %d after two adds", c.count())
	}
	c.done()
	zero := c.close()
	if c.add() {
		t.Error("add after close succeeded")
	}
	select {
	case <-zero:
		t.Fatal("closed at zero with one in flight")
	default:
	}
	c.done()
	<-zero
	var empty closableCount
	<-empty.close()
}

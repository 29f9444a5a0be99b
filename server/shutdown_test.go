package server_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"platd/config"
)

// http1Client talks HTTP/1.1 to e, so that hop-by-hop headers such as
// Connection reach the test.
func (e *env) http1Client() *http.Client {
	tr := e.client.Transport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = false
	tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	tr.TLSClientConfig.NextProtos = nil
	return &http.Client{Transport: tr}
}

// get sends a GET as admin with c; err is a transport error. closes says
// the server asked to close the connection (the HTTP/1 client removes
// that Connection header).
func (e *env) get(c *http.Client, path string) (r *resp, closes bool, err error) {
	rq, err := http.NewRequest(http.MethodGet, e.srv.URL()+path, nil)
	if err != nil {
		return nil, false, err
	}
	rq.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := c.Do(rq)
	if err != nil {
		return nil, false, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, false, err
	}
	return &resp{code: res.StatusCode, header: res.Header, body: b}, res.Close, nil
}

// refused reports whether nothing listens on e's port any more.
func (e *env) refused() bool {
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(e.srv.URL(), "https://"), time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return true
}

// waitStopped waits for Serve to return nil.
func (e *env) waitStopped(t *testing.T) {
	t.Helper()
	select {
	case err := <-e.done:
		if err != nil {
			t.Errorf("platd stopped with: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("platd did not stop within 30s")
	}
	e.cancel = nil
}

// slowCreate starts creating ConfigMap name with a body sent in two
// halves: the request is in flight until finish is called. result gets
// the response code, or 0 on a transport error.
func (e *env) slowCreate(t *testing.T, name string) (finish func(), result <-chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	rq, err := http.NewRequest(http.MethodPost, e.srv.URL()+"/api/v1/namespaces/default/configmaps", pr)
	if err != nil {
		t.Fatal(err)
	}
	rq.Header.Set("Authorization", "Bearer "+adminToken)
	rq.Header.Set("Content-Type", "application/json")
	codes := make(chan int, 1)
	go func() {
		res, err := e.client.Do(rq)
		if err != nil {
			codes <- 0
			return
		}
		res.Body.Close()
		codes <- res.StatusCode
	}()
	go fmt.Fprintf(pw, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},`, name)
	return func() {
		fmt.Fprint(pw, `"data":{"written":"during shutdown"}}`)
		pw.Close()
	}, codes
}

// With --shutdown-send-retry-after the listener stays open after the
// delay: new requests get upstream's 429 with Retry-After and Connection:
// close while health probes are still answered, the request in flight
// finishes and is stored, and only then does the port close.
func TestShutdownSendRetryAfter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, func(o *config.Options) {
		o.ShutdownDelayDuration = 100 * time.Millisecond
		o.ShutdownSendRetryAfter = true
	}))
	// As the capture health/readyz-shutdown: the check passes while serving.
	if r := e.do(http.MethodGet, "/readyz/shutdown", nil); r.code != http.StatusOK || string(r.body) != "ok" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("/readyz/shutdown while serving: %d %v %q", r.code, r.header, r.body)
	}
	finish, created := e.slowCreate(t, "slow")
	eventually(t, "the slow create to be in flight", func() bool {
		r := e.do(http.MethodGet, "/metrics", nil)
		return strings.Contains(string(r.body), "apiserver_current_inflight_requests{request_kind=\"mutating\"} 1\n")
	})
	e.cancel()

	h1 := e.http1Client()
	var (
		refusal *resp
		closes  bool
	)
	eventually(t, "a 429", func() bool {
		r, c, err := e.get(h1, "/api/v1/namespaces")
		if err != nil {
			t.Fatalf("the listener closed while a request was in flight: %v", err)
		}
		if r.code == http.StatusOK {
			// Still in the delay: readyz already fails.
			if rz, _, err := e.get(h1, "/readyz"); err != nil || rz.code != http.StatusInternalServerError {
				t.Fatalf("readyz during the delay: %v %v", rz, err)
			}
			return false
		}
		refusal, closes = r, c
		return true
	})
	hdr := refusal.header
	if refusal.code != http.StatusTooManyRequests || string(refusal.body) != "The apiserver is shutting down, please try again later.\n" ||
		hdr.Get("Retry-After") != "5" || !closes || hdr.Get("Content-Type") != "text/plain; charset=utf-8" ||
		hdr.Get("X-Content-Type-Options") != "nosniff" || hdr.Get("Cache-Control") != "" {
		t.Errorf("refusal: %d %v %q, Connection: close %v", refusal.code, hdr, refusal.body, closes)
	}
	// Over HTTP/2 too, and for writes.
	if r := e.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", cm("late", nil, nil)); r.code != http.StatusTooManyRequests || r.header.Get("Retry-After") != "5" {
		t.Errorf("write while draining: %d %v %s", r.code, r.header, r.body)
	}
	// Health probes and metrics are still answered.
	for path, want := range map[string]int{"/readyz": 500, "/livez": 200, "/healthz": 200, "/metrics": 200} {
		if r, _, err := e.get(h1, path); err != nil || r.code != want {
			t.Errorf("%s while draining: %v %v, want %d", path, r, err, want)
		}
	}
	if r, _, err := e.get(h1, "/readyz/shutdown"); err != nil || string(r.body) != "internal server error: process is shutting down\n" {
		t.Errorf("/readyz/shutdown while draining: %v %v", r, err)
	}
	if e.refused() {
		t.Fatal("port closed with a request in flight")
	}

	finish()
	if code := <-created; code != http.StatusCreated {
		t.Fatalf("the create in flight ended with %d, want 201", code)
	}
	e.waitStopped(t)
	if !e.refused() {
		t.Error("port still open after the stop")
	}
	e2 := startWith(t, testOptions(t, dir))
	r := e2.do(http.MethodGet, "/api/v1/namespaces/default/configmaps/slow", nil).mustCode(t, http.StatusOK)
	if got := path(r.obj(t), "data.written"); got != "during shutdown" {
		t.Errorf("stored data %v", got)
	}
	e2.do(http.MethodGet, "/api/v1/namespaces/default/configmaps/late", nil).mustCode(t, http.StatusNotFound)
}

// Writers keep creating objects while the server shuts down: every
// create acknowledged with 201 is in the database after a restart, and
// /readyz fails before the port closes.
func TestShutdownKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, func(o *config.Options) {
		o.ShutdownDelayDuration = 300 * time.Millisecond
		o.UnsafeNoFsync = false // acknowledged means durable
	}))

	var (
		mu            sync.Mutex
		acked         []string
		ackedInDelay  int
		shuttingDown  = make(chan struct{})
		writers       sync.WaitGroup
		transportErrs int
	)
	for g := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			c := &http.Client{Transport: e.client.Transport.(*http.Transport).Clone()}
			for i := 0; ; i++ {
				name := fmt.Sprintf("w%d-%d", g, i)
				rq, _ := http.NewRequest(http.MethodPost, e.srv.URL()+"/api/v1/namespaces/default/configmaps",
					strings.NewReader(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)))
				rq.Header.Set("Authorization", "Bearer "+adminToken)
				rq.Header.Set("Content-Type", "application/json")
				res, err := c.Do(rq)
				if err != nil {
					// The port closed: this write may or may not have
					// been committed; it was not acknowledged.
					mu.Lock()
					transportErrs++
					mu.Unlock()
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusCreated {
					mu.Lock()
					acked = append(acked, name)
					select {
					case <-shuttingDown:
						ackedInDelay++
					default:
					}
					mu.Unlock()
				}
			}
		}()
	}
	eventually(t, "some writes", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 20 })
	e.cancel()

	// Probe with fresh connections: readyz must fail before the port
	// closes, and never pass again.
	probe := &http.Client{Transport: func() *http.Transport {
		tr := e.client.Transport.(*http.Transport).Clone()
		tr.DisableKeepAlives = true
		return tr
	}()}
	sawFailing := false
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, _, err := e.get(probe, "/readyz")
		if err != nil {
			// The port closed (or closed on this probe's connection).
			eventually(t, "the port to close", e.refused)
			break
		}
		if r.code == http.StatusInternalServerError && strings.Contains(string(r.body), "[-]shutdown failed: reason withheld\n") {
			if !sawFailing {
				close(shuttingDown)
			}
			sawFailing = true
		} else if sawFailing || r.code != http.StatusOK {
			t.Fatalf("readyz after it failed: %d %s", r.code, r.body)
		}
		if time.Now().After(deadline) {
			t.Fatal("port still open 20s after the stop began")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !sawFailing {
		t.Error("the port closed before /readyz failed")
	}
	writers.Wait()
	e.waitStopped(t)

	mu.Lock()
	defer mu.Unlock()
	if ackedInDelay == 0 {
		t.Error("no write was acknowledged during the shutdown delay")
	}
	e2 := startWith(t, testOptions(t, dir))
	list := e2.do(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil).mustCode(t, http.StatusOK)
	stored := map[string]bool{}
	for _, it := range list.obj(t)["items"].([]any) {
		stored[path(it.(map[string]any), "metadata.name").(string)] = true
	}
	for _, name := range acked {
		if !stored[name] {
			t.Errorf("acknowledged create of %s is lost", name)
		}
	}
	t.Logf("%d creates acknowledged (%d during the delay), %d stored, %d writers cut", len(acked), ackedInDelay, len(stored), transportErrs)
}

// Once the server stops taking requests open watches end cleanly (a
// finished stream, not a cut connection), with or without
// --shutdown-watch-termination-grace-period and --shutdown-send-retry-after,
// and the server stops after them, well within the grace.
func TestShutdownWatchTermination(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		grace      time.Duration
		retryAfter bool
	}{
		{"no grace", 0, false},
		{"grace", 5 * time.Second, false},
		{"grace with retry-after", 5 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, func(o *config.Options) {
				o.ShutdownWatchTerminationGracePeriod = tc.grace
				o.ShutdownSendRetryAfter = tc.retryAfter
			})
			e.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", cm("seen", nil, nil)).mustCode(t, http.StatusCreated)
			var watches []*bufio.Scanner
			for range 3 {
				rq, _ := http.NewRequest(http.MethodGet, e.srv.URL()+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0", nil)
				rq.Header.Set("Authorization", "Bearer "+adminToken)
				res, err := e.client.Do(rq)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				sc := bufio.NewScanner(res.Body)
				// The first event shows the watch is being served.
				if !sc.Scan() || !strings.Contains(sc.Text(), `"name":"seen"`) {
					t.Fatalf("watch: %q %v", sc.Text(), sc.Err())
				}
				watches = append(watches, sc)
			}
			began := time.Now()
			e.cancel()
			for i, sc := range watches {
				if sc.Scan() {
					t.Errorf("watch %d: unexpected event %q", i, sc.Text())
				}
				if err := sc.Err(); err != nil {
					t.Errorf("watch %d ended with %v, want a clean end of stream", i, err)
				}
			}
			e.waitStopped(t)
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("stop took %s although every watch ended at once", took)
			}
		})
	}
}

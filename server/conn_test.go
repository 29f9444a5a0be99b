package server_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// tooManyRequests is upstream's plain-text body of an in-flight refusal.
const tooManyRequests = "Too many requests, please try again later.\n"

// caPool trusts e's serving certificate.
func (e *env) caPool() *x509.CertPool {
	e.t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(e.opts.CertDir, "ca.crt"))
	if err != nil {
		e.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return pool
}

// addr is e's host:port.
func (e *env) addr() string { return strings.TrimPrefix(e.srv.URL(), "https://") }

// bigConfigMaps creates n ConfigMaps of about size bytes each in ns.
func (e *env) bigConfigMaps(ns string, n, size int) {
	e.t.Helper()
	e.do("POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}).mustCode(e.t, 201)
	v := strings.Repeat("x", size)
	for i := range n {
		e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps", cm(fmt.Sprintf("big-%d", i), map[string]string{"v": v}, nil)).mustCode(e.t, 201)
	}
}

// goroutines lists the stacks of the process's goroutines that match.
func goroutines(match func(stack string) bool) []string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if match(g) {
			found = append(found, g)
		}
	}
	return found
}

// awaitNoHandlers waits until no goroutine serves a request but watches.
func awaitNoHandlers(t *testing.T) {
	t.Helper()
	awaitGone(t, "a request", func(g string) bool {
		return strings.Contains(g, "platd/server/filters.") && !strings.Contains(g, "platd/server/rest.(*Handler).watch(")
	})
}

// awaitGone waits until no goroutine's stack matches.
func awaitGone(t *testing.T, what string, match func(stack string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := goroutines(match)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still serve %s:\n%s", len(left), what, strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitSlotFree polls a list as alice until it is served again, checking
// each refusal is upstream's 429.
func (e *env) awaitSlotFree(path string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.send(req{method: "GET", path: path, token: aliceToken})
		if r.code == 200 {
			return
		}
		if r.code != 429 || string(r.body) != tooManyRequests {
			e.t.Fatalf("while the slot is held: %d %q, want 429 %q", r.code, r.body, tooManyRequests)
		}
		if time.Now().After(deadline) {
			e.t.Fatal("the stuck reader's read slot was not freed within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStuckReaderFreesItsSlot reproduces a client that asks for a large
// list and never reads it, over HTTP/2 and HTTP/1.1, against a server with
// one read slot and a one-second request timeout: its request ends at the
// deadline, the slot is free again and no goroutine is left serving it,
// while a watch opened before it keeps delivering events. Not parallel:
// it counts the goroutines of the whole process.
func TestStuckReaderFreesItsSlot(t *testing.T) {
	const timeout = time.Second
	e := start(t, func(o *config.Options) {
		o.MaxRequestsInFlight, o.RequestTimeout = 1, timeout
		o.Conn.WriteGrace = 100 * time.Millisecond
	})
	// 8 MB: more than the kernel buffers of a loopback connection hold, so
	// an HTTP/1.1 client that reads nothing stops the server's writes too.
	const ns, n, size = "stuck", 9, 900 << 10
	w := e.watch("/api/v1/namespaces/" + ns + "/configmaps?watch=1")
	watchOpened := time.Now()
	e.bigConfigMaps(ns, n, size)
	for range n {
		w.next()
	}
	list := "/api/v1/namespaces/" + ns + "/configmaps"
	awaitNoHandlers(t)

	t.Run("HTTP/2", func(t *testing.T) {
		// The client's receive window is 64 KiB: unread, the server's
		// writes block after that much.
		stuck := &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: e.caPool()}, ForceAttemptHTTP2: true,
			HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10},
		}}
		defer stuck.CloseIdleConnections()
		r, _ := http.NewRequest("GET", e.srv.URL()+list, nil)
		r.Header.Set("Authorization", "Bearer "+aliceToken)
		res, err := stuck.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 || res.ProtoMajor != 2 {
			t.Fatalf("stuck list: %s %s, want 200 over HTTP/2", res.Proto, res.Status)
		}
		// The slot is held: alice is refused, an administrator is not.
		r2 := e.send(req{method: "GET", path: list + "?limit=1", token: aliceToken})
		if r2.code != 429 || string(r2.body) != tooManyRequests || r2.header.Get("Retry-After") != "1" {
			t.Fatalf("second read while the first is stuck: %d %q Retry-After %q, want 429 %q Retry-After 1", r2.code, r2.body, r2.header.Get("Retry-After"), tooManyRequests)
		}
		e.do("GET", list+"?limit=1", nil).mustCode(t, 200)
		e.awaitSlotFree(list + "?limit=1")
		// The stream was reset: the body ends in an error, short.
		got, err := io.ReadAll(res.Body)
		if err == nil || len(got) >= n*size {
			t.Fatalf("stuck body: %d bytes, err %v; want it cut short with an error", len(got), err)
		}
		awaitNoHandlers(t)
	})

	t.Run("HTTP/1.1", func(t *testing.T) {
		raw, err := net.Dial("tcp", e.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		// A small receive buffer: the kernel holds little for the client.
		if err := raw.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
			t.Fatal(err)
		}
		c := tls.Client(raw, &tls.Config{RootCAs: e.caPool(), ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", list, e.addr(), aliceToken)
		br := bufio.NewReaderSize(c, 1<<10)
		status, err := br.ReadString('\n')
		if err != nil || status != "HTTP/1.1 200 OK\r\n" {
			t.Fatalf("stuck list: %q, %v", status, err)
		}
		// Nothing more is read.
		e.awaitSlotFree(list + "?limit=1")
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		// The server closed the connection: no goroutine serves it. (Its
		// kernel still delivers what it had queued, as slowly as the
		// client reads: the client cannot tell the close yet.)
		awaitNoHandlers(t)
		awaitGone(t, "an HTTP/1 connection", func(g string) bool {
			return strings.Contains(g, "net/http.(*conn).serve(") && !strings.Contains(g, "http2")
		})
	})

	// The watch is long-running: its writes have no deadline.
	eventually(t, "the watch to outlive the write deadline", func() bool { return time.Since(watchOpened) > 2*timeout })
	e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps", cm("after", nil, nil)).mustCode(t, 201)
	if ev := w.next(); ev.Type != "ADDED" {
		t.Fatalf("watch event after the deadline: %+v", ev)
	}
}

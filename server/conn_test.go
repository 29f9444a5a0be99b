package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
			e.t.Fatalf("while the slot is held: %d %.200q, want 429 %q", r.code, r.body, tooManyRequests)
		}
		if time.Now().After(deadline) {
			e.t.Fatal("the stuck reader's read slot was not freed within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// connEnder ends the requests of one client connection, found by the
// client's local address, as their deadline would: set as the server's
// Conn.Context, it gives each connection a cancellable parent context.
type connEnder struct {
	mu     sync.Mutex
	cancel map[string]context.CancelFunc
}

func (c *connEnder) context(ctx context.Context, conn net.Conn) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil {
		c.cancel = map[string]context.CancelFunc{}
	}
	c.cancel[conn.RemoteAddr().String()] = cancel
	return ctx
}

// end ends the requests of the client connection whose local address is
// local.
func (c *connEnder) end(t *testing.T, local string) {
	t.Helper()
	c.mu.Lock()
	cancel := c.cancel[local]
	c.mu.Unlock()
	if cancel == nil {
		t.Fatalf("no server connection from %s", local)
	}
	cancel()
}

// stuckHTTP1Body is how many bytes a response must have for the server's
// writes to block on an HTTP/1.1 client that reads nothing: twice the
// largest send buffer of the kernel (tcp_wmem's maximum, for the
// autotuned buffers of loopback) plus a margin for the small receive
// buffer the client sets and the TLS records in flight. 0 when unknown.
func stuckHTTP1Body() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return 0
	}
	max, err := strconv.Atoi(f[2])
	if err != nil || max <= 0 {
		return 0
	}
	return 2*max + 4<<20
}

// TestStuckReaderFreesItsSlot reproduces a client that asks for a large
// list and never reads it, over HTTP/2 and HTTP/1.1, against a server with
// one read slot: while its write is blocked the slot is held (alice gets
// 429); once its request reaches its deadline the slot is free again and
// no goroutine is left serving it, while a watch opened before it keeps
// delivering events. The deadline is ended by the test through the
// connection's context, the way the request timeout ends it, so no check
// races the clock. Not parallel: it counts the goroutines of the whole
// process.
func TestStuckReaderFreesItsSlot(t *testing.T) {
	var ender connEnder
	e := start(t, func(o *config.Options) {
		o.MaxRequestsInFlight, o.RequestTimeout = 1, time.Hour
		o.Conn.Context = ender.context
	})
	// 900 KB objects, enough of them to fill the kernel's buffers of a
	// loopback connection when they are known; HTTP/2 needs only more
	// than the client's 64 KiB window.
	const ns, size = "stuck", 900 << 10
	http1Body := stuckHTTP1Body()
	n := 3
	if http1Body > 0 && http1Body <= 64<<20 {
		n = max(n, http1Body/size+1)
	}
	w := e.watch("/api/v1/namespaces/" + ns + "/configmaps?watch=1")
	e.bigConfigMaps(ns, n, size)
	for range n {
		w.next()
	}
	list := "/api/v1/namespaces/" + ns + "/configmaps"
	awaitNoHandlers(t)

	t.Run("HTTP/2", func(t *testing.T) {
		// The client's receive window is 64 KiB: unread, the server's
		// writes block after that much.
		var local atomic.Value
		stuck := &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: e.caPool()}, ForceAttemptHTTP2: true, DisableCompression: true,
			HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err == nil {
					local.Store(c.LocalAddr().String())
				}
				return c, err
			},
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
		ender.end(t, local.Load().(string))
		e.awaitSlotFree(list + "?limit=1")
		// The stream was reset: the body ends in an error, short.
		got, err := io.ReadAll(res.Body)
		if err == nil || len(got) >= n*size {
			t.Fatalf("stuck body: %d bytes, err %v; want it cut short with an error", len(got), err)
		}
		awaitNoHandlers(t)
	})

	t.Run("HTTP/1.1", func(t *testing.T) {
		if http1Body == 0 || n*size < http1Body {
			t.Skipf("the kernel's send buffer is unknown or too large (need %d bytes of body)", http1Body)
		}
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
		// Nothing more is read: the server's write blocks with the slot
		// held.
		r2 := e.send(req{method: "GET", path: list + "?limit=1", token: aliceToken})
		if r2.code != 429 || string(r2.body) != tooManyRequests {
			t.Fatalf("second read while the first is stuck: %d %.200q, want 429 %q", r2.code, r2.body, tooManyRequests)
		}
		ender.end(t, raw.LocalAddr().String())
		e.awaitSlotFree(list + "?limit=1")
		// The server closed the connection: no goroutine serves it. (Its
		// kernel still delivers what it had queued, as slowly as the
		// client reads: the client cannot tell the close yet.)
		awaitNoHandlers(t)
		awaitGone(t, "an HTTP/1 connection", func(g string) bool {
			return strings.Contains(g, "net/http.(*conn).serve(") && !strings.Contains(g, "http2")
		})
	})

	e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps", cm("after", nil, nil)).mustCode(t, 201)
	if ev := w.next(); ev.Type != "ADDED" {
		t.Fatalf("watch event after the stuck readers: %+v", ev)
	}
}

// stuckReader is an HTTP/2 client with a 64 KiB receive window that
// leaves the bodies of its responses unread: each large response it asks
// for holds its server handler, and the in-flight slot, until the
// request's deadline or until the client gives up.
type stuckReader struct {
	e      *env
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
}

func (e *env) stuckReader() *stuckReader {
	ctx, cancel := context.WithCancel(context.Background())
	s := &stuckReader{e: e, ctx: ctx, cancel: cancel, client: &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.caPool()}, ForceAttemptHTTP2: true, DisableCompression: true,
		HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10},
	}}}
	e.t.Cleanup(s.close)
	return s
}

// get sends a GET as token and returns the response with its body unread.
func (s *stuckReader) get(path, token string) *http.Response {
	s.e.t.Helper()
	r, _ := http.NewRequestWithContext(s.ctx, "GET", s.e.srv.URL()+path, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := s.client.Do(r)
	if err != nil {
		s.e.t.Fatal(err)
	}
	if res.StatusCode != 200 || res.ProtoMajor != 2 {
		s.e.t.Fatalf("stuck GET %s: %s %s, want 200 over HTTP/2", path, res.Proto, res.Status)
	}
	return res
}

// close gives up every request: the streams are reset.
func (s *stuckReader) close() {
	s.cancel()
	s.client.CloseIdleConnections()
}

// TestFullReadSlotsStillServeProbesAndAdmins reproduces one user filling
// every read slot with slow lists: the next read of hers gets upstream's
// 429, while system:masters, the health probes (anonymous too), her
// watches and her writes are still served.
func TestFullReadSlotsStillServeProbesAndAdmins(t *testing.T) {
	t.Parallel()
	const slots = 4
	// RBAC: anonymous requests are not allowed with AlwaysAllow.
	e := start(t, withRBAC, func(o *config.Options) { o.MaxRequestsInFlight, o.AnonymousAuth = slots, true })
	const ns = "fair"
	e.bigConfigMaps(ns, 4, 100<<10)
	list := "/api/v1/namespaces/" + ns + "/configmaps"
	rbac := "/apis/" + platBrand.Group("rbac.authorization") + "/v1"
	e.do("POST", rbac+"/clusterrolebindings", map[string]any{"kind": "ClusterRoleBinding", "apiVersion": platBrand.Group("rbac.authorization") + "/v1",
		"metadata": map[string]any{"name": "alice-admin"}, "roleRef": map[string]any{"apiGroup": platBrand.Group("rbac.authorization"), "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "User", "name": "alice", "apiGroup": platBrand.Group("rbac.authorization")}}}).mustCode(t, 201)
	eventually(t, "alice's binding to reach the authorizer", func() bool {
		return e.send(req{method: "GET", path: list + "?limit=1", token: aliceToken}).code == 200
	})
	stuck := e.stuckReader()
	for range slots {
		stuck.get(list, aliceToken)
	}

	// Alice's next read is refused, a resource's or not.
	for _, p := range []string{list + "?limit=1", "/version"} {
		r := e.send(req{method: "GET", path: p, token: aliceToken})
		if r.code != 429 || string(r.body) != tooManyRequests || r.header.Get("Retry-After") != "1" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("alice GET %s: %d %.200q Retry-After %q Content-Type %q; want 429 %q, 1, text/plain", p, r.code, r.body,
				r.header.Get("Retry-After"), r.header.Get("Content-Type"), tooManyRequests)
		}
	}
	// system:masters is served.
	r := e.do("GET", list+"?limit=1", nil).mustCode(t, 200)
	if items, _ := r.obj(t)["items"].([]any); len(items) != 1 || r.obj(t)["kind"] != "ConfigMapList" {
		t.Errorf("admin list: %.200s", r.body)
	}
	// So are the probes, for alice and for anonymous clients, and for
	// alice (whom RBAC lets read them) the single checks under them,
	// which upstream's "probes" flow schema matches too.
	for _, token := range []string{aliceToken, ""} {
		probes := []string{"/readyz", "/livez", "/healthz"}
		if token != "" {
			probes = append(probes, "/readyz/ping")
		}
		for _, p := range probes {
			r := e.send(req{method: "GET", path: p, token: token})
			if r.code != 200 || string(r.body) != "ok" {
				t.Errorf("GET %s (token %q): %d %.200q, want 200 ok", p, token, r.code, r.body)
			}
		}
		r := e.send(req{method: "GET", path: "/readyz?verbose", token: token})
		if r.code != 200 || !strings.Contains(string(r.body), "[+]ping ok") || !strings.HasSuffix(string(r.body), "readyz check passed\n") {
			t.Errorf("GET /readyz?verbose (token %q): %d %.200q", token, r.code, r.body)
		}
	}
	// Alice's watch holds no read slot; her write takes a mutating one.
	w := e.watch(list+"?watch=1&resourceVersion=0", "Authorization", "Bearer "+aliceToken)
	for range 4 {
		if ev := w.next(); ev.Type != "ADDED" {
			t.Fatalf("alice's watch: %+v", ev)
		}
	}
	e.send(req{method: "POST", path: list, body: cm("by-alice", nil, nil), token: aliceToken}).mustCode(t, 201)
	if ev := w.next(); ev.Type != "ADDED" || path(ev.Object, "metadata.name") != "by-alice" {
		t.Errorf("alice's watch after her write: %+v", ev)
	}

	// Once she gives up, her reads are served again.
	stuck.close()
	e.awaitSlotFree(list + "?limit=1")
}

// dialTLS opens a TLS connection to e offering only proto by ALPN.
func (e *env) dialTLS(proto string) *tls.Conn {
	e.t.Helper()
	c, err := tls.Dial("tcp", e.addr(), &tls.Config{RootCAs: e.caPool(), ServerName: "127.0.0.1", NextProtos: []string{proto}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	if got := c.ConnectionState().NegotiatedProtocol; got != proto {
		e.t.Fatalf("ALPN: %q, want %q", got, proto)
	}
	return c
}

// awaitClosed reads c until the server closes it, failing the test if it
// is still open after 10 s.
func awaitClosed(t *testing.T, what string, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the server did not close the connection within 10s", what)
	}
}

// http1 sends one HTTP/1.1 GET on c with the bearer token (none if empty)
// and reads the response.
func http1(t *testing.T, c net.Conn, br *bufio.Reader, path, token string) (*http.Response, []byte) {
	t.Helper()
	r, _ := http.NewRequest("GET", "https://"+c.RemoteAddr().String()+path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if err := r.Write(c); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(br, r)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// unauthorized is the body of a 401.
const unauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"

// TestIdleConnectionsClosed reproduces clients that hold sockets without
// using them, against a server whose idle and header timeouts are
// shortened from upstream's 90 s and 32 s: each socket is closed by the
// server, whether the client never finished the TLS handshake, never sent
// a request, or went idle after a 401 or a served request, over HTTP/1.1
// and HTTP/2.
func TestIdleConnectionsClosed(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) {
		o.Conn.Idle, o.Conn.ReadHeader = 300*time.Millisecond, 300*time.Millisecond
	})
	t.Run("silent before the handshake", func(t *testing.T) {
		t.Parallel()
		var conns []net.Conn
		for range 50 {
			c, err := net.Dial("tcp", e.addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			conns = append(conns, c)
		}
		for _, c := range conns {
			awaitClosed(t, "a client that sent nothing", c)
		}
	})
	t.Run("stopped mid-handshake", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", e.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// A handshake record announcing 512 bytes, of which 4 arrive.
		if _, err := c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc}); err != nil {
			t.Fatal(err)
		}
		awaitClosed(t, "a client that stopped mid-handshake", c)
	})
	t.Run("HTTP/1.1 silent after the handshake", func(t *testing.T) {
		t.Parallel()
		awaitClosed(t, "a client that sent no request", e.dialTLS("http/1.1"))
	})
	t.Run("HTTP/1.1 idle after 401", func(t *testing.T) {
		t.Parallel()
		c := e.dialTLS("http/1.1")
		br := bufio.NewReader(c)
		// The connection is kept alive after a 401, as upstream: a second
		// request is served on it.
		for range 2 {
			res, body := http1(t, c, br, "/api/v1/namespaces", "wrong-token")
			if res.StatusCode != 401 || string(body) != unauthorized || res.Close {
				t.Fatalf("bad token: %d %q close %v; want 401 %q on a kept connection", res.StatusCode, body, res.Close, unauthorized)
			}
		}
		awaitClosed(t, "an idle connection after a 401", c)
	})
	t.Run("HTTP/1.1 idle after a served request", func(t *testing.T) {
		t.Parallel()
		c := e.dialTLS("http/1.1")
		res, body := http1(t, c, bufio.NewReader(c), "/version", adminToken)
		if res.StatusCode != 200 || !strings.Contains(string(body), `"gitVersion"`) {
			t.Fatalf("version: %d %.200q", res.StatusCode, body)
		}
		awaitClosed(t, "an idle connection", c)
	})
	for _, tc := range []struct {
		name, token string
		code        int
	}{
		{"HTTP/2 idle after a served request", adminToken, 200},
		// Over HTTP/2 the server sends GOAWAY with the 401: the client
		// cannot keep the connection for more requests.
		{"HTTP/2 after 401", "wrong-token", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			closed := make(chan error, 1)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.caPool()}, ForceAttemptHTTP2: true}
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &watchedConn{Conn: c, closed: closed}, nil
			}
			defer tr.CloseIdleConnections()
			r, _ := http.NewRequest("GET", e.srv.URL()+"/version", nil)
			r.Header.Set("Authorization", "Bearer "+tc.token)
			res, err := (&http.Client{Transport: tr}).Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.code || res.ProtoMajor != 2 {
				t.Fatalf("%s %d %.200q, want %d over HTTP/2", res.Proto, res.StatusCode, body, tc.code)
			}
			select {
			case err := <-closed:
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the server did not close the HTTP/2 connection within 10s")
			}
		})
	}
}

// watchedConn reports the end of its connection: the first read error,
// or the client closing it. The client reads until the server closes the
// connection, and closes it itself only when the server sent GOAWAY: its
// transport has no idle timeout of its own.
type watchedConn struct {
	net.Conn
	closed chan error
	once   sync.Once
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.once.Do(func() { c.closed <- err })
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.once.Do(func() { c.closed <- net.ErrClosed })
	return c.Conn.Close()
}

// http2Settings opens an HTTP/2 connection to e and returns the server's
// first SETTINGS and its connection window increment.
func (e *env) http2Settings() (settings map[uint16]uint32, connWindow uint32) {
	e.t.Helper()
	c := e.dialTLS("h2")
	// The client preface and an empty SETTINGS frame.
	if _, err := c.Write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 0x4, 0, 0, 0, 0, 0)); err != nil {
		e.t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	settings = map[uint16]uint32{}
	for connWindow == 0 {
		var hdr [9]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			e.t.Fatal(err)
		}
		payload := make([]byte, int(hdr[0])<<16|int(hdr[1])<<8|int(hdr[2]))
		if _, err := io.ReadFull(c, payload); err != nil {
			e.t.Fatal(err)
		}
		stream := binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff
		switch typ, ack := hdr[3], hdr[4]&1 == 1; {
		case typ == 0x4 && !ack:
			for p := payload; len(p) >= 6; p = p[6:] {
				settings[binary.BigEndian.Uint16(p)] = binary.BigEndian.Uint32(p[2:])
			}
		case typ == 0x8 && stream == 0:
			connWindow = binary.BigEndian.Uint32(payload) & 0x7fffffff
		}
	}
	return settings, connWindow
}

// HTTP/2 settings identifiers.
const (
	settingMaxConcurrentStreams = 0x3
	settingInitialWindowSize    = 0x4
	settingMaxFrameSize         = 0x5
)

// TestHTTP2Limits reads what the server announces to an HTTP/2 client:
// upstream's 100 streams per connection unless
// --http2-max-streams-per-connection says otherwise, 256 KiB frames and
// stream windows, and a connection window of that times the streams.
func TestHTTP2Limits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag, want uint32
	}{{0, 100}, {7, 7}} {
		e := start(t, func(o *config.Options) { o.HTTP2MaxStreamsPerConnection = int(tc.flag) })
		settings, window := e.http2Settings()
		const frame = 256 << 10
		if settings[settingMaxConcurrentStreams] != tc.want || settings[settingInitialWindowSize] != frame || settings[settingMaxFrameSize] != frame {
			t.Errorf("--http2-max-streams-per-connection=%d: settings %v; want streams %d, window and frame %d", tc.flag, settings, tc.want, frame)
		}
		// The connection window starts at 65535 and is raised to its size.
		if want := frame*tc.want - 65535; window != want {
			t.Errorf("--http2-max-streams-per-connection=%d: connection window raised by %d, want %d", tc.flag, window, want)
		}
	}
}

// TestGoawayChance: with --goaway-chance an HTTP/2 client is sent GOAWAY
// now and then and reconnects; an HTTP/1.1 client never is.
func TestGoawayChance(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.GoawayChance = config.MaxGoawayChance })
	for _, h2 := range []bool{true, false} {
		var dials atomic.Int32
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.caPool()}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		client := &http.Client{Transport: tr}
		// One request in 50 on average: 3000 all missing is impossible.
		n := 0
		for ; n < 3000 && dials.Load() < 2; n++ {
			r, _ := http.NewRequest("GET", e.srv.URL()+"/version", nil)
			r.Header.Set("Authorization", "Bearer "+adminToken)
			res, err := client.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || res.ProtoMajor != map[bool]int{true: 2, false: 1}[h2] || !strings.Contains(string(body), `"gitVersion"`) {
				t.Fatalf("request %d: %s %d %.200q", n, res.Proto, res.StatusCode, body)
			}
			if !h2 && (res.Close || n == 300) {
				break
			}
		}
		tr.CloseIdleConnections()
		switch {
		case h2 && dials.Load() < 2:
			t.Errorf("HTTP/2: no GOAWAY in %d requests", n)
		case !h2 && dials.Load() != 1:
			t.Errorf("HTTP/1.1: %d connections for %d requests, want 1", dials.Load(), n+1)
		}
	}
}

// An HTTP/1.1 watch is served past the request timeout and its write
// grace: the connection's write deadline, set for every response, is
// cleared for long-running requests, so an event sent after it still
// reaches the client.
func TestHTTP1WatchOutlivesWriteDeadline(t *testing.T) {
	t.Parallel()
	const timeout, grace = time.Second, 100 * time.Millisecond
	e := start(t, func(o *config.Options) {
		o.RequestTimeout = timeout
		o.Conn.WriteGrace = grace
	})
	const ns = "longwatch"
	e.do("POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	c, err := tls.Dial("tcp", e.addr(), &tls.Config{RootCAs: e.caPool(), ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A guard against a hang, not a measure: the event comes long before.
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	path := "/api/v1/namespaces/" + ns + "/configmaps?watch=1"
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, e.addr(), adminToken)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Now()
	// The body is left unclosed: closing it would read the stream to its
	// end; closing c ends it.
	if res.StatusCode != 200 || res.ProtoMajor != 1 {
		t.Fatalf("watch: %s %s, want 200 over HTTP/1.1", res.Proto, res.Status)
	}
	eventually(t, "the watch to outlive the request timeout and its grace", func() bool { return time.Since(opened) > 2*(timeout+grace) })
	e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps", cm("late", nil, nil)).mustCode(t, 201)
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil {
		t.Fatalf("watch after the write deadline: %q, %v", line, err)
	}
	var ev watchEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "ADDED" || !strings.Contains(line, `"name":"late"`) {
		t.Fatalf("watch event after the write deadline: %q (%v), want ADDED late", line, err)
	}
}

//go:build linux

package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timing policy of the process tests.
const (
	// procURLTimeout bounds the wait for the "serving" line on stdout:
	// start-up is milliseconds, the rest is slack for a loaded machine.
	procURLTimeout = 20 * time.Second
	// procReadyTimeout bounds the wait for the first 200 from /readyz.
	procReadyTimeout = 20 * time.Second
	// procReadyPoll is the /readyz polling period; small because the
	// start-to-ready benchmark measures through it.
	procReadyPoll = time.Millisecond
	// procStopTimeout bounds a clean SIGTERM shutdown; the server's own
	// grace period is longer, but nothing in these tests holds a request
	// open at shutdown.
	procStopTimeout = 15 * time.Second
	// procBuildTimeout bounds the one go build of the binary.
	procBuildTimeout = 5 * time.Minute
)

// servingLine matches the line platd prints to stdout once it listens.
var servingLine = regexp.MustCompile(`serving (https://[^;\s]+)`)

// platdBuild is the binary built once per test binary.
var platdBuild struct {
	once sync.Once
	path string
	err  error
}

// platdBinary returns the path of a platd binary built from this module,
// building it on first use. Tests that need it are skipped under -short.
// The binary lives in the temporary directory under a name holding this
// test process's id; binaries of earlier runs whose process is gone are
// removed before building.
func platdBinary(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("skipping: builds and runs the platd binary")
	}
	platdBuild.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			platdBuild.err = fmt.Errorf("go tool not on PATH: %w", err)
			return
		}
		dir := filepath.Join(os.TempDir(), "platd-e2e")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			platdBuild.err = err
			return
		}
		removeStaleBinaries(dir)
		out := filepath.Join(dir, "platd-"+strconv.Itoa(os.Getpid()))
		ctx, cancel := context.WithTimeout(context.Background(), procBuildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool, "build", "-o", out, "platd")
		if msg, err := cmd.CombinedOutput(); err != nil {
			platdBuild.err = fmt.Errorf("go build: %w\n%s", err, msg)
			return
		}
		platdBuild.path = out
	})
	if platdBuild.err != nil {
		tb.Fatalf("building platd: %v", platdBuild.err)
	}
	return platdBuild.path
}

// removeStaleBinaries deletes platd-<pid> files in dir whose process no
// longer exists.
func removeStaleBinaries(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "platd-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// platdProc is one platd child process on 127.0.0.1 with a port it picked
// itself. The test that started it owns it; its cleanup kills the process if
// the test did not stop it. Methods are not safe for concurrent use except
// do, which may be called from many goroutines.
type platdProc struct {
	tb      testing.TB
	dataDir string
	cmd     *exec.Cmd
	// url is the https base URL the process printed.
	url string
	// client speaks HTTP/2 with the admin client certificate.
	client *http.Client
	// started is when the process was started.
	started time.Time
	out     *procOutput
	exited  chan struct{}
	waitErr error
}

// procOutput collects a child's stdout and stderr and reports the URL of
// the serving line once. Safe for concurrent use.
type procOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	url  chan string
	sent bool
}

// Write implements io.Writer; it never fails.
func (o *procOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if !o.sent {
		if m := servingLine.FindSubmatch(o.buf.Bytes()); m != nil {
			o.sent = true
			o.url <- string(m[1])
		}
	}
	return len(p), nil
}

func (o *procOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// startPlatd starts platd serve on dataDir with extra flags, waits until
// /readyz answers 200 to the admin certificate and returns the process.
func startPlatd(tb testing.TB, dataDir string, flags ...string) *platdProc {
	tb.Helper()
	p := launchPlatd(tb, dataDir, flags...)
	p.waitReady()
	return p
}

// launchPlatd starts the process and waits only for its serving line.
func launchPlatd(tb testing.TB, dataDir string, flags ...string) *platdProc {
	tb.Helper()
	bin := platdBinary(tb)
	args := append([]string{"serve", "--data-dir", dataDir, "--secure-port", "0", "--bind-address", "127.0.0.1"}, flags...)
	p := &platdProc{
		tb: tb, dataDir: dataDir,
		cmd:    exec.Command(bin, args...),
		out:    &procOutput{url: make(chan string, 1)},
		exited: make(chan struct{}),
	}
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	// The child dies with this test process even if cleanup never runs.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("starting platd: %v", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	tb.Cleanup(p.cleanup)
	select {
	case p.url = <-p.out.url:
	case <-p.exited:
		tb.Fatalf("platd exited before serving (%v):\n%s", p.waitErr, p.out)
	case <-time.After(procURLTimeout):
		tb.Fatalf("platd printed no serving line within %v:\n%s", procURLTimeout, p.out)
	}
	p.client = p.newClient()
	return p
}

// newClient returns an HTTP/2 client trusting the data directory's CA and
// presenting the admin client certificate. The caller closes its idle
// connections when done.
func (p *platdProc) newClient() *http.Client {
	p.tb.Helper()
	pki := filepath.Join(p.dataDir, "pki")
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		p.tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		p.tb.Fatal("ca.crt holds no certificate")
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		p.tb.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
		ForceAttemptHTTP2: true,
	}}
}

// waitReady polls /readyz until it answers 200 and returns the time from
// process start to that answer.
func (p *platdProc) waitReady() time.Duration {
	p.tb.Helper()
	deadline := time.Now().Add(procReadyTimeout)
	var last string
	for time.Now().Before(deadline) {
		code, body, err := p.do(http.MethodGet, "/readyz", nil)
		if err == nil && code == http.StatusOK {
			return time.Since(p.started)
		}
		last = fmt.Sprintf("%d %s %v", code, body, err)
		select {
		case <-p.exited:
			p.tb.Fatalf("platd exited before ready (%v):\n%s", p.waitErr, p.out)
		case <-time.After(procReadyPoll):
		}
	}
	p.tb.Fatalf("platd not ready within %v (last: %s):\n%s", procReadyTimeout, last, p.out)
	return 0
}

// do sends one request with the admin certificate and returns the status
// code and the whole body. body may be nil. header holds name, value pairs.
// Safe for concurrent use.
func (p *platdProc) do(method, path string, body []byte, header ...string) (int, []byte, error) {
	return doWith(p.client, p.url, method, path, body, header...)
}

// doWith sends one request through c to base+path.
func doWith(c *http.Client, base, method, path string, body []byte, header ...string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// pid is the child's process id.
func (p *platdProc) pid() int { return p.cmd.Process.Pid }

// terminate sends SIGTERM and fails the test unless the process exits with
// code 0 within procStopTimeout.
func (p *platdProc) terminate() {
	p.tb.Helper()
	p.client.CloseIdleConnections()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.tb.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(procStopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.tb.Fatalf("platd did not exit within %v of SIGTERM:\n%s", procStopTimeout, p.out)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.tb.Fatalf("platd exited with code %d after SIGTERM (%v):\n%s", code, p.waitErr, p.out)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *platdProc) kill() {
	p.tb.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.tb.Fatalf("SIGKILL: %v", err)
	}
	<-p.exited
	p.client.CloseIdleConnections()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		p.tb.Fatalf("platd was not killed by SIGKILL: %v", p.cmd.ProcessState)
	}
}

// cleanup kills the process if it still runs and releases the client.
func (p *platdProc) cleanup() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	if p.client != nil {
		p.client.CloseIdleConnections()
	}
}

// TestProcessLifecycle starts the real binary, checks it serves with the
// admin certificate and forbids requests without one all but health, and
// stops it cleanly.
func TestProcessLifecycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startPlatd(t, dir)

	code, body, err := p.do(http.MethodGet, "/readyz?verbose", nil)
	if err != nil || code != http.StatusOK || !strings.Contains(string(body), "readyz check passed") {
		t.Fatalf("readyz?verbose: %d %v %s", code, err, body)
	}
	roots := p.client.Transport.(*http.Transport).TLSClientConfig.RootCAs
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	defer anon.CloseIdleConnections()
	// Anonymous requests are on by default and the default policy lets
	// them reach health and version only.
	if code, body, err := doWith(anon, p.url, http.MethodGet, "/readyz", nil); err != nil || code != http.StatusOK || string(body) != "ok" {
		t.Fatalf("readyz without credentials: %d %v %s, want 200 ok", code, err, body)
	}
	if code, body, err := doWith(anon, p.url, http.MethodGet, "/api/v1/namespaces", nil); err != nil || code != http.StatusForbidden ||
		!strings.Contains(string(body), `"message":"namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"`) {
		t.Fatalf("namespaces without credentials: %d %v %s, want 403", code, err, body)
	}

	res, err := p.client.Get(p.url + "/version")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2", res.Proto)
	}

	// A namespace created before a clean stop is there after a restart.
	ns := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"survivor"}}`)
	if code, body, err := p.do(http.MethodPost, "/api/v1/namespaces", ns); err != nil || code != http.StatusCreated {
		t.Fatalf("create namespace: %d %v %s", code, err, body)
	}
	p.terminate()
	for _, f := range []string{"admin.kubeconfig", "pki/ca.crt", "pki/admin.crt", "pki/admin.key"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("data directory lacks %s: %v", f, err)
		}
	}

	p2 := startPlatd(t, dir)
	code, body, err = p2.do(http.MethodGet, "/api/v1/namespaces/survivor", nil)
	if err != nil || code != http.StatusOK || !strings.Contains(string(body), `"name":"survivor"`) {
		t.Fatalf("namespace after restart: %d %v %s", code, err, body)
	}
	p2.terminate()
}

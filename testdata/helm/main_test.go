package helm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Timing policy of the Helm tests.
const (
	// buildTimeout bounds the one go build of platd.
	buildTimeout = 5 * time.Minute
	// startTimeout bounds the wait for the serving line and for readyz.
	startTimeout = 30 * time.Second
	// stopTimeout bounds a clean SIGTERM shutdown before the process is
	// killed.
	stopTimeout = 15 * time.Second
	// waitTimeout bounds every poll of a test for a state to appear, and
	// every Helm action that waits (hooks, CRD establishment).
	waitTimeout = 30 * time.Second
)

// traceEnv, when set, logs every request Helm sends and every answer
// platd gives with status 400 or above, to write down a deviation.
const traceEnv = "PLATD_HELM_TRACE"

// servingLine matches the line platd prints to stdout once it listens.
var servingLine = regexp.MustCompile(`serving (https://[^;\s]+); use it with: export KUBECONFIG=([^;\s]+)`)

// cluster is the platd process every test of the package talks to.
var cluster struct {
	config     *rest.Config
	kubeconfig string
	// cacheDir holds the discovery caches of Helm's clients.
	cacheDir string
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helm:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// run builds platd, serves it for the tests and stops it afterwards.
func run(m *testing.M) (int, error) {
	tmp, err := os.MkdirTemp("", "platd-helm-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "platd")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = root
	out, err := build.CombinedOutput()
	cancel()
	if err != nil {
		return 0, fmt.Errorf("building platd: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "serve", "--brand", "kubernetes", "--secure-port", "0",
		"--data-dir", filepath.Join(tmp, "data"), "--unsafe-no-fsync")
	// The server's log is shown only when a test fails.
	logFile, err := os.Create(filepath.Join(tmp, "platd.log"))
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting platd: %w", err)
	}
	defer stop(cmd)

	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case m := <-found:
		cluster.kubeconfig = m[2]
	case <-time.After(startTimeout):
		return 0, fmt.Errorf("platd printed no serving line within %s", startTimeout)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", cluster.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cluster.config = cfg
	cluster.cacheDir = filepath.Join(tmp, "cache")
	if err := waitReady(cfg); err != nil {
		return 0, err
	}
	code := m.Run()
	if code != 0 {
		if b, err := os.ReadFile(logFile.Name()); err == nil {
			fmt.Fprintf(os.Stderr, "platd log:\n%s", b)
		}
	}
	return code, nil
}

// waitReady polls /readyz until it answers ok.
func waitReady(cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(startTimeout)
	for {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("platd not ready within %s: %v", startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends platd with SIGTERM, killing it if it does not stop in time.
func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
	}
}

// clientset returns a typed client of the cluster, to check what Helm
// stored.
func clientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cluster.config))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// dynamicClient returns a dynamic client of the cluster, for the chart's
// custom resources.
func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(rest.CopyConfig(cluster.config))
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// helmConfig returns a Helm action configuration for namespace, set up as
// the helm command sets it up from --kubeconfig and --namespace, with the
// release records in Secrets (Helm's default driver).
func helmConfig(t *testing.T, namespace string) *action.Configuration {
	t.Helper()
	return helmConfigDriver(t, namespace, "secret")
}

// helmConfigDriver is helmConfig with the release records kept by driver
// (HELM_DRIVER).
func helmConfigDriver(t *testing.T, namespace, driver string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &cluster.kubeconfig
	flags.Namespace = &namespace
	flags.CacheDir = &cluster.cacheDir
	flags.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		cfg.QPS, cfg.Burst = 1000, 1000
		if os.Getenv(traceEnv) != "" {
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &tracer{t: t, next: rt} })
		}
		return cfg
	}
	cfg := new(action.Configuration)
	logf := func(format string, v ...interface{}) { t.Logf("helm: "+format, v...) }
	if err := cfg.Init(flags, namespace, driver, logf); err != nil {
		t.Fatalf("initialising Helm: %v", err)
	}
	return cfg
}

// tracer logs the requests of one test and platd's failing answers.
type tracer struct {
	t    *testing.T
	next http.RoundTripper
	mu   sync.Mutex
}

func (tr *tracer) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(b)
			b.Close()
		}
	}
	resp, err := tr.next.RoundTrip(req)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if err != nil {
		tr.t.Logf("trace: %s %s (%s): %v", req.Method, req.URL, req.Header.Get("Content-Type"), err)
		return resp, err
	}
	tr.t.Logf("trace: %s %s (%s) -> %d", req.Method, req.URL, req.Header.Get("Content-Type"), resp.StatusCode)
	for _, w := range resp.Header.Values("Warning") {
		tr.t.Logf("trace: warning: %s", w)
	}
	if resp.StatusCode >= 400 {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		tr.t.Logf("trace: request body: %s\ntrace: response body: %s", reqBody, body)
	}
	return resp, nil
}

// loadChart loads the chart of testdata/shop.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(filepath.Join("testdata", "shop"))
	if err != nil {
		t.Fatalf("loading chart: %v", err)
	}
	return ch
}

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	name := nsName(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := clientset(t).CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteNamespace(t, name) })
	return name
}

// nsName derives a namespace name unique to the test.
func nsName(t *testing.T) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	return strings.Trim(name, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
}

func deleteNamespace(t *testing.T, name string) {
	_ = clientset(t).CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
}

// eventually polls cond until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

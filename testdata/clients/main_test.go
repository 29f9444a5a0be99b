package clients

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Timing policy of the client tests.
const (
	// buildTimeout bounds the one go build of platd.
	buildTimeout = 5 * time.Minute
	// startTimeout bounds the wait for the serving line and for readyz.
	startTimeout = 30 * time.Second
	// stopTimeout bounds a clean SIGTERM shutdown before the process is
	// killed.
	stopTimeout = 15 * time.Second
	// waitTimeout bounds every poll of a test for a state to appear.
	waitTimeout = 30 * time.Second
)

// protobufType is the media type of the protobuf envelope in the
// kubernetes brand the server runs with.
const protobufType = "application/vnd.kubernetes.protobuf"

// servingLine matches the line platd prints to stdout once it listens.
var servingLine = regexp.MustCompile(`serving (https://[^;\s]+); use it with: export KUBECONFIG=([^;\s]+)`)

// cluster is the platd process every test of the package talks to.
var cluster struct {
	config     *rest.Config
	kubeconfig string
	// bin is the platd binary the tests built.
	bin string
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clients:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// run builds platd, serves it for the tests and stops it afterwards.
func run(m *testing.M) (int, error) {
	tmp, err := os.MkdirTemp("", "platd-clients-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "platd")
	cluster.bin = bin
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

	// CBOR (an alpha gate) is served too, for the CBOR client tests; the
	// JSON and protobuf clients see no difference.
	cmd := exec.Command(bin, "serve", "--brand", "kubernetes", "--secure-port", "0",
		"--data-dir", filepath.Join(tmp, "data"), "--unsafe-no-fsync", "--feature-gates", "CBORServingAndStorage=true")
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

// config returns a copy of the cluster's client configuration.
func config(t *testing.T) *rest.Config {
	t.Helper()
	return rest.CopyConfig(cluster.config)
}

// jsonConfig returns a configuration whose typed clients speak JSON
// (client-go's typed clients prefer protobuf when told nothing).
func jsonConfig(t *testing.T) *rest.Config {
	cfg := config(t)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	return cfg
}

// protobufConfig returns a configuration whose typed clients speak
// protobuf.
func protobufConfig(t *testing.T) *rest.Config {
	cfg := config(t)
	cfg.ContentType = protobufType
	cfg.AcceptContentTypes = protobufType + ",application/json"
	return cfg
}

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// requireServed skips the test unless discovery lists resource in
// groupVersion, so that tests of types still to come light up when they
// are served.
func requireServed(t *testing.T, groupVersion, resource string) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion(groupVersion)
	if err == nil {
		for _, r := range list.APIResources {
			if r.Name == resource {
				return
			}
		}
	}
	t.Skipf("%s %s is not served yet", groupVersion, resource)
}

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
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

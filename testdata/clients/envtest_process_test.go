package clients

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestEnvtestStartsPlatdAsKubeAPIServer: controller-runtime's envtest,
// given a binary assets directory whose kube-apiserver is platd and whose
// etcd is etcd, starts both with its own command line (its serving pair
// and client CA in the cert directory, --etcd-servers, ServiceAccount
// admission off, --allow-privileged), installs the fixture CRD, and a
// controller-runtime client stores and reads a ConfigMap and a custom
// resource; envtest stops both cleanly, and platd leaves nothing in the
// directory it was started from.
func TestEnvtestStartsPlatdAsKubeAPIServer(t *testing.T) {
	assets := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(assets, "etcd"), ".")
	build.Dir = "etcd"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building etcd: %v\n%s", err, out)
	}
	if err := os.Symlink(cluster.bin, filepath.Join(assets, "kube-apiserver")); err != nil {
		t.Fatal(err)
	}
	// envtest's command line has no brand: the one that unmodified
	// clients expect is chosen through platd's environment.
	t.Setenv("PLATD_BRAND", "kubernetes")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}

	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join("testdata", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = env.Stop()
		}
	})
	if len(env.CRDs) != 1 || env.CRDs[0].Name != "widgets.clients.example.com" {
		t.Fatalf("envtest installed %d CRDs: %v", len(env.CRDs), env.CRDs)
	}
	c, err := client.New(cfg, client.Options{Scheme: widgetScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "envtest"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "envtest"}, Data: map[string]string{"mode": "test"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatalf("creating a ConfigMap: %v", err)
	}
	// Without ServiceAccount admission (envtest turns it off, and runs no
	// controllers) a pod needs no account.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "envtest"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatalf("creating a pod: %v", err)
	}
	if len(pod.Spec.Volumes) != 0 {
		t.Errorf("pod volumes %v, want none without ServiceAccount admission", pod.Spec.Volumes)
	}
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "envtest"}, Spec: WidgetSpec{Size: 3}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatalf("creating a widget: %v", err)
	}
	var gotCM corev1.ConfigMap
	if err := c.Get(ctx, types.NamespacedName{Namespace: "envtest", Name: "settings"}, &gotCM); err != nil || gotCM.Data["mode"] != "test" {
		t.Errorf("ConfigMap read back: %v %v", gotCM.Data, err)
	}
	var got Widget
	if err := c.Get(ctx, types.NamespacedName{Namespace: "envtest", Name: "w1"}, &got); err != nil || got.Spec.Size != 3 || got.Spec.Color != "grey" || got.UID == "" {
		t.Errorf("widget read back: %+v %v", got.Spec, err)
	}

	stopped = true
	if err := env.Stop(); err != nil {
		t.Errorf("envtest stop: %v", err)
	}
	after, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		var names []string
		for _, e := range after {
			names = append(names, e.Name())
		}
		t.Errorf("the working directory changed: %v", names)
	}
}

package clients

import (
	"context"
	"mime"
	"net/http"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// encodings are the two wire forms typed clients speak, with the media
// type the server must answer in.
var encodings = []struct {
	name, mediaType string
	config          func(*testing.T) *rest.Config
}{
	{"json", "application/json", jsonConfig},
	{"protobuf", protobufType, protobufConfig},
}

// answeredIn makes cfg's client record the media types of the answers,
// and checks at the end of the test that every answer came in want.
func answeredIn(t *testing.T, cfg *rest.Config, want string) *rest.Config {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			res, err := rt.RoundTrip(r)
			if err == nil {
				mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
				mu.Lock()
				seen[mt]++
				mu.Unlock()
			}
			return res, err
		})
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 1 || seen[want] == 0 {
			t.Errorf("answers came in %v, want only %s", seen, want)
		}
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTypedConfigMaps(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			cms := cs.CoreV1().ConfigMaps(ns)
			cm, err := cms.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{"app": "web"}},
				Data:       map[string]string{"mode": "fast"},
				BinaryData: map[string][]byte{"blob": {0, 1, 2}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if cm.UID == "" || cm.ResourceVersion == "" || cm.Data["mode"] != "fast" || string(cm.BinaryData["blob"]) != "\x00\x01\x02" {
				t.Fatalf("created %+v", cm)
			}
			cm.Data["mode"] = "slow"
			updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if updated.ResourceVersion == cm.ResourceVersion || updated.Data["mode"] != "slow" {
				t.Errorf("updated %+v", updated)
			}
			// A stale resourceVersion is a conflict.
			if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("stale update: %v, want a conflict", err)
			}
			list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(list.Items) != 1 || list.Items[0].Name != "settings" || list.ResourceVersion == "" {
				t.Errorf("list %+v", list)
			}
			got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
			if err != nil || got.Data["mode"] != "slow" {
				t.Errorf("get: %v %+v", err, got)
			}
			if err := cms.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := cms.Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get after delete: %v, want not found", err)
			}
		})
	}
}

func TestTypedPods(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			pod, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("web"), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			c := pod.Spec.Containers[0]
			if c.TerminationMessagePath != "/dev/termination-log" || c.ImagePullPolicy != corev1.PullIfNotPresent || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
				t.Errorf("pod defaults not stored: %+v", pod.Spec)
			}
			if pod.Status.Phase != corev1.PodPending {
				t.Errorf("phase %q", pod.Status.Phase)
			}
			pod.Status.Phase = corev1.PodRunning
			pod.Status.PodIP = "10.0.0.7"
			pod, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update status: %v", err)
			}
			if pod.Status.Phase != corev1.PodRunning {
				t.Errorf("status not written: %+v", pod.Status)
			}
			list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
			if err != nil || len(list.Items) != 1 {
				t.Errorf("field-selected list: %v %d", err, len(list.Items))
			}
		})
	}
}

func TestTypedLeases(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			holder, duration := "me", int32(15)
			now := metav1.NewMicroTime(metav1.Now().Time)
			lease, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "lock"},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &now},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.Time.Truncate(1000).Equal(now.Time.Truncate(1000)) {
				t.Errorf("renewTime %v, want %v", lease.Spec.RenewTime, now)
			}
			other := "you"
			lease.Spec.HolderIdentity = &other
			lease, err = cs.CoordinationV1().Leases(ns).Update(ctx, lease, metav1.UpdateOptions{})
			if err != nil || *lease.Spec.HolderIdentity != "you" {
				t.Errorf("update: %v %+v", err, lease)
			}
		})
	}
}

func TestTypedDeployments(t *testing.T) {
	requireServed(t, "apps/v1", "deployments")
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, enc.config(t))
			ns := namespace(t, cs)
			d, err := cs.AppsV1().Deployments(ns).Create(context.Background(), testDeployment("web"), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
				t.Errorf("deployment defaults not stored: %+v", d.Spec)
			}
			scale, err := cs.AppsV1().Deployments(ns).GetScale(context.Background(), "web", metav1.GetOptions{})
			if err != nil || scale.Spec.Replicas != 1 {
				t.Errorf("scale: %v %+v", err, scale)
			}
		})
	}
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
}

func testDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
}

var _ kubernetes.Interface = (*kubernetes.Clientset)(nil)

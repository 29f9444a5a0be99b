package clients

import (
	"context"
	"mime"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
)

// TestCBORClient drives client-go 1.32's own CBOR support (the
// ClientsAllowCBOR and ClientsPreferCBOR client gates) against platd:
// typed create, get, list, update, watch, apply and a Status error, each
// answered in CBOR and read as the JSON client reads the same object.
func TestCBORClient(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.ClientsAllowCBOR, true)
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.ClientsPreferCBOR, true)
	ctx := context.Background()

	cfg := config(t)
	cfg.ContentType, cfg.AcceptContentTypes = "application/cbor", "application/cbor"
	var mu sync.Mutex
	seen := map[string]int{}
	sent := map[string]int{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			res, err := rt.RoundTrip(r)
			if err == nil {
				mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
				ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
				mu.Lock()
				seen[mt]++
				if ct != "" {
					sent[ct]++
				}
				mu.Unlock()
			}
			return res, err
		})
	})
	cs := clientset(t, cfg)
	js := clientset(t, jsonConfig(t))
	ns := "cbor-client"
	if _, err := js.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)

	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"k": "v", "u": "ünï"},
		BinaryData: map[string][]byte{"b": {0, 1, 2, 255}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	viaJSON, err := js.CoreV1().ConfigMaps(ns).Get(ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(created, viaJSON) {
		t.Errorf("created (CBOR) %+v\nread (JSON) %+v", created, viaJSON)
	}
	got, err := cms.Get(ctx, "c1", metav1.GetOptions{})
	if err != nil || !reflect.DeepEqual(got, viaJSON) {
		t.Errorf("get (CBOR) %+v %v\nget (JSON) %+v", got, err, viaJSON)
	}
	got.Data["k"] = "w"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "w" {
		t.Fatalf("update: %v %v", updated, err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=c1"})
	if err != nil || len(list.Items) != 1 || !reflect.DeepEqual(list.Items[0], *updated) {
		t.Errorf("list: %+v %v", list, err)
	}
	jsonList, err := js.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if all, err2 := cms.List(ctx, metav1.ListOptions{}); err != nil || err2 != nil || !reflect.DeepEqual(all, jsonList) {
		t.Errorf("list (CBOR) %+v %v\nlist (JSON) %+v %v", all, err2, jsonList, err)
	}
	applied, err := cms.Apply(ctx, corev1ac.ConfigMap("a1", ns).WithData(map[string]string{"x": "y"}), metav1.ApplyOptions{FieldManager: "cbor-client"})
	if err != nil || applied.Data["x"] != "y" || len(applied.ManagedFields) != 1 || applied.ManagedFields[0].Manager != "cbor-client" {
		t.Errorf("apply: %+v %v", applied, err)
	}
	_, err = cms.Get(ctx, "nope", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "nope" not found` {
		t.Errorf("not found: %v", err)
	}

	var events []watch.EventType
	timeout := time.After(waitTimeout)
	for len(events) < 3 {
		select {
		case ev := <-w.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				t.Fatalf("event %s object %T", ev.Type, ev.Object)
			}
			if cm.Name != "c1" && cm.Name != "a1" {
				continue // the namespace's root CA bundle
			}
			if ev.Type == watch.Added && cm.Name == "c1" && !reflect.DeepEqual(cm.BinaryData["b"], []byte{0, 1, 2, 255}) {
				t.Errorf("watched binaryData %v", cm.BinaryData)
			}
			events = append(events, ev.Type)
		case <-timeout:
			t.Fatalf("events so far %v", events)
		}
	}
	if !reflect.DeepEqual(events, []watch.EventType{watch.Added, watch.Modified, watch.Added}) {
		t.Errorf("events %v", events)
	}

	mu.Lock()
	defer mu.Unlock()
	if seen["application/cbor"] == 0 || seen["application/cbor-seq"] != 1 || seen["application/json"] != 0 {
		t.Errorf("answers came in %v", seen)
	}
	if sent["application/cbor"] != 2 || sent["application/apply-patch+cbor"] != 1 || len(sent) != 2 {
		t.Errorf("requests were sent in %v", sent)
	}
}

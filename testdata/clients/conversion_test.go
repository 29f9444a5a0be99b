package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	webhookconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// The group versions of the CRD in testdata/conversion: v1 is the hub
// and the storage version, v2 a spoke converted through it.
var (
	backendV1 = schema.GroupVersion{Group: "conversion.clients.example.com", Version: "v1"}
	backendV2 = schema.GroupVersion{Group: "conversion.clients.example.com", Version: "v2"}
)

// BackendV1 is the hub version of Backend: the address is one string.
type BackendV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BackendV1Spec   `json:"spec,omitempty"`
	Status            BackendV1Status `json:"status,omitempty"`
}

type BackendV1Spec struct {
	HostPort string `json:"hostPort"`
	Weight   int64  `json:"weight,omitempty"`
}

type BackendV1Status struct {
	// Healthy is "True", "False" or empty.
	Healthy string `json:"healthy,omitempty"`
}

// Hub marks v1 as the version every other version converts through.
func (*BackendV1) Hub() {}

func (b *BackendV1) DeepCopyObject() runtime.Object {
	c := *b
	b.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

type BackendV1List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackendV1 `json:"items"`
}

func (l *BackendV1List) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]BackendV1, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*BackendV1)
	}
	return &c
}

// BackendV2 is a spoke version of Backend: the address is split into
// host and port.
type BackendV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BackendV2Spec   `json:"spec,omitempty"`
	Status            BackendV2Status `json:"status,omitempty"`
}

type BackendV2Spec struct {
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Weight int64  `json:"weight,omitempty"`
}

type BackendV2Status struct {
	Healthy *bool `json:"healthy,omitempty"`
}

func (b *BackendV2) DeepCopyObject() runtime.Object {
	c := *b
	b.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	if b.Status.Healthy != nil {
		c.Status.Healthy = ptr(*b.Status.Healthy)
	}
	return &c
}

// ConvertTo joins host and port into the hub's hostPort.
func (b *BackendV2) ConvertTo(dst conversion.Hub) error {
	hub, ok := dst.(*BackendV1)
	if !ok {
		return fmt.Errorf("unexpected hub %T", dst)
	}
	hub.ObjectMeta = *b.ObjectMeta.DeepCopy()
	hub.Spec = BackendV1Spec{
		HostPort: net.JoinHostPort(b.Spec.Host, strconv.Itoa(int(b.Spec.Port))),
		Weight:   b.Spec.Weight,
	}
	hub.Status = BackendV1Status{}
	switch {
	case b.Status.Healthy == nil:
	case *b.Status.Healthy:
		hub.Status.Healthy = "True"
	default:
		hub.Status.Healthy = "False"
	}
	return nil
}

// ConvertFrom splits the hub's hostPort into host and port.
func (b *BackendV2) ConvertFrom(src conversion.Hub) error {
	hub, ok := src.(*BackendV1)
	if !ok {
		return fmt.Errorf("unexpected hub %T", src)
	}
	host, port, err := net.SplitHostPort(hub.Spec.HostPort)
	if err != nil {
		return err
	}
	p, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		return fmt.Errorf("port of %q: %w", hub.Spec.HostPort, err)
	}
	b.ObjectMeta = *hub.ObjectMeta.DeepCopy()
	b.Spec = BackendV2Spec{Host: host, Port: int32(p), Weight: hub.Spec.Weight}
	b.Status = BackendV2Status{}
	if hub.Status.Healthy != "" {
		healthy, err := strconv.ParseBool(hub.Status.Healthy)
		if err != nil {
			return fmt.Errorf("status.healthy %q: %w", hub.Status.Healthy, err)
		}
		b.Status.Healthy = &healthy
	}
	return nil
}

type BackendV2List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackendV2 `json:"items"`
}

func (l *BackendV2List) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]BackendV2, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*BackendV2)
	}
	return &c
}

// backendScheme knows the built-in types and both versions of Backend,
// which makes Backend convertible to controller-runtime.
func backendScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypeWithName(backendV1.WithKind("Backend"), &BackendV1{})
	s.AddKnownTypeWithName(backendV1.WithKind("BackendList"), &BackendV1List{})
	s.AddKnownTypeWithName(backendV2.WithKind("Backend"), &BackendV2{})
	s.AddKnownTypeWithName(backendV2.WithKind("BackendList"), &BackendV2List{})
	metav1.AddToGroupVersion(s, backendV1)
	metav1.AddToGroupVersion(s, backendV2)
	return s
}

// reviewCounter passes ConversionReviews on to a handler and counts them
// by the version they ask for.
type reviewCounter struct {
	next http.Handler
	mu   sync.Mutex
	// desired counts the reviews by their desiredAPIVersion, reviews by
	// their own apiVersion.
	desired, reviews map[string]int
}

func (rc *reviewCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review struct {
		APIVersion string `json:"apiVersion"`
		Request    struct {
			DesiredAPIVersion string `json:"desiredAPIVersion"`
		} `json:"request"`
	}
	_ = json.Unmarshal(body, &review)
	rc.mu.Lock()
	rc.desired[review.Request.DesiredAPIVersion]++
	rc.reviews[review.APIVersion]++
	rc.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	rc.next.ServeHTTP(w, r)
}

// counts returns copies of the counts so far.
func (rc *reviewCounter) counts() (desired, reviews map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps.Clone(rc.desired), maps.Clone(rc.reviews)
}

// TestEnvtestConversionWebhook is a kubebuilder project's envtest suite
// for a CRD with a conversion webhook: envtest installs the CRD with its
// clientConfig pointed at a local webhook server that converts with
// controller-runtime's handler, and typed clients and a cache read and
// write the resource in either version, each seeing its own shape.
func TestEnvtestConversionWebhook(t *testing.T) {
	scheme := backendScheme(t)
	env := &envtest.Environment{
		UseExistingCluster: ptr(true),
		Config:             config(t),
		Scheme:             scheme,
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join("testdata", "conversion")},
			ErrorIfPathMissing: true,
			CleanUpAfterUse:    true,
		},
		WebhookInstallOptions: envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1"},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest start: %v", err)
	}
	crdName := "backends.conversion.clients.example.com"
	// stopServer stops the webhook server once it runs.
	stopServer := func() {}
	// The CRD goes first, and with it platd's last conversions; then the
	// webhook server stops.
	t.Cleanup(func() {
		defer stopServer()
		if err := env.Stop(); err != nil {
			t.Errorf("envtest stop: %v", err)
			return
		}
		eventually(t, "the CRD to go", func() bool {
			_, err := crdClient(t).Get(context.Background(), crdName, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	})
	if len(env.CRDs) != 1 || env.CRDs[0].Name != crdName {
		t.Fatalf("envtest installed %d CRDs: %v", len(env.CRDs), env.CRDs)
	}
	// envtest points the conversion at its local server with its CA.
	installed, err := crdClient(t).Get(context.Background(), crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wo := env.WebhookInstallOptions
	wantURL := fmt.Sprintf("https://%s/convert", net.JoinHostPort(wo.LocalServingHost, strconv.Itoa(wo.LocalServingPort)))
	if cv := installed.Spec.Conversion; cv == nil || cv.Strategy != apiextensionsv1.WebhookConverter || cv.Webhook == nil || cv.Webhook.ClientConfig == nil ||
		cv.Webhook.ClientConfig.URL == nil || *cv.Webhook.ClientConfig.URL != wantURL || cv.Webhook.ClientConfig.Service != nil ||
		!bytes.Equal(cv.Webhook.ClientConfig.CABundle, wo.LocalServingCAData) {
		t.Fatalf("installed conversion %+v, want url %s and envtest's CA", cv, wantURL)
	}
	if !slices.Equal(installed.Status.StoredVersions, []string{"v1"}) || !conditionTrue(installed, apiextensionsv1.Established) {
		t.Errorf("installed CRD status %+v", installed.Status)
	}

	ctx, cancel := context.WithCancel(context.Background())
	counter := &reviewCounter{next: webhookconversion.NewWebhookHandler(scheme), desired: map[string]int{}, reviews: map[string]int{}}
	server := webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir})
	server.Register("/convert", counter)
	served := make(chan error, 1)
	go func() { served <- server.Start(ctx) }()
	stopServer = func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("webhook server stopped with %v", err)
		}
	}
	started := server.StartedChecker()
	eventually(t, "the webhook server to serve", func() bool { return started(nil) == nil })

	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	// Created through v2, the object is stored as v1 and answered as v2.
	b1 := &BackendV2{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: ns, Labels: map[string]string{"tier": "db"}},
		Spec: BackendV2Spec{Host: "db.example", Port: 5432, Weight: 3}}
	if err := c.Create(ctx, b1); err != nil {
		t.Fatalf("creating b1 through v2: %v", err)
	}
	if b1.Spec != (BackendV2Spec{Host: "db.example", Port: 5432, Weight: 3}) || b1.UID == "" || b1.Labels["tier"] != "db" || b1.Generation != 1 {
		t.Errorf("created through v2: spec %+v, metadata %+v", b1.Spec, b1.ObjectMeta)
	}
	key := types.NamespacedName{Namespace: ns, Name: "b1"}
	var hub BackendV1
	if err := c.Get(ctx, key, &hub); err != nil {
		t.Fatalf("reading b1 through v1: %v", err)
	}
	if hub.Spec != (BackendV1Spec{HostPort: "db.example:5432", Weight: 3}) || hub.UID != b1.UID || hub.ResourceVersion != b1.ResourceVersion || hub.Labels["tier"] != "db" {
		t.Errorf("b1 through v1: spec %+v, metadata %+v", hub.Spec, hub.ObjectMeta)
	}
	var spoke BackendV2
	if err := c.Get(ctx, key, &spoke); err != nil {
		t.Fatalf("reading b1 through v2: %v", err)
	}
	if spoke.Spec != b1.Spec || spoke.UID != b1.UID || spoke.ResourceVersion != b1.ResourceVersion || spoke.Labels["tier"] != "db" {
		t.Errorf("b1 through v2: spec %+v, metadata %+v", spoke.Spec, spoke.ObjectMeta)
	}

	// Updated through v1, read through v2.
	hub.Spec.HostPort = "db2.example:6432"
	hub.Spec.Weight = 5
	if err := c.Update(ctx, &hub); err != nil {
		t.Fatalf("updating b1 through v1: %v", err)
	}
	if hub.Generation != 2 || hub.Spec.HostPort != "db2.example:6432" {
		t.Errorf("updated through v1: generation %d, spec %+v", hub.Generation, hub.Spec)
	}
	if err := c.Get(ctx, key, &spoke); err != nil {
		t.Fatalf("reading b1 through v2: %v", err)
	}
	if spoke.Spec != (BackendV2Spec{Host: "db2.example", Port: 6432, Weight: 5}) || spoke.ResourceVersion != hub.ResourceVersion || spoke.Generation != 2 {
		t.Errorf("b1 through v2 after the v1 update: spec %+v, metadata %+v", spoke.Spec, spoke.ObjectMeta)
	}

	// Updated through v2, read through v1.
	spoke.Spec.Port = 7432
	if err := c.Update(ctx, &spoke); err != nil {
		t.Fatalf("updating b1 through v2: %v", err)
	}
	if spoke.Spec != (BackendV2Spec{Host: "db2.example", Port: 7432, Weight: 5}) || spoke.Generation != 3 {
		t.Errorf("updated through v2: generation %d, spec %+v", spoke.Generation, spoke.Spec)
	}
	if err := c.Get(ctx, key, &hub); err != nil || hub.Spec.HostPort != "db2.example:7432" {
		t.Errorf("b1 through v1 after the v2 update: %v %+v", err, hub.Spec)
	}

	// Status is written through the status subresource of either version.
	spoke.Status.Healthy = ptr(true)
	if err := c.Status().Update(ctx, &spoke); err != nil {
		t.Fatalf("updating b1's status through v2: %v", err)
	}
	if err := c.Get(ctx, key, &hub); err != nil || hub.Status.Healthy != "True" || hub.Generation != 3 || hub.Spec.HostPort != "db2.example:7432" {
		t.Errorf("b1 through v1 after the v2 status update: %v, generation %d, %+v %+v", err, hub.Generation, hub.Spec, hub.Status)
	}
	hub.Status.Healthy = "False"
	if err := c.Status().Update(ctx, &hub); err != nil {
		t.Fatalf("updating b1's status through v1: %v", err)
	}
	if err := c.Get(ctx, key, &spoke); err != nil || spoke.Status.Healthy == nil || *spoke.Status.Healthy || spoke.Generation != 3 {
		t.Errorf("b1 through v2 after the v1 status update: %v, generation %d, %+v", err, spoke.Generation, spoke.Status)
	}

	// A merge patch and a server-side apply through v2 reshape too.
	before := spoke.DeepCopy()
	spoke.Spec.Host = "db3.example"
	if err := c.Patch(ctx, &spoke, client.MergeFrom(before)); err != nil {
		t.Fatalf("patching b1 through v2: %v", err)
	}
	if spoke.Spec != (BackendV2Spec{Host: "db3.example", Port: 7432, Weight: 5}) || spoke.Generation != 4 {
		t.Errorf("patched through v2: generation %d, spec %+v", spoke.Generation, spoke.Spec)
	}
	applied := &BackendV2{TypeMeta: metav1.TypeMeta{APIVersion: backendV2.String(), Kind: "Backend"},
		ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: ns}, Spec: BackendV2Spec{Host: "db2.example", Port: 7432, Weight: 5}}
	if err := c.Patch(ctx, applied, client.Apply, client.FieldOwner("backend-operator"), client.ForceOwnership); err != nil {
		t.Fatalf("applying b1 through v2: %v", err)
	}
	if applied.Spec != (BackendV2Spec{Host: "db2.example", Port: 7432, Weight: 5}) || applied.Generation != 5 {
		t.Errorf("applied through v2: generation %d, spec %+v", applied.Generation, applied.Spec)
	}
	if err := c.Get(ctx, key, &hub); err != nil || hub.Spec.HostPort != "db2.example:7432" || hub.Generation != 5 {
		t.Errorf("b1 through v1 after the v2 apply: %v %+v", err, hub.Spec)
	}
	var applier *metav1.ManagedFieldsEntry
	for i, e := range hub.ManagedFields {
		if e.Manager == "backend-operator" {
			applier = &hub.ManagedFields[i]
		}
	}
	if applier == nil || applier.Operation != metav1.ManagedFieldsOperationApply || applier.APIVersion != backendV2.String() {
		t.Errorf("managed fields after the v2 apply: %+v", hub.ManagedFields)
	}

	// More objects, written in either version; a v2 list converts all.
	if err := c.Create(ctx, &BackendV1{ObjectMeta: metav1.ObjectMeta{Name: "b2", Namespace: ns}, Spec: BackendV1Spec{HostPort: "[::1]:8080"}}); err != nil {
		t.Fatalf("creating b2 through v1: %v", err)
	}
	if err := c.Create(ctx, &BackendV2{ObjectMeta: metav1.ObjectMeta{Name: "b3", Namespace: ns}, Spec: BackendV2Spec{Host: "cache.example", Port: 6379}}); err != nil {
		t.Fatalf("creating b3 through v2: %v", err)
	}
	want := map[string]BackendV2Spec{
		"b1": {Host: "db2.example", Port: 7432, Weight: 5},
		"b2": {Host: "::1", Port: 8080},
		"b3": {Host: "cache.example", Port: 6379},
	}
	var list BackendV2List
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing through v2: %v", err)
	}
	if len(list.Items) != len(want) || list.ResourceVersion == "" {
		t.Fatalf("v2 list: %d items, resourceVersion %q", len(list.Items), list.ResourceVersion)
	}
	for _, it := range list.Items {
		if it.Spec != want[it.Name] || it.APIVersion != backendV2.String() || it.Kind != "Backend" {
			t.Errorf("v2 list item %s: %s %s, spec %+v, want %+v", it.Name, it.APIVersion, it.Kind, it.Spec, want[it.Name])
		}
	}
	var hubs BackendV1List
	if err := c.List(ctx, &hubs, client.InNamespace(ns)); err != nil || len(hubs.Items) != len(want) {
		t.Fatalf("listing through v1: %v, %d items", err, len(hubs.Items))
	}
	for _, it := range hubs.Items {
		w := want[it.Name]
		if hp := net.JoinHostPort(w.Host, strconv.Itoa(int(w.Port))); it.Spec.HostPort != hp || it.Spec.Weight != w.Weight {
			t.Errorf("v1 list item %s: spec %+v, want hostPort %s", it.Name, it.Spec, hp)
		}
	}

	// An object the webhook cannot convert is readable only as stored;
	// the webhook's refusal reaches the client as a 500.
	if err := c.Create(ctx, &BackendV1{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns}, Spec: BackendV1Spec{HostPort: "no-port"}}); err != nil {
		t.Fatalf("creating an unconvertible backend through v1: %v", err)
	}
	badKey := types.NamespacedName{Namespace: ns, Name: "bad"}
	refused := []struct {
		what string
		err  error
	}{
		{"get", c.Get(ctx, badKey, &BackendV2{})},
		{"list", c.List(ctx, &BackendV2List{}, client.InNamespace(ns))},
	}
	for _, r := range refused {
		if !apierrors.IsInternalError(r.err) || !strings.Contains(r.err.Error(), "conversion webhook for "+backendV1.String()) ||
			!strings.Contains(r.err.Error(), "missing port in address") {
			t.Errorf("%s through v2 of an unconvertible object: %v", r.what, r.err)
		}
	}
	if err := c.Get(ctx, badKey, &BackendV1{}); err != nil {
		t.Errorf("get through v1 of an unconvertible object: %v", err)
	}
	if err := c.Delete(ctx, &BackendV1{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns}}); err != nil {
		t.Fatalf("deleting the unconvertible backend through v1: %v", err)
	}

	// A cache watches through v2: it lists what is there and sees later
	// creates and updates, converted.
	informers, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	cacheCtx, stopCache := context.WithCancel(ctx)
	cached := make(chan error, 1)
	go func() { cached <- informers.Start(cacheCtx) }()
	defer func() {
		stopCache()
		if err := <-cached; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("cache stopped with %v", err)
		}
	}()
	if _, err := informers.GetInformer(ctx, &BackendV2{}); err != nil {
		t.Fatalf("v2 informer: %v", err)
	}
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	var fromCache BackendV2
	if err := informers.Get(ctx, key, &fromCache); err != nil || fromCache.Spec != want["b1"] {
		t.Errorf("b1 from the cache: %v %+v", err, fromCache.Spec)
	}
	if err := c.Create(ctx, &BackendV1{ObjectMeta: metav1.ObjectMeta{Name: "b4", Namespace: ns}, Spec: BackendV1Spec{HostPort: "mq.example:5672", Weight: 1}}); err != nil {
		t.Fatalf("creating b4 through v1: %v", err)
	}
	key4 := types.NamespacedName{Namespace: ns, Name: "b4"}
	eventually(t, "the cache to see b4 as v2", func() bool {
		return informers.Get(ctx, key4, &fromCache) == nil
	})
	if fromCache.Spec != (BackendV2Spec{Host: "mq.example", Port: 5672, Weight: 1}) {
		t.Errorf("b4 from the cache: %+v", fromCache.Spec)
	}
	var hub4 BackendV1
	if err := c.Get(ctx, key4, &hub4); err != nil {
		t.Fatal(err)
	}
	hub4.Spec.HostPort = "mq.example:5673"
	if err := c.Update(ctx, &hub4); err != nil {
		t.Fatalf("updating b4 through v1: %v", err)
	}
	eventually(t, "the cache to see b4's update as v2", func() bool {
		return informers.Get(ctx, key4, &fromCache) == nil && fromCache.ResourceVersion == hub4.ResourceVersion
	})
	if fromCache.Spec != (BackendV2Spec{Host: "mq.example", Port: 5673, Weight: 1}) {
		t.Errorf("b4 from the cache after its update: %+v", fromCache.Spec)
	}
	var cachedList BackendV2List
	if err := informers.List(ctx, &cachedList); err != nil || len(cachedList.Items) != 4 {
		t.Errorf("listing the cache: %v, %d items", err, len(cachedList.Items))
	}

	// A delete through v2 reaches the cache as a converted deletion.
	if err := c.Delete(ctx, &BackendV2{ObjectMeta: metav1.ObjectMeta{Name: "b3", Namespace: ns}}); err != nil {
		t.Fatalf("deleting b3 through v2: %v", err)
	}
	eventually(t, "the cache to see b3 go", func() bool {
		return apierrors.IsNotFound(informers.Get(ctx, types.NamespacedName{Namespace: ns, Name: "b3"}, &fromCache))
	})

	// A label-selected v2 list and a v2 collection delete convert too.
	var selected BackendV2List
	if err := c.List(ctx, &selected, client.InNamespace(ns), client.MatchingLabels{"tier": "db"}); err != nil ||
		len(selected.Items) != 1 || selected.Items[0].Name != "b1" || selected.Items[0].Spec != want["b1"] {
		t.Errorf("label-selected v2 list: %v %+v", err, selected.Items)
	}
	if err := c.DeleteAllOf(ctx, &BackendV2{}, client.InNamespace(ns)); err != nil {
		t.Fatalf("deleting the backends through v2: %v", err)
	}
	var remaining BackendV1List
	if err := c.List(ctx, &remaining, client.InNamespace(ns)); err != nil || len(remaining.Items) != 0 {
		t.Errorf("v1 list after the v2 collection delete: %v, %d items", err, len(remaining.Items))
	}
	eventually(t, "the cache to see every backend go", func() bool {
		var left BackendV2List
		return informers.List(ctx, &left) == nil && len(left.Items) == 0
	})

	// The conversions were the webhook's, in both directions.
	desired, reviews := counter.counts()
	if desired[backendV1.String()] == 0 || desired[backendV2.String()] == 0 || len(desired) != 2 {
		t.Errorf("conversion reviews by desired version: %v", desired)
	}
	// envtest asks for v1 reviews first.
	if rv := apiextensionsv1.SchemeGroupVersion.String(); len(reviews) != 1 || reviews[rv] == 0 {
		t.Errorf("conversion reviews by their version: %v, want %s only", reviews, rv)
	}

}

func (b *BackendV2) DeepCopy() *BackendV2 { return b.DeepCopyObject().(*BackendV2) }

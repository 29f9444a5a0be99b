package builtin

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"platd/config"
	"platd/server/registry"
)

// imageBackend is an image policy backend: it records the reviews it is
// sent and answers with answer, or with a failure of status code.
type imageBackend struct {
	mu      sync.Mutex
	reviews []map[string]any
	code    int
	answer  string
	srv     *httptest.Server
}

func newImageBackend(t *testing.T) *imageBackend {
	t.Helper()
	ib := &imageBackend{code: http.StatusOK, answer: `{"apiVersion":"imagepolicy.` + brand.Domain + `/v1alpha1","kind":"ImageReview","status":{"allowed":true}}`}
	ib.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var review map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &review) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		ib.mu.Lock()
		defer ib.mu.Unlock()
		ib.reviews = append(ib.reviews, review)
		if ib.code != http.StatusOK {
			http.Error(w, "boom", ib.code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, ib.answer)
	}))
	t.Cleanup(ib.srv.Close)
	return ib
}

func (ib *imageBackend) set(code int, answer string) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	ib.code, ib.answer = code, answer
}

// calls is how many reviews the backend was sent, the last one.
func (ib *imageBackend) calls() (int, map[string]any) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if len(ib.reviews) == 0 {
		return 0, nil
	}
	return len(ib.reviews), ib.reviews[len(ib.reviews)-1]
}

func (ib *imageBackend) config(defaultAllow bool) config.ImagePolicyWebhookConfiguration {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ib.srv.Certificate().Raw})
	return config.ImagePolicyWebhookConfiguration{
		Client:   config.KubeconfigClient{Server: ib.srv.URL + "/policy", CAPEM: ca},
		AllowTTL: time.Minute, DenyTTL: 10 * time.Second, RetryBackoff: time.Millisecond, DefaultAllow: defaultAllow,
	}
}

// imagePod is a pod in namespace ns running images (the last one in an
// init container), with annotations.
func imagePod(ns string, annotations map[string]any, images ...string) registry.Object {
	var containers []any
	for _, img := range images[:len(images)-1] {
		containers = append(containers, map[string]any{"name": "c", "image": img})
	}
	meta := map[string]any{"name": "p", "namespace": ns}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return registry.Object{"metadata": meta, "spec": map[string]any{
		"containers":     containers,
		"initContainers": []any{map[string]any{"name": "i", "image": images[len(images)-1]}},
	}}
}

// TestImagePolicyReview: the ImageReview a pod is sent as, and how the
// backend's answers and failures admit or refuse it.
func TestImagePolicyReview(t *testing.T) {
	t.Parallel()
	allow := `{"apiVersion":"imagepolicy.` + brand.Domain + `/v1alpha1","kind":"ImageReview","status":{"allowed":true,"auditAnnotations":{"checked":"yes"}}}`
	auditPrefix := "imagepolicywebhook.image-policy." + brand.Domain + "/"
	for _, tc := range []struct {
		name         string
		code         int
		answer       string
		defaultAllow bool
		err          string // the refusal's reason; "" admits
		calls        int    // attempts the backend saw
		audit        map[string]string
	}{
		{name: "allowed", answer: allow, calls: 1, audit: map[string]string{auditPrefix + "checked": "yes"}},
		{name: "allowed, answer naming no kind", answer: `{"status":{"allowed":true}}`, calls: 1},
		{name: "denied with a reason", answer: `{"status":{"allowed":false,"reason":"unsigned image","auditAnnotations":{"why":"unsigned"}}}`, calls: 1,
			err: "image policy webhook backend denied one or more images: unsigned image", audit: map[string]string{auditPrefix + "why": "unsigned"}},
		{name: "denied without a reason", answer: `{"status":{"allowed":false}}`, calls: 1, err: "one or more images rejected by webhook backend"},
		{name: "backend error retried, refused", code: http.StatusInternalServerError, calls: 5,
			err: `an error on the server ("boom") has prevented the request from succeeding`},
		{name: "backend error not retried", code: http.StatusNotFound, calls: 1, err: "the server could not find the requested resource"},
		{name: "backend error, default allow", code: http.StatusInternalServerError, defaultAllow: true, calls: 5,
			audit: map[string]string{auditPrefix + "failed-open": "true"}},
		{name: "answer of another kind", answer: `{"apiVersion":"v1","kind":"Status"}`, calls: 1,
			err: `no kind "Status" is registered for version "v1"`},
		{name: "answer not JSON, default allow", answer: `nope`, defaultAllow: true, calls: 1,
			audit: map[string]string{auditPrefix + "failed-open": "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ib := newImageBackend(t)
			code := tc.code
			if code == 0 {
				code = http.StatusOK
			}
			ib.set(code, tc.answer)
			p := newImagePolicy(brand, ib.config(tc.defaultAllow), time.Now)
			pod := imagePod("team", map[string]any{
				"a.image-policy." + brand.Domain + "/ticket": "1234",
				"image-policy." + brand.Domain + "/bare":     "no dot before the group: not sent",
				"other":                                      "x",
			}, "web:1", "sidecar:2", "init:3")
			ctx, annotations := psAudited(t, context.Background())
			err := p.validatePod(ctx, nil, pod, nil)
			var denial *registry.Denial
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (!errors.As(err, &denial) || denial.Reason != tc.err):
				t.Fatalf("error %v, want a denial %q", err, tc.err)
			}
			n, review := ib.calls()
			if n != tc.calls {
				t.Errorf("backend called %d times, want %d", n, tc.calls)
			}
			want := map[string]any{
				"apiVersion": "imagepolicy." + brand.Domain + "/v1alpha1", "kind": "ImageReview",
				"metadata": map[string]any{"creationTimestamp": nil},
				"spec": map[string]any{
					"containers":  []any{map[string]any{"image": "web:1"}, map[string]any{"image": "sidecar:2"}, map[string]any{"image": "init:3"}},
					"annotations": map[string]any{"a.image-policy." + brand.Domain + "/ticket": "1234"},
					"namespace":   "team",
				},
				"status": map[string]any{"allowed": false},
			}
			if !reflect.DeepEqual(review, want) {
				t.Errorf("review %v\nwant %v", review, want)
			}
			got := annotations()
			for k, v := range tc.audit {
				if got[k] != v {
					t.Errorf("audit annotation %s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			for k := range got {
				if strings.HasPrefix(k, auditPrefix) && tc.audit[k] == "" {
					t.Errorf("unexpected audit annotation %s", k)
				}
			}
			// The pod is never changed: upstream's failed-open annotation
			// is set on a copy that is not stored.
			if meta := mapOf(pod["metadata"]); len(mapOf(meta["annotations"])) != 3 {
				t.Errorf("pod annotations changed: %v", meta["annotations"])
			}
		})
	}
}

// TestImagePolicyCache: answers are remembered per review for their
// TTL, failures not at all; another review, or an update of the same pod
// that runs no new image, asks again only when the review differs.
func TestImagePolicyCache(t *testing.T) {
	t.Parallel()
	ib := newImageBackend(t)
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	p := newImagePolicy(brand, ib.config(false), clock)
	good, bad := imagePod("ns", nil, "good:1"), imagePod("ns", nil, "bad:1")
	steps := []struct {
		name  string
		code  int
		deny  bool
		pod   registry.Object
		wait  time.Duration
		err   bool
		calls int
	}{
		{name: "failure is not cached", code: http.StatusNotFound, pod: good, err: true, calls: 1},
		{name: "first allow asks", pod: good, calls: 2},
		{name: "remembered while the backend fails", code: http.StatusNotFound, pod: good, calls: 2},
		{name: "another review asks", deny: true, pod: bad, err: true, calls: 3},
		{name: "denial remembered", pod: bad, err: true, calls: 3},
		{name: "denial expires after denyTTL", pod: bad, wait: 10 * time.Second, calls: 4},
		{name: "allow still remembered", code: http.StatusNotFound, pod: good, calls: 4},
		{name: "allow expires after allowTTL", pod: good, wait: time.Minute, calls: 5},
	}
	for _, st := range steps {
		advance(st.wait)
		code, answer := http.StatusOK, `{"status":{"allowed":true}}`
		if st.code != 0 {
			code = st.code
		}
		if st.deny {
			answer = `{"status":{"allowed":false}}`
		}
		ib.set(code, answer)
		err := p.validatePod(context.Background(), nil, st.pod, nil)
		if (err != nil) != st.err {
			t.Errorf("%s: error %v, want error %v", st.name, err, st.err)
		}
		if n, _ := ib.calls(); n != st.calls {
			t.Errorf("%s: %d calls, want %d", st.name, n, st.calls)
		}
	}
}

// TestImagePolicyEphemeralContainers: an update of pods/ephemeralcontainers
// is reviewed with the ephemeral containers' images only, and a pod update
// that adds no image is reviewed again as upstream does (answered from the
// cache when the review is the same).
func TestImagePolicyEphemeralContainers(t *testing.T) {
	t.Parallel()
	ib := newImageBackend(t)
	cfg := ib.config(false)
	cfg.AllowTTL = 0
	p := newImagePolicy(brand, cfg, time.Now)
	pod := imagePod("ns", nil, "web:1", "init:1")
	spec := mapOf(pod["spec"])
	spec["ephemeralContainers"] = []any{map[string]any{"name": "debug", "image": "busybox"}}
	if err := p.validateEphemeralContainers(context.Background(), nil, pod, pod); err != nil {
		t.Fatal(err)
	}
	_, review := ib.calls()
	if got := mapOf(review["spec"])["containers"]; !reflect.DeepEqual(got, []any{map[string]any{"image": "busybox"}}) {
		t.Errorf("ephemeral review containers %v", got)
	}
	if err := p.validatePod(context.Background(), nil, pod, pod); err != nil {
		t.Fatal(err)
	}
	n, review := ib.calls()
	if got := mapOf(review["spec"])["containers"]; n != 2 || !reflect.DeepEqual(got, []any{map[string]any{"image": "web:1"}, map[string]any{"image": "init:1"}}) {
		t.Errorf("update review %d: containers %v", n, got)
	}
	// The pods/ephemeralcontainers hook is the step's subresource hook.
	ds := all(brand, DefaultServiceRanges(), Services{Admission: config.AdmissionPluginsOff{}, ImagePolicyWebhook: &cfg})
	st := kindOf(ds, "Pod").Strategy
	if st.ValidateSubresourceAdmission["ephemeralcontainers"] == nil || len(st.ValidateSubresourceAdmission) != 1 {
		t.Errorf("subresource admission %v, want only ephemeralcontainers", st.ValidateSubresourceAdmission)
	}
	ds = all(brand, DefaultServiceRanges(), Services{ImagePolicyWebhook: &cfg})
	if st := kindOf(ds, "Pod").Strategy; st.ValidateSubresourceAdmission != nil {
		t.Errorf("plugin off: subresource admission %v", st.ValidateSubresourceAdmission)
	}
}

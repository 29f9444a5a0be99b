package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/audit"
	"platd/server/registry"
)

// imagePolicyCacheSize bounds the remembered answers of the image policy
// backend, as upstream: the least recently used is dropped first, and the
// cost of a dropped one is only another call.
const imagePolicyCacheSize = 1024

// imagePolicyTimeout bounds one call to the backend, upstream's timeout
// of webhooks described by kubeconfig files.
const imagePolicyTimeout = 30 * time.Second

// imagePolicyBackoff is upstream's retry schedule of the backend around
// the configured first wait.
func imagePolicyBackoff(first time.Duration) security.Backoff {
	return security.Backoff{Initial: first, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// The audit annotation keys the plugin writes, under imagePolicy.auditKey.
const (
	// imagePolicyFailedOpen marks a pod admitted because the backend could
	// not be asked.
	imagePolicyFailedOpen = "failed-open"
)

// maxUnstructuredAnswer caps the text of a backend's failed answer that
// a refusal quotes, as upstream's client caps it.
const maxUnstructuredAnswer = 2048

// imagePolicy is the ImagePolicyWebhook admission plugin: every pod
// created or updated, and every update of its ephemeral containers, is
// reviewed by a remote backend with an ImageReview naming the images it
// runs, its image-policy annotations and its namespace. The backend's
// answers are remembered per review for the configured TTLs; when it
// cannot be asked, the pod is refused, or admitted with an audit
// annotation when the configuration allows by default.
type imagePolicy struct {
	b         config.Brand
	cfg       config.ImagePolicyWebhookConfiguration
	client    *security.KubeconfigWebhook
	clientErr error
	cache     *lru[reviewAnswer]
	now       func() time.Time
}

func newImagePolicy(b config.Brand, cfg config.ImagePolicyWebhookConfiguration, now func() time.Time) *imagePolicy {
	p := &imagePolicy{b: b, cfg: cfg, cache: newLRU[reviewAnswer](imagePolicyCacheSize), now: now}
	p.client, p.clientErr = security.NewKubeconfigWebhook(cfg.Client, imagePolicyTimeout, imagePolicyBackoff(cfg.RetryBackoff))
	return p
}

// close releases the backend client's idle connections.
func (p *imagePolicy) close() {
	if p.client != nil {
		p.client.CloseIdle()
	}
}

// auditKey is the key of an audit annotation the plugin writes.
func (p *imagePolicy) auditKey(name string) string {
	return strings.ToLower(config.PluginImagePolicyWebhook) + "." + p.b.Group("image-policy") + "/" + name
}

// validatePod reviews the images of a pod's containers and init
// containers, on create and on every update of the pod.
func (p *imagePolicy) validatePod(ctx context.Context, _ registry.Lookup, obj, _ registry.Object) error {
	spec := mapOf(obj["spec"])
	var images []string
	for _, field := range []string{"containers", "initContainers"} {
		for _, c := range mapsOf(spec[field]) {
			images = append(images, strOf(c["image"]))
		}
	}
	return p.review(ctx, obj, images)
}

// validateEphemeralContainers reviews the images of a pod's ephemeral
// containers, on an update of pods/ephemeralcontainers.
func (p *imagePolicy) validateEphemeralContainers(ctx context.Context, _ registry.Lookup, obj, _ registry.Object) error {
	var images []string
	for _, c := range mapsOf(mapOf(obj["spec"])["ephemeralContainers"]) {
		images = append(images, strOf(c["image"]))
	}
	return p.review(ctx, obj, images)
}

// imageReviewSpec is an ImageReview's spec, in upstream's member order:
// it is also the key the backend's answer is remembered by.
type imageReviewSpec struct {
	Containers  []imageReviewContainer `json:"containers,omitempty"`
	Annotations map[string]string      `json:"annotations,omitempty"`
	Namespace   string                 `json:"namespace,omitempty"`
}

type imageReviewContainer struct {
	Image string `json:"image,omitempty"`
}

// imageReviewStatus is the backend's answer.
type imageReviewStatus struct {
	Allowed          bool              `json:"allowed"`
	Reason           string            `json:"reason,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
}

// imageReview is the ImageReview sent, as upstream serializes it.
type imageReview struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Metadata   map[string]any    `json:"metadata"`
	Spec       imageReviewSpec   `json:"spec"`
	Status     imageReviewStatus `json:"status"`
}

// review asks the backend, or its remembered answer, about images of the
// pod obj and refuses the pod as upstream does.
func (p *imagePolicy) review(ctx context.Context, obj registry.Object, images []string) error {
	spec := imageReviewSpec{Annotations: p.policyAnnotations(obj), Namespace: str(obj, "metadata", "namespace")}
	for _, img := range images {
		spec.Containers = append(spec.Containers, imageReviewContainer{Image: img})
	}
	key, err := json.Marshal(spec)
	if err != nil {
		return &registry.Denial{Reason: err.Error()}
	}
	status, ok := p.cached(string(key))
	if !ok {
		status, err = p.ask(ctx, spec)
		if err != nil {
			return p.backendFailure(ctx, err)
		}
		ttl := p.cfg.DenyTTL
		if status.Allowed {
			ttl = p.cfg.AllowTTL
		}
		p.cache.add(string(key), reviewAnswer{status: status, expires: p.now().Add(ttl)})
	}
	for k, v := range status.AuditAnnotations {
		audit.AddAnnotation(ctx, p.auditKey(k), v)
	}
	switch {
	case status.Allowed:
		return nil
	case status.Reason != "":
		return &registry.Denial{Reason: "image policy webhook backend denied one or more images: " + status.Reason}
	default:
		return &registry.Denial{Reason: "one or more images rejected by webhook backend"}
	}
}

// policyAnnotations are the pod's annotations under the image-policy
// group, in any prefix (<prefix>.image-policy.<domain>/<name>), which
// upstream passes to the backend.
func (p *imagePolicy) policyAnnotations(obj registry.Object) map[string]string {
	marker := "." + p.b.Group("image-policy") + "/"
	out := map[string]string{}
	for k, v := range mapOf(mapOf(obj["metadata"])["annotations"]) {
		if strings.Contains(k, marker) {
			out[k] = strOf(v)
		}
	}
	return out
}

// ask posts the review and decodes the backend's answer.
func (p *imagePolicy) ask(ctx context.Context, spec imageReviewSpec) (imageReviewStatus, error) {
	if p.clientErr != nil {
		return imageReviewStatus{}, p.clientErr
	}
	apiVersion := p.b.Group("imagepolicy") + "/v1alpha1"
	body, err := json.Marshal(imageReview{
		Kind: "ImageReview", APIVersion: apiVersion, Metadata: map[string]any{"creationTimestamp": nil}, Spec: spec,
	})
	if err != nil {
		return imageReviewStatus{}, err
	}
	data, err := p.client.Post(ctx, body)
	if err != nil {
		return imageReviewStatus{}, err
	}
	var resp struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Status     imageReviewStatus `json:"status"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return imageReviewStatus{}, fmt.Errorf("couldn't get version/kind; json parse error: %w", err)
	}
	// An answer that names no kind is read as an ImageReview, as
	// upstream's typed decoding reads it.
	if resp.APIVersion != "" && resp.APIVersion != apiVersion {
		return imageReviewStatus{}, fmt.Errorf("no kind %q is registered for version %q", resp.Kind, resp.APIVersion)
	}
	if resp.Kind != "" && resp.Kind != "ImageReview" {
		return imageReviewStatus{}, fmt.Errorf("no kind %q is registered for version %q", resp.Kind, apiVersion)
	}
	return resp.Status, nil
}

// backendFailure is the outcome of a review the backend did not answer:
// with defaultAllow the pod is admitted and the request's audit event
// says it failed open, else the pod is refused with the failure.
// Upstream also sets the failed-open annotation on the pod its plugin is
// given, but that is a copy validation gets: the stored pod never has
// it, and neither does platd's.
func (p *imagePolicy) backendFailure(ctx context.Context, err error) error {
	slog.Debug("image policy webhook backend failed", "err", err, "defaultAllow", p.cfg.DefaultAllow)
	if p.cfg.DefaultAllow {
		audit.AddAnnotation(ctx, p.auditKey(imagePolicyFailedOpen), "true")
		return nil
	}
	return &registry.Denial{Reason: backendFailureMessage(err)}
}

// backendFailureMessage words a failed call as upstream's client does: a
// transport failure as Go's, an answer other than 2xx by the Status it
// holds or else by its code.
func backendFailureMessage(err error) string {
	var se *security.WebhookStatusError
	if errors.As(err, &se) {
		return statusAnswerMessage(se)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Error()
	}
	if errors.Is(err, security.ErrWebhook) {
		return strings.TrimPrefix(err.Error(), security.ErrWebhook.Error()+": ")
	}
	return err.Error()
}

// statusAnswerMessage is upstream's client's message of an answer with
// a status other than 2xx.
func statusAnswerMessage(se *security.WebhookStatusError) string {
	var st struct{ Kind, Status, Message string }
	if json.Unmarshal(se.Body, &st) == nil && st.Kind == "Status" && st.Status == "Failure" {
		return st.Message
	}
	server := "unknown"
	if mt, _, err := mime.ParseMediaType(se.ContentType); err == nil && mt == "text/plain" {
		body := se.Body
		if len(body) > maxUnstructuredAnswer {
			body = body[:maxUnstructuredAnswer]
		}
		server = strings.TrimSpace(string(body))
	}
	switch se.Code {
	case http.StatusConflict:
		return "the server reported a conflict"
	case http.StatusNotFound:
		return "the server could not find the requested resource"
	case http.StatusBadRequest:
		return "the server rejected our request for an unknown reason"
	case http.StatusUnauthorized:
		return "the server has asked for the client to provide credentials"
	case http.StatusForbidden:
		return server
	case http.StatusNotAcceptable:
		return "the server was unable to respond with a content type that the client supports"
	case http.StatusUnsupportedMediaType:
		return "the server was unable to handle the media type requested"
	case http.StatusMethodNotAllowed:
		return "the server does not allow this method on the requested resource"
	case http.StatusUnprocessableEntity:
		return "the server rejected our request due to an error in our request"
	case http.StatusServiceUnavailable:
		return "the server is currently unable to handle the request"
	case http.StatusGatewayTimeout:
		return "the server was unable to return a response in the time allotted, but may still be processing the request"
	case http.StatusTooManyRequests:
		return "the server has received too many requests and has asked us to try again later"
	}
	if se.Code >= 500 {
		return fmt.Sprintf("an error on the server (%q) has prevented the request from succeeding", server)
	}
	return fmt.Sprintf("the server responded with the status code %d but did not return more information", se.Code)
}

// reviewAnswer is the backend's answer to a review, remembered until it
// expires.
type reviewAnswer struct {
	status  imageReviewStatus
	expires time.Time
}

// cached returns the remembered answer to the review of key while it has
// not expired; an expired one is forgotten.
func (p *imagePolicy) cached(key string) (imageReviewStatus, bool) {
	a, ok := p.cache.get(key)
	if !ok {
		return imageReviewStatus{}, false
	}
	if !p.now().Before(a.expires) {
		p.cache.remove(key)
		return imageReviewStatus{}, false
	}
	return a.status, true
}

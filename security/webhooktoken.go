package security

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"platd/config"
)

// webhookTimeout bounds one call to a token webhook, as upstream's client
// does: a hung webhook must not hold requests forever.
const webhookTimeout = 30 * time.Second

// maxWebhookResponse bounds the TokenReview a webhook may answer with; a
// review is a few kilobytes, and a larger answer is a broken webhook.
const maxWebhookResponse = 3 << 20

// Backoff is a retry schedule: Steps attempts in all, the first wait
// Initial, each next wait Factor times longer, each stretched by up to
// Jitter of itself at random.
type Backoff struct {
	Initial time.Duration
	Factor  float64
	Jitter  float64
	Steps   int
}

// WebhookBackoff is upstream's schedule for webhook calls: five attempts
// over about four seconds rides out a webhook restart without making the
// client wait long for a webhook that is down.
var WebhookBackoff = Backoff{Initial: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// ErrWebhook is wrapped by errors of a webhook call that did not yield a
// review.
var ErrWebhook = errors.New("webhook call failed")

// WebhookTokenConfig configures NewWebhookTokenAuthenticator.
type WebhookTokenConfig struct {
	// Client says where the webhook is and how to trust and authenticate
	// to it; Client.Server is the full URL reviews are POSTed to.
	Client config.KubeconfigClient
	// Version is the TokenReview version sent: "v1" or "v1beta1".
	Version string
	// CacheTTL is how long acceptances and rejections are remembered.
	CacheTTL time.Duration
	// Brand spells the authentication group.
	Brand config.Brand
	// ImplicitAudiences are the audiences a review that names none is
	// taken to grant: the API audiences.
	ImplicitAudiences []string
}

// NewWebhookTokenAuthenticator asks a remote webhook about bearer tokens
// with a TokenReview, caching its answers per CacheTTL. Transient failures
// are retried per WebhookBackoff; a failure that persists is an error (and
// not cached).
func NewWebhookTokenAuthenticator(cfg WebhookTokenConfig) (TokenAuthenticator, error) {
	w, err := newWebhookToken(cfg)
	if err != nil {
		return nil, err
	}
	return NewCachedTokenAuthenticator(w, cfg.CacheTTL, cfg.CacheTTL), nil
}

type webhookToken struct {
	url          string
	client       *http.Client
	apiVersion   string
	implicitAuds []string
	backoff      Backoff
	// sleep waits between attempts; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

func newWebhookToken(cfg WebhookTokenConfig) (*webhookToken, error) {
	if cfg.Version != "v1" && cfg.Version != "v1beta1" {
		return nil, fmt.Errorf("unsupported authentication webhook version %q, supported versions are %q, %q", cfg.Version, "v1", "v1beta1")
	}
	tr, err := clientTransport(cfg.Client)
	if err != nil {
		return nil, err
	}
	return &webhookToken{
		url:          cfg.Client.Server,
		client:       &http.Client{Transport: tr, Timeout: webhookTimeout},
		apiVersion:   cfg.Brand.Group("authentication") + "/" + cfg.Version,
		implicitAuds: cfg.ImplicitAudiences,
		backoff:      WebhookBackoff,
		sleep:        sleepContext,
	}, nil
}

// clientTransport builds the TLS transport a kubeconfig describes.
func clientTransport(kc config.KubeconfigClient) (http.RoundTripper, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: kc.TLSServerName, InsecureSkipVerify: kc.InsecureSkipTLSVerify}
	if len(kc.CAPEM) > 0 {
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(kc.CAPEM) {
			return nil, fmt.Errorf("%w: webhook certificate-authority: %w", ErrKeyMaterial, ErrNoCertificates)
		}
	}
	if len(kc.ClientCertPEM) > 0 {
		pair, err := tls.X509KeyPair(kc.ClientCertPEM, kc.ClientKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("%w: webhook client certificate: %w", ErrKeyMaterial, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	var rt http.RoundTripper = &http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSClientConfig: tc, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 10 * time.Second, MaxIdleConnsPerHost: 25, IdleConnTimeout: 90 * time.Second,
	}
	if kc.Token != "" {
		rt = bearerRoundTripper{token: kc.Token, next: rt}
	}
	return rt, nil
}

type bearerRoundTripper struct {
	token string
	next  http.RoundTripper
}

func (b bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// tokenReview is the wire form of a TokenReview, v1 and v1beta1 alike.
type tokenReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		CreationTimestamp *string `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Token     string   `json:"token"`
		Audiences []string `json:"audiences,omitempty"`
	} `json:"spec"`
	Status tokenReviewStatus `json:"status"`
}

type tokenReviewStatus struct {
	Authenticated bool `json:"authenticated,omitempty"`
	User          struct {
		Username string              `json:"username,omitempty"`
		UID      string              `json:"uid,omitempty"`
		Groups   []string            `json:"groups,omitempty"`
		Extra    map[string][]string `json:"extra,omitempty"`
	} `json:"user"`
	Audiences []string `json:"audiences,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func (w *webhookToken) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	wantAuds, checkAuds := AudiencesFrom(ctx)
	var req tokenReview
	req.APIVersion, req.Kind = w.apiVersion, "TokenReview"
	req.Spec.Token, req.Spec.Audiences = token, wantAuds
	body, err := json.Marshal(&req)
	if err != nil {
		return nil, false, err
	}
	var status tokenReviewStatus
	err = w.retry(ctx, func() (bool, error) {
		var retriable bool
		status, retriable, err = w.call(ctx, body)
		return retriable, err
	})
	if err != nil {
		slog.Error("failed to make webhook authenticator request", "err", err)
		return nil, false, err
	}
	return w.user(status, wantAuds, checkAuds)
}

// user maps a review's status to the result: the audience check comes
// first, then the verdict. An accepted user is valid for the audiences
// both asked and granted.
func (w *webhookToken) user(st tokenReviewStatus, wantAuds []string, checkAuds bool) (*User, bool, error) {
	var auds []string
	if checkAuds {
		got := w.implicitAuds
		if len(st.Audiences) > 0 {
			got = st.Audiences
		}
		if auds = IntersectAudiences(wantAuds, got); len(auds) == 0 {
			return nil, false, nil
		}
	}
	if !st.Authenticated {
		if st.Error != "" {
			return nil, false, errors.New(st.Error)
		}
		return nil, false, nil
	}
	return &User{Name: st.User.Username, UID: st.User.UID, Groups: st.User.Groups, Extra: st.User.Extra, Audiences: auds}, true, nil
}

// retry runs attempt until it succeeds, fails for good, or the backoff is
// spent; the last error is returned.
func (w *webhookToken) retry(ctx context.Context, attempt func() (retriable bool, err error)) error {
	wait := w.backoff.Initial
	for step := 1; ; step++ {
		retriable, err := attempt()
		if err == nil || !retriable || step >= w.backoff.Steps {
			return err
		}
		d := wait
		if w.backoff.Jitter > 0 {
			d += time.Duration(rand.Float64() * w.backoff.Jitter * float64(wait))
		}
		if serr := w.sleep(ctx, d); serr != nil {
			return err
		}
		wait = time.Duration(float64(wait) * w.backoff.Factor)
	}
}

// call POSTs one review and decodes the answer. retriable reports whether
// the failure is one upstream retries: a reset connection, a timeout, a
// 500, 504 or 429, or any answer with Retry-After.
func (w *webhookToken) call(ctx context.Context, body []byte) (tokenReviewStatus, bool, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return tokenReviewStatus{}, false, fmt.Errorf("%w: %w", ErrWebhook, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, */*")
	res, err := w.client.Do(hr)
	if err != nil {
		return tokenReviewStatus{}, transientNetError(err), fmt.Errorf("%w: %w", ErrWebhook, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxWebhookResponse+1))
	if err != nil {
		return tokenReviewStatus{}, transientNetError(err), fmt.Errorf("%w: reading the response: %w", ErrWebhook, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		retriable := res.StatusCode == http.StatusInternalServerError || res.StatusCode == http.StatusGatewayTimeout ||
			res.StatusCode == http.StatusTooManyRequests || res.Header.Get("Retry-After") != ""
		return tokenReviewStatus{}, retriable, fmt.Errorf("%w: the server responded with status %d: %s", ErrWebhook, res.StatusCode, strings.TrimSpace(truncate(data, 256)))
	}
	if len(data) > maxWebhookResponse {
		return tokenReviewStatus{}, false, fmt.Errorf("%w: response larger than %d bytes", ErrWebhook, maxWebhookResponse)
	}
	st, err := decodeTokenReview(data, w.apiVersion)
	return st, false, err
}

// decodeTokenReview reads a webhook's answer: a TokenReview of the group
// asked, in either version.
func decodeTokenReview(data []byte, apiVersion string) (tokenReviewStatus, error) {
	var resp tokenReview
	if err := json.Unmarshal(data, &resp); err != nil {
		return tokenReviewStatus{}, fmt.Errorf("%w: decoding the response: %w", ErrWebhook, err)
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	g, v, _ := strings.Cut(resp.APIVersion, "/")
	if resp.Kind != "TokenReview" || g != group || (v != "v1" && v != "v1beta1") {
		return tokenReviewStatus{}, fmt.Errorf("%w: the response is %s %q, not a TokenReview of %s", ErrWebhook, resp.APIVersion, resp.Kind, group)
	}
	return resp.Status, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// transientNetError reports a transport failure worth retrying.
func transientNetError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

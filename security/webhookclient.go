package security

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"platd/config"
)

// webhookClient POSTs JSON reviews to the server a kubeconfig names,
// retrying transient failures per its backoff. The token and the
// authorization webhooks share it. Safe for concurrent use.
type webhookClient struct {
	url     string
	client  *http.Client
	backoff Backoff
	// sleep waits between attempts; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

func newWebhookClient(kc config.KubeconfigClient, timeout time.Duration) (*webhookClient, error) {
	tr, err := clientTransport(kc)
	if err != nil {
		return nil, err
	}
	return &webhookClient{url: kc.Server, client: &http.Client{Transport: tr, Timeout: timeout}, backoff: WebhookBackoff, sleep: sleepContext}, nil
}

// post sends body and returns the 2xx answer's bytes; transient failures
// are retried, the last error returned.
func (w *webhookClient) post(ctx context.Context, body []byte) ([]byte, error) {
	var data []byte
	err := w.retry(ctx, func() (bool, error) {
		var retriable bool
		var err error
		data, retriable, err = w.call(ctx, body)
		return retriable, err
	})
	return data, err
}

// closeIdle drops the client's idle connections (and their goroutines).
func (w *webhookClient) closeIdle() { w.client.CloseIdleConnections() }

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

// retry runs attempt until it succeeds, fails for good, or the backoff is
// spent; the last error is returned.
func (w *webhookClient) retry(ctx context.Context, attempt func() (retriable bool, err error)) error {
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

// call POSTs one review and returns the answer. retriable reports whether
// the failure is one upstream retries: a reset connection, a timeout, a
// 500, 504 or 429, or any answer with Retry-After.
func (w *webhookClient) call(ctx context.Context, body []byte) ([]byte, bool, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrWebhook, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, */*")
	res, err := w.client.Do(hr)
	if err != nil {
		return nil, transientNetError(err), fmt.Errorf("%w: %w", ErrWebhook, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxWebhookResponse+1))
	if err != nil {
		return nil, transientNetError(err), fmt.Errorf("%w: reading the response: %w", ErrWebhook, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		retriable := res.StatusCode == http.StatusInternalServerError || res.StatusCode == http.StatusGatewayTimeout ||
			res.StatusCode == http.StatusTooManyRequests || res.Header.Get("Retry-After") != ""
		return nil, retriable, fmt.Errorf("%w: %w", ErrWebhook, &WebhookStatusError{Code: res.StatusCode, ContentType: res.Header.Get("Content-Type"), Body: data})
	}
	if len(data) > maxWebhookResponse {
		return nil, false, fmt.Errorf("%w: response larger than %d bytes", ErrWebhook, maxWebhookResponse)
	}
	return data, false, nil
}

// WebhookStatusError is a webhook's answer with a status other than 2xx.
type WebhookStatusError struct {
	Code int
	// ContentType is the answer's Content-Type header.
	ContentType string
	// Body is the answer's body, owned by the error.
	Body []byte
}

func (e *WebhookStatusError) Error() string {
	return fmt.Sprintf("the server responded with status %d: %s", e.Code, strings.TrimSpace(truncate(e.Body, 256)))
}

// KubeconfigWebhook POSTs JSON to the server a kubeconfig names,
// retrying transient failures (a reset connection, a timeout, a 500, 504
// or 429, any answer with Retry-After) per its backoff: the client of the
// webhooks described by kubeconfig files. Safe for concurrent use.
type KubeconfigWebhook struct{ c *webhookClient }

// NewKubeconfigWebhook returns the client of kc; timeout bounds each
// attempt, backoff schedules the attempts.
func NewKubeconfigWebhook(kc config.KubeconfigClient, timeout time.Duration, backoff Backoff) (*KubeconfigWebhook, error) {
	c, err := newWebhookClient(kc, timeout)
	if err != nil {
		return nil, err
	}
	c.backoff = backoff
	return &KubeconfigWebhook{c: c}, nil
}

// Post sends body to the kubeconfig's server and returns the 2xx
// answer's bytes. Errors wrap ErrWebhook: a transport failure wraps Go's
// *url.Error, another answer a *WebhookStatusError; after retries the
// last failure is returned.
func (k *KubeconfigWebhook) Post(ctx context.Context, body []byte) ([]byte, error) {
	return k.c.post(ctx, body)
}

// CloseIdle drops the client's idle connections.
func (k *KubeconfigWebhook) CloseIdle() { k.c.closeIdle() }

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

// Package webhookclient calls the webhooks the API's own objects
// configure (admission webhooks, custom resource conversion webhooks): it
// resolves a clientConfig (a url, or a service) to the address upstream
// calls, verifies TLS against the configured caBundle, and posts JSON.
package webhookclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ErrNoEndpoint is a clientConfig that names neither a url nor a service.
var ErrNoEndpoint = errors.New("webhook has neither url nor service")

// ErrResponseTooLarge is an answer longer than the client reads.
var ErrResponseTooLarge = errors.New("webhook response too large")

// DefaultServicePort is the port of a webhook service when unset.
const DefaultServicePort = 443

// MaxResponse bounds the body of a webhook's answer read. Upstream reads
// the whole answer; the bound only keeps a runaway webhook from taking
// the server's memory, and is far above any answer a webhook gives: a
// conversion webhook answers with a whole list converted, as large as
// the list a client asked for.
const MaxResponse = 1 << 30

// Connection reuse: a few idle connections per webhook host keep repeated
// calls cheap without holding many sockets.
const (
	idleConnsPerHost = 4
	idleTimeout      = 90 * time.Second
)

// Client posts to one webhook. It is built once per configuration change,
// never per call; its methods are safe for concurrent use.
type Client struct {
	endpoint    string
	endpointErr error
	http        *http.Client
	// maxResponse is MaxResponse but in tests.
	maxResponse int64
}

// New returns the client of a clientConfig in its decoded form (url, or
// service {namespace, name, port, path}, and caBundle, base64 PEM).
func New(cc map[string]any) *Client {
	c := &Client{maxResponse: MaxResponse}
	var serverName string
	c.endpoint, serverName, c.endpointErr = Endpoint(cc)
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if b, _ := cc["caBundle"].(string); b != "" {
		pool := x509.NewCertPool()
		if der, err := base64.StdEncoding.DecodeString(b); err == nil {
			pool.AppendCertsFromPEM(der)
		}
		tlsConf.RootCAs = pool
	}
	c.http = &http.Client{Transport: &http.Transport{
		TLSClientConfig: tlsConf, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: idleConnsPerHost, IdleConnTimeout: idleTimeout,
	}}
	return c
}

// Endpoint is the URL the webhook is called at, or why it has none.
func (c *Client) Endpoint() (string, error) { return c.endpoint, c.endpointErr }

// CloseIdle releases the client's idle connections; a later call opens
// new ones. A nil client has none.
func (c *Client) CloseIdle() {
	if c != nil {
		c.http.CloseIdleConnections()
	}
}

// Post sends body (JSON) to target, the endpoint with whatever query the
// caller adds, and returns the answer's body. A status other than 2xx is
// an error carrying the message of the Status the webhook answered with,
// if any; a transport failure is Go's *url.Error (`Post "<target>": ...`);
// an answer longer than MaxResponse is ErrResponseTooLarge.
func (c *Client) Post(ctx context.Context, target string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxResponse+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.maxResponse {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.maxResponse)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var st struct{ Kind, Message string }
		if json.Unmarshal(data, &st) == nil && st.Kind == "Status" && st.Message != "" {
			return nil, errors.New(st.Message)
		}
		return nil, fmt.Errorf("the server responded with the status code %d but did not return more information", resp.StatusCode)
	}
	return data, nil
}

// Endpoint is the URL a clientConfig calls: its url, or its service's
// address as upstream's default service resolution makes it
// (https://<name>.<namespace>.svc:<port><path>), with the TLS server name
// a service is verified by ("" for a url).
func Endpoint(cc map[string]any) (endpoint, serverName string, err error) {
	if u, _ := cc["url"].(string); u != "" {
		return u, "", nil
	}
	svc, _ := cc["service"].(map[string]any)
	if svc == nil {
		return "", "", ErrNoEndpoint
	}
	port := intOf(svc["port"])
	if port == 0 {
		port = DefaultServicePort
	}
	name, _ := svc["name"].(string)
	ns, _ := svc["namespace"].(string)
	path, _ := svc["path"].(string)
	host := name + "." + ns + ".svc"
	u := url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.FormatInt(port, 10)), Path: path}
	return u.String(), host, nil
}

// WithQuery is u with the query parameter key set to value; u as it is
// when it does not parse.
func WithQuery(u, key, value string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := parsed.Query()
	q.Set(key, value)
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

// intOf reads a number of a decoded object, whichever Go type its decoder
// gave it.
func intOf(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// Package aggregator forwards requests for a group-version an APIService
// hands to a service to that extension API server, as upstream's
// kube-aggregator does: it resolves the service to an endpoint, verifies
// the server against the APIService's caBundle, presents the front
// proxy's client certificate, and tells the server the user in the
// X-Remote-* headers. It also runs the discovery check of an APIService
// and keeps the resource lists that check reads for discovery.
package aggregator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"platd/server/registry"
)

// Connection reuse: a few idle connections per extension server keep
// proxied requests cheap without holding many sockets.
const (
	idleConnsPerHost = 8
	idleTimeout      = 90 * time.Second
	// dialTimeout bounds connecting to an extension server, as
	// upstream's proxy dialer does.
	dialTimeout = 30 * time.Second
	// discoveryTimeout bounds a proxied request for a group-version's
	// discovery document, upstream's value: clients such as kubectl ask
	// every group-version for it, and one slow extension server must not
	// hold them all for the whole request timeout.
	discoveryTimeout = 5 * time.Second
)

// Objects reads stored objects: the APIServices, services and endpoints.
type Objects interface {
	Get(d *registry.Descriptor, ns, name string) (registry.Object, error)
	List(d *registry.Descriptor, ns string) ([]registry.Object, int64, error)
}

// Config is what an Aggregator reads and presents.
type Config struct {
	Objects                          Objects
	APIServices, Services, Endpoints *registry.Descriptor
	// ClientCert returns the front proxy's client certificate in force
	// (--proxy-client-cert-file, reloaded when it changes); it is called
	// for every proxied request and handshake, concurrently, so it must
	// be cheap. Nil proxies without one.
	ClientCert func() *tls.Certificate
	// AllowRedirects hands a backend's redirects to the client; by
	// default they become 502 (upstream's
	// --aggregator-reject-forwarding-redirect=false allows them).
	AllowRedirects bool
	// SendUID adds X-Remote-Uid (upstream's RemoteRequestHeaderUID gate).
	SendUID bool
	// DiscoveryGroups are the groups of aggregated discovery asked of
	// extension servers: the brand's and upstream's.
	DiscoveryGroups []string
	Log             *slog.Logger
}

// Aggregator proxies to extension API servers. Its methods are safe for
// concurrent use. Close releases its connections.
type Aggregator struct {
	cfg Config
	// pick chooses which of n ready endpoints a request goes to; it is
	// called concurrently.
	pick func(n int) int
	// discoveryTimeout bounds proxied discovery requests
	// (discoveryTimeout; shorter in tests).
	discoveryTimeout time.Duration

	mu sync.Mutex
	// cert is the client certificate the open connections presented:
	// when ClientCert returns another, they are closed once idle.
	cert *tls.Certificate
	// transports holds one transport per APIService, built for its
	// TLS settings and replaced when they change.
	transports map[string]*proxyTransport
	// check is the transport of discovery checks, which, as upstream's,
	// do not verify the server.
	check *http.Transport
	// lists holds what the last successful discovery check of each
	// APIService read; gen counts their changes.
	lists map[string]resourceList
	gen   uint64
	// reading marks the APIServices whose resources are being read
	// (RemoteGroupVersions), tried when each last began; reads counts
	// those reads, which end with ctx. closed is set by Close, after
	// which no read starts.
	reading map[string]bool
	tried   map[string]time.Time
	reads   sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
	closed  bool
}

// proxyTransport is the transport of one APIService with the settings it
// was built for.
type proxyTransport struct {
	caBundle   string
	insecure   bool
	serverName string
	rt         *http.Transport
	err        error
}

// New returns an Aggregator over cfg.
func New(cfg Config) *Aggregator {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	a := &Aggregator{cfg: cfg, pick: rand.IntN, discoveryTimeout: discoveryTimeout, transports: map[string]*proxyTransport{}, lists: map[string]resourceList{}, reading: map[string]bool{}, tried: map[string]time.Time{}}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.check = a.newTransport(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // upstream's discovery check does not verify the server
	return a
}

// Close ends the reads of discovery documents in progress and releases
// every idle connection. Transports stay usable: a request after Close
// opens new connections.
func (a *Aggregator) Close() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.reads.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.transports {
		if t.rt != nil {
			t.rt.CloseIdleConnections()
		}
	}
	a.check.CloseIdleConnections()
}

// errBadCABundle is upstream's error for a caBundle holding no
// certificate.
var errBadCABundle = errors.New("unable to load root certificates: unable to parse bytes as PEM block")

// transportFor returns the transport of the APIService called name with
// spec, building a new one when the TLS settings changed (the old one's
// idle connections are closed).
func (a *Aggregator) transportFor(name string, spec map[string]any) (*http.Transport, error) {
	caBundle, _ := spec["caBundle"].(string)
	insecure, _ := spec["insecureSkipTLSVerify"].(bool)
	ref, _ := spec["service"].(map[string]any)
	ns, _ := ref["namespace"].(string)
	svc, _ := ref["name"].(string)
	serverName := svc + "." + ns + ".svc"
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.transports[name]; t != nil {
		if t.caBundle == caBundle && t.insecure == insecure && t.serverName == serverName {
			return t.rt, t.err
		}
		if t.rt != nil {
			t.rt.CloseIdleConnections()
		}
	}
	t := &proxyTransport{caBundle: caBundle, insecure: insecure, serverName: serverName}
	conf := &tls.Config{ServerName: serverName, InsecureSkipVerify: insecure} //nolint:gosec // the APIService asks for it
	if !insecure && caBundle != "" {
		pool := x509.NewCertPool()
		pem, err := base64.StdEncoding.DecodeString(caBundle)
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			t.err = errBadCABundle
		}
		conf.RootCAs = pool
	}
	if t.err == nil {
		t.rt = a.newTransport(conf)
	}
	a.transports[name] = t
	return t.rt, t.err
}

// certChanged closes the idle connections of every transport when the
// front proxy's client certificate is no longer the one they presented,
// so that the next requests present the new one, as upstream's
// aggregator does on a reloaded --proxy-client-cert-file. Connections
// busy with a request (watches) keep going.
func (a *Aggregator) certChanged() {
	if a.cfg.ClientCert == nil {
		return
	}
	cert := a.cfg.ClientCert()
	a.mu.Lock()
	defer a.mu.Unlock()
	if cert == a.cert {
		return
	}
	if a.cert != nil {
		a.cfg.Log.Info("aggregator: proxy client certificate changed; closing idle connections")
		for _, t := range a.transports {
			if t.rt != nil {
				t.rt.CloseIdleConnections()
			}
		}
		a.check.CloseIdleConnections()
	}
	a.cert = cert
}

// forget drops the transport of an APIService that no longer names a
// service, closing its idle connections.
func (a *Aggregator) forget(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.transports[name]; t != nil {
		if t.rt != nil {
			t.rt.CloseIdleConnections()
		}
		delete(a.transports, name)
	}
	delete(a.tried, name)
	if _, ok := a.lists[name]; ok {
		delete(a.lists, name)
		a.gen++
	}
}

// newTransport is an HTTP/1.1 transport with conf and the front proxy's
// client certificate: upgrade requests (exec, attach, port-forward) need
// HTTP/1.1, and one kind of connection serves every request.
func (a *Aggregator) newTransport(conf *tls.Config) *http.Transport {
	conf.MinVersion = tls.VersionTLS12
	if current := a.cfg.ClientCert; current != nil {
		conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return current(), nil }
	}
	return &http.Transport{
		Proxy:               nil,
		TLSClientConfig:     conf,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: idleConnsPerHost,
		IdleConnTimeout:     idleTimeout,
		DialContext:         (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
	}
}

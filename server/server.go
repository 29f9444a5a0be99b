// Package server assembles platd: storage, security, the type registry, the
// filter chain, the handlers and the in-process controllers.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"platd/bolt"
	"platd/config"
	"platd/health"
	"platd/security"
	"platd/security/encrypt"
	"platd/security/flowcontrol"
	"platd/server/aggregator"
	"platd/server/audit"
	"platd/server/builtin"
	"platd/server/controllers"
	"platd/server/filters"
	"platd/server/metrics"
	"platd/server/openapi"
	"platd/server/registry"
	"platd/server/rest"
	"platd/server/schema"
)

// Key material file names inside the cert directory.
const (
	servingCertName = "apiserver.crt"
	servingKeyName  = "apiserver.key"
	adminCertName   = "admin.crt"
	adminKeyName    = "admin.key"
	caCertName      = "ca.crt"
	// adminUser is the user of the generated admin kubeconfig.
	adminUser = "platd-admin"
)

// Server is one running platd.
type Server struct {
	opts config.Options
	log  *slog.Logger
	// store is the engine of --storage-backend (storage.go), or the one
	// handed to NewOnStore; ownStore says whether Serve closes it.
	store    bolt.Store
	ownStore bool
	// stopHooks release what the server's parts hold once it has stopped
	// serving (onStop).
	stopHooks []func()
	// etcdTLS is the client TLS of the --etcd-* files (preflight).
	etcdTLS *tls.Config
	// polledCounts are the object counts last polled from a store on etcd
	// (storagecounts.go).
	polledCounts atomic.Pointer[[]resourceCount]
	// encryption is the value transformer of --encryption-provider-config
	// (encryption.go); nil without it.
	encryption *encrypt.Transformer
	rest       *rest.Handler
	// agg proxies to extension API servers (aggregation.go).
	agg *aggregator.Aggregator
	reg *registry.Registry
	cat *schema.Catalog
	// oa is the OpenAPI documents the routes serve (made by prepare).
	oa   *openapi.Handler
	ln   net.Listener
	http *http.Server
	// shuttingDown is closed when shutdown begins: readyz fails while
	// requests are still served for --shutdown-delay-duration.
	shuttingDown chan struct{}
	// stopping is closed when the server stops taking requests after that
	// delay: watches end, in-flight requests drain (lifecycle.go).
	stopping chan struct{}
	// drain counts requests in flight for --shutdown-send-retry-after and
	// --shutdown-watch-termination-grace-period; nil without them.
	drain *filters.Drain
	// hooks is the start-up work behind the poststarthook/* checks
	// (starthooks.go); informers the caches behind informer-sync, done
	// once they follow the store.
	hooks     doneSet
	informers doneSet
	// logWatch follows the writes of log, for the "log" check.
	logWatch *health.LogWatch
	// rbacDone is closed when the default RBAC policy is written
	// (rbacbootstrap.go); startDone when every start-up write (the
	// policy, the seeds, the kept objects) is done, so that work no part
	// of a start waits for it; fatal carries an error that stops the
	// server.
	rbacDone   chan struct{}
	startDone  chan struct{}
	fatal      chan error
	kubeconfig string
	url        string
	// ca is the data directory's CA, which signs approved certificate
	// signing requests.
	ca *security.CA
	// rootCA is the PEM bundle that verifies the serving certificate.
	rootCA []byte
	// crds serves custom resources from revision crdsFrom on; nil when
	// CRDs are not served.
	crds     *controllers.CRDs
	crdsFrom int64
	// authn is the request authenticator (see authn.go), authMetrics
	// what it decided.
	authn security.Authenticator
	// authz is the authorizer chain (authz.go): authzLive, swapped when
	// --authorization-config changes.
	authz     security.Chain
	authzLive *liveAuthz
	// authzMu guards authzBuilt, each mode's authorizer built once, and
	// authzCEL, the match-condition compiler.
	authzMu    sync.Mutex
	authzBuilt map[string]security.Authorizer
	authzCEL   *security.AuthzCompiler
	// authzCounts counts each authorizer's decisions across reloads.
	authzCounts authzDecisions
	// authzMetrics counts the webhook authorizers' calls across reloads.
	authzMetrics     *security.AuthzWebhookMetrics
	authzMetricsOnce sync.Once
	authMetrics      *filters.AuthMetrics
	// metrics is what /metrics serves (metrics.go).
	metrics *metrics.Registry
	// sa signs and verifies service-account tokens.
	sa *saTokens
	// jwt holds the JWT authenticators; nil without OIDC configuration.
	jwt *security.JWTAuthenticators
	// trustNow is what AuthenticationConfigMap publishes, worked out from
	// the current CA files; trustFiles says there are files to follow.
	trustNow   func() authenticationTrust
	trustFiles bool
	// background runs the loops that keep the authorizers built once
	// (authzBuilt) current.
	background backgroundRuns
	// flows classifies requests by the stored flow schemas; nil when the
	// flow-control API is not served.
	flows *flowcontrol.Classifier
	// trackingTokens says the legacy token tracking ConfigMap is kept.
	trackingTokens bool
	// auditPolicy selects the requests audited into auditSink; both nil
	// when audit is off.
	auditPolicy *audit.Policy
	auditSink   *audit.Backend
	// replicas elects the replica that runs the controllers when the
	// store is shared (replicas.go); nil when this server owns it.
	replicas *replicaSet
	// started ends the start's collector setting (startgc.go).
	started func()
}

// Run starts platd with o and serves until ctx ends.
func Run(ctx context.Context, o config.Options) error {
	s, err := New(ctx, o, nil)
	if err != nil {
		return err
	}
	hint := ""
	if o.Brand.KubectlHint != "" {
		hint = " (unmodified kubectl writes with upstream spellings: start platd with --brand kubernetes for it)"
	}
	fmt.Printf("platd: serving %s; use it with: export KUBECONFIG=%s; kubectl get namespaces%s\n", s.url, s.kubeconfig, hint)
	return s.Serve(ctx)
}

// New prepares a server: types, data directory, key material, storage and
// the listening socket. Serve starts answering.
func New(ctx context.Context, o config.Options, log *slog.Logger) (*Server, error) {
	return newServer(ctx, o, log, nil)
}

// NewOnStore is New on a store its caller opened: the server neither opens
// nor closes it, and o's storage options are not used. Several servers may
// share one store, as replicas share an etcd cluster (for tests in one
// process). The store must stamp values with rest.Stamp and verify them
// with rest.VerifyStored, as the engines New opens do. o.DataDir still
// holds each server's key material and kubeconfig.
func NewOnStore(ctx context.Context, o config.Options, log *slog.Logger, store bolt.Store) (*Server, error) {
	if store == nil {
		return nil, errors.New("NewOnStore: no store")
	}
	return newServer(ctx, o, log, store)
}

func newServer(ctx context.Context, o config.Options, log *slog.Logger, shared bolt.Store) (*Server, error) {
	restoreGC := relaxGC()
	s, err := prepare(ctx, o, log, shared)
	if err != nil {
		restoreGC()
		return nil, err
	}
	s.started = restoreGC
	return s, nil
}

func prepare(ctx context.Context, o config.Options, log *slog.Logger, shared bolt.Store) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	// The schemas of the built-in types load from the first moment, while
	// the options are checked and the key material is read or made: the
	// two are a start's largest costs. Loading them writes nothing.
	type loaded struct {
		cat *schema.Catalog
		err error
	}
	catalog := make(chan loaded, 1)
	go func() {
		cat, err := schema.Load(o.Brand)
		catalog <- loaded{cat, err}
	}()
	logWatch := health.NewLogWatch()
	log = slog.New(logWatch.Handler(log.Handler()))
	s := &Server{opts: o, log: log, logWatch: logWatch, stopping: make(chan struct{}), shuttingDown: make(chan struct{}),
		rbacDone: make(chan struct{}), startDone: make(chan struct{}), fatal: make(chan error, 1),
		authMetrics: filters.NewAuthMetrics(o.Brand.SystemNamespace), metrics: metrics.New()}
	s.metrics.MustRegister(newServerCollector(s))
	for _, w := range o.Warnings {
		log.Warn(w)
	}
	// The served types come first: a bad --runtime-config stops platd
	// before anything is written.
	described := builtin.Describe(o.Brand, serviceRanges(o), s.services())
	enabled, err := enabledAPIs(o, described)
	if err != nil {
		return nil, err
	}
	// So does an audit policy that cannot be used.
	var auditPolicy *config.AuditPolicy
	if o.Audit.Enabled() {
		var warnings []string
		if auditPolicy, warnings, err = config.LoadAuditPolicy(o.Audit.PolicyFile, o.Brand); err != nil {
			return nil, fmt.Errorf("%w: --audit-policy-file: %w", config.ErrInvalid, err)
		}
		for _, w := range warnings {
			log.Warn(w, "file", o.Audit.PolicyFile)
		}
	}
	// An invalid authentication configuration stops it there too.
	if s.jwt, err = s.jwtAuthenticators(); err != nil {
		return nil, err
	}
	// Every file a flag names is read, and the port bound, before the
	// data directory is touched: a typo must not leave a half-made one.
	pre, err := s.preflight()
	if err != nil {
		return nil, err
	}
	tokens, clientCAs, remote := pre.tokens, pre.clientCAs, pre.remote
	s.ln, err = net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		hint := ""
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = " (another process holds the port: stop it, or choose another --secure-port; 0 picks a free one)"
		}
		return nil, fmt.Errorf("listening on %s:%d: %w%s", o.BindAddress, o.SecurePort, err, hint)
	}
	port := s.ln.Addr().(*net.TCPAddr).Port
	host := o.BindAddress
	if ip := net.ParseIP(host); ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	s.url = "https://" + net.JoinHostPort(host, strconv.Itoa(port))
	closeLn := func(err error) (*Server, error) {
		_ = s.ln.Close()
		if s.auditSink != nil {
			_ = s.auditSink.Close()
		}
		return nil, err
	}
	// The audit log may be inside the data directory, but a path that
	// cannot be written must not leave a half-made one.
	if auditPolicy != nil {
		if s.auditSink, err = openAuditLog(o.Audit, log); err != nil {
			return closeLn(fmt.Errorf("%w: %w", config.ErrInvalid, err))
		}
		s.auditPolicy = audit.NewPolicy(auditPolicy)
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		<-catalog
		return closeLn(fmt.Errorf("creating data directory %s: %w", o.DataDir, err))
	}
	// The store loads (at scale the start's largest cost) while the key
	// material is read or made and the types are registered; errors are
	// still reported in that order, the store closed on any of them.
	type opened struct {
		store bolt.Store
		err   error
	}
	transformer, transformErr := s.storeTransformer()
	store := make(chan opened, 1)
	switch {
	case transformErr != nil:
		store <- opened{}
	case shared != nil:
		store <- opened{store: shared}
	default:
		go func() {
			st, err := s.openStore(ctx, transformer)
			store <- opened{st, err}
		}()
	}
	closeStore := func(err error) (*Server, error) {
		if op := <-store; op.store != nil && shared == nil {
			_ = op.store.Close()
		}
		return closeLn(err)
	}
	tlsFiles, ca, keyErr := s.keyMaterial()
	// rh is the request-header configuration: the flags', or the
	// generated front proxy's, set as the flags would.
	rh := o.RequestHeader
	if keyErr == nil && makesFrontProxy(o) {
		fp := withFrontProxy(o)
		rh = fp.RequestHeader
		if keyErr = remote.trustProxy(fp); keyErr == nil {
			pre.proxyCert, keyErr = loadProxyClientCert(fp)
		}
	}
	// The admin kubeconfig is written and synced while the types are
	// registered and the store loads; it is put in place only when New
	// succeeds, and removed when it fails.
	var kubeconfig chan stagedFile
	if keyErr == nil {
		s.rootCA = s.servingCA(ca)
		s.ca = ca
		if o.WriteKubeconfig {
			kubeconfig = make(chan stagedFile, 1)
			go func() {
				f, err := s.stageKubeconfig(tlsFiles)
				kubeconfig <- stagedFile{f, err}
			}()
		}
	}
	defer func() {
		if kubeconfig != nil {
			if r := <-kubeconfig; r.f != nil {
				r.f.Discard()
			}
		}
	}()
	l := <-catalog
	if keyErr != nil {
		return closeStore(keyErr)
	}
	if l.err != nil {
		return closeStore(fmt.Errorf("loading schemas: %w", l.err))
	}
	cat := l.cat
	s.cat = cat
	if s.reg, err = servedRegistry(cat, o, enabled, described); err != nil {
		return closeStore(err)
	}
	roots := &clientRoots{ca: ca.Certificate(), file: clientCAs}
	s.trustFiles = clientCAs != nil || remote.proxyCA != nil
	s.trustNow = func() authenticationTrust {
		return authenticationTrust{clientCA: clientCAPEM(ca, clientCAs), proxyCA: remote.proxyCAPEM(), rh: rh}
	}

	if transformErr != nil {
		return closeStore(transformErr)
	}
	op := <-store
	if op.err != nil {
		return closeLn(op.err)
	}
	s.store, s.ownStore = op.store, shared == nil
	fail := func(err error) (*Server, error) {
		s.closeStore()
		return closeLn(err)
	}
	// Modes are repaired only once the lock shows no other platd uses
	// the directory (preflight refused what it must).
	if err := s.fixGeneratedModes(true); err != nil {
		return fail(err)
	}
	if err := s.adoptBrand(); err != nil {
		return fail(err)
	}
	s.pollObjectCounts()
	policies, webhooks := s.admissionPolicies(), s.admissionWebhooks()
	policyAdmission, mutatingAdmission, webhooks := s.admissionChains(o, policies, webhooks)
	if !o.AdmissionOff.Enabled(config.PluginValidatingAdmissionPolicy) {
		policies = nil
	}
	s.rest = rest.New(rest.Config{Store: timedStore{Storage: s.store, m: s.metrics}, Registry: s.reg, Brand: o.Brand, Log: log, Shutdown: s.stopping, Kinds: cat.ByGVK,
		WatchListDisabled: !o.FeatureGates.Enabled(config.WatchList), Compression: responseCompression(o),
		CBOR: o.FeatureGates.Enabled(config.CBORServingAndStorage), RequestedDeprecated: s.metrics.RequestedDeprecated,
		WatchEvents: func(group, version, kind string) rest.EventCounter {
			return s.metrics.WatchEvents(group, version, kind)
		},
		UnsafeDelete: o.FeatureGates.Enabled(config.AllowUnsafeMalformedObjectDeletion), KeyPrefix: o.StorageKeyPrefix(), Authorizer: serverChain{s},
		Policies: policyAdmission, Mutating: mutatingAdmission, Admission: o.AdmissionOff})
	s.agg = s.newAggregator(pre.proxyCert)
	if policies != nil {
		if err := s.followPolicies(policies); err != nil {
			return fail(err)
		}
	}
	if webhooks != nil {
		if err := s.followWebhooks(webhooks); err != nil {
			return fail(err)
		}
	}
	// Custom resources are served from the first request on: their
	// definitions are read before the socket opens.
	if s.crds, s.crdsFrom, err = s.customResources(); err != nil {
		return fail(err)
	}
	if s.replicas, err = s.newReplicaSet(); err != nil {
		return fail(err)
	}
	if s.replicas != nil && s.crds != nil {
		s.crds.Leading = s.leading
	}

	var saAuth security.TokenAuthenticator
	if s.sa, saAuth, err = s.serviceAccountTokens(); err != nil {
		return fail(err)
	}
	if d := s.reg.Lookup("", "v1", "serviceaccounts"); d != nil {
		if sr := d.Subresource(builtin.ServiceAccountTokenSubresource); sr != nil {
			sr.Answer = s.sa.tokenRequest(o.Brand, o.ServiceAccounts)
		}
	}
	// Token authenticators in upstream's order: bootstrap tokens follow
	// service-account tokens and precede the JWT authenticators (OIDC)
	// and the webhook.
	// Bootstrap and JWT tokens know no audiences: they answer for the API
	// audiences only.
	auds := o.ServiceAccounts.Audiences()
	tokenAuthns := []security.TokenAuthenticator{saAuth}
	for _, t := range append(s.bootstrapTokenAuthenticators(), jwtTokens(s.jwt)...) {
		tokenAuthns = append(tokenAuthns, security.AudienceAgnosticToken(auds, t))
	}
	tokenAuthns = append(tokenAuthns, remote.tokens...)
	s.authn = security.NewAuthenticator(security.AuthConfig{Brand: o.Brand, Front: remote.front, ClientRoots: roots.Pool, Tokens: tokens, TokenAuthenticators: tokenAuthns,
		Anonymous: o.AnonymousAuth, AnonymousPaths: o.AnonymousPaths, APIAudiences: auds})
	if s.authz, err = s.authorizer(o.AuthorizationModes); err != nil {
		return fail(err)
	}
	if s.flows, err = s.flowClassifier(); err != nil {
		return fail(err)
	}
	if s.flows != nil {
		s.hooks.finish(hookFlowControlConsumer)
	}
	if s.trackingTokens = s.legacyTokenTracking(); s.trackingTokens {
		s.hooks.finish(hookLegacyTokenTracking)
	}
	tlsConfig, err := security.ServerTLSConfig(tlsFiles.cert, tlsFiles.key, roots.Pool(), security.TLSPolicy{MinVersion: o.TLSMinVersion, CipherSuites: o.TLSCipherSuites})
	if err != nil {
		return fail(fmt.Errorf("loading serving certificate: %w", err))
	}
	offerClientCAs(tlsConfig, roots, remote.proxyCA)
	if o.ShutdownSendRetryAfter || o.ShutdownWatchTerminationGracePeriod > 0 {
		s.drain = filters.NewDrain(o.ShutdownWatchTerminationGracePeriod, o.ShutdownSendRetryAfter, s.rest.WriteError)
	}
	s.http = s.httpServer(s.handler(ctx, s.authn, s.authz), tlsConfig)
	if kubeconfig != nil {
		r := <-kubeconfig
		kubeconfig = nil
		if r.err == nil {
			r.err = r.f.Commit()
		}
		if r.err != nil {
			return fail(r.err)
		}
	}
	if s.jwt != nil {
		s.jwt.Start(ctx, o.AuthenticationConfigReloadInterval)
	}
	s.startAuthzReload(ctx, o.AuthorizationConfigReloadInterval)
	s.startEncryptionReload(ctx)
	return s, nil
}

// responseCompression is which get and list responses may be compressed:
// none with the APIResponseCompression gate off, else those to every
// client that asks unless loopback clients are left out.
func responseCompression(o config.Options) rest.Compression {
	switch {
	case !o.FeatureGates.Enabled(config.APIResponseCompression):
		return rest.CompressNone
	case o.NoLoopbackCompression:
		return rest.CompressRemote
	}
	return rest.CompressAll
}

type keyFiles struct{ cert, key, adminCert, adminKey string }

// keyMaterial creates or reuses the CA, the serving pair and the admin
// client pair.
func (s *Server) keyMaterial() (keyFiles, *security.CA, error) {
	o := s.opts
	if err := os.MkdirAll(o.CertDir, 0o700); err != nil {
		return keyFiles{}, nil, fmt.Errorf("creating %s: %w", o.CertDir, err)
	}
	// Replicas started together on one key directory must not each
	// create a CA, pair or signing key over another's.
	unlock, err := security.LockDir(o.CertDir)
	if err != nil {
		return keyFiles{}, nil, fmt.Errorf("locking %s: %w", o.CertDir, err)
	}
	defer unlock()
	// The front proxy's CA and pair are independent of the rest: a first
	// start makes them (their synced files) alongside, done before the
	// directory is unlocked whatever the outcome.
	frontProxy := make(chan error, 1)
	if makesFrontProxy(o) {
		go func() { frontProxy <- ensureFrontProxy(o.CertDir) }()
	} else {
		frontProxy <- nil
	}
	frontProxyDone := false
	defer func() {
		if !frontProxyDone {
			<-frontProxy
		}
	}()
	if o.ServiceAccounts.SigningKey == nil {
		if _, err := security.EnsureServiceAccountKey(filepath.Join(o.CertDir, security.ServiceAccountKeyName)); err != nil {
			return keyFiles{}, nil, err
		}
	}
	ca, err := security.EnsureCA(o.CertDir)
	if err != nil {
		return keyFiles{}, nil, fmt.Errorf("preparing the CA in %s: %w", o.CertDir, err)
	}
	f := keyFiles{
		cert: o.TLSCertFile, key: o.TLSPrivateKeyFile,
		adminCert: filepath.Join(o.CertDir, adminCertName), adminKey: filepath.Join(o.CertDir, adminKeyName),
	}
	// The serving and admin pairs are independent: a first start makes
	// them (four synced files) side by side.
	var servingErr error
	served := make(chan struct{})
	if f.cert == "" {
		f.cert, f.key = filepath.Join(o.CertDir, servingCertName), filepath.Join(o.CertDir, servingKeyName)
	}
	if o.TLSCertFile != "" || security.IssuedElsewhere(f.cert, f.key) {
		// As upstream, a pair put in the cert directory by someone else
		// (envtest writes one) is served as it is.
		close(served)
	} else {
		hosts := append(security.DefaultHosts(), o.TLSSANs...)
		if ip := net.ParseIP(o.BindAddress); ip != nil && !ip.IsUnspecified() {
			hosts = append(hosts, o.BindAddress)
		}
		go func() {
			defer close(served)
			servingErr = ca.EnsureServingCert(f.cert, f.key, hosts)
		}()
	}
	clientErr := ca.EnsureClientCert(f.adminCert, f.adminKey, adminUser, []string{security.SystemPrivilegedGroup})
	<-served
	if servingErr != nil {
		return keyFiles{}, nil, fmt.Errorf("preparing the serving certificate: %w", servingErr)
	}
	if clientErr != nil {
		return keyFiles{}, nil, fmt.Errorf("preparing the admin client certificate: %w", clientErr)
	}
	frontProxyDone = true
	if err := <-frontProxy; err != nil {
		return keyFiles{}, nil, err
	}
	return f, ca, nil
}

// servingCA returns the PEM bundle that verifies the serving certificate:
// the data directory's CA, or for an operator-supplied serving certificate
// the CA bundle next to it when there is one.
func (s *Server) servingCA(ca *security.CA) []byte {
	if s.opts.TLSCertFile != "" {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(s.opts.TLSCertFile), caCertName)); err == nil {
			return b
		}
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Certificate().Raw})
}

// stagedFile is a kubeconfig written beside its path, or why it is not.
type stagedFile struct {
	f   *security.StagedFile
	err error
}

// stageKubeconfig writes the admin kubeconfig pointing at this server
// beside its path; Commit puts it in place.
func (s *Server) stageKubeconfig(f keyFiles) (*security.StagedFile, error) {
	certPEM, err := os.ReadFile(f.adminCert)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(f.adminKey)
	if err != nil {
		return nil, err
	}
	path := s.opts.KubeconfigPath()
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s.kubeconfig = path
	return security.StageKubeconfig(path, security.Kubeconfig{
		ClusterName: s.opts.Brand.ClusterName, Server: s.url, CAPEM: s.rootCA,
		ClientCertPEM: certPEM, ClientKeyPEM: keyPEM, User: adminUser,
	})
}

// URL is the server's https:// base URL.
func (s *Server) URL() string { return s.url }

// KubeconfigPath is where the admin kubeconfig was written.
func (s *Server) KubeconfigPath() string { return s.kubeconfig }

// Store is the storage engine (for tests and tools in this module).
func (s *Server) Store() bolt.Store { return s.store }

// Serve answers requests until ctx ends, then shuts down (lifecycle.go):
// readyz fails, requests are still served for the shutdown delay, then the
// server stops taking requests, watches end, in-flight requests finish,
// controllers stop and the database is closed. A serving error or a fatal
// error skips the delay.
func (s *Server) Serve(ctx context.Context) error {
	ctrlCtx, stopControllers := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	s.background.start(ctrlCtx, &wg)
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.startControllers(ctrlCtx)
	}()
	if s.crds != nil {
		// CRD writes wait for this controller: it runs from the first
		// request on, as part of the API server itself.
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.hooks.finish(hookCRDInformers, hookCRDControllers)
			s.informers.finish(crdInformer)
			s.crds.Run(rest.WithManager(ctrlCtx, s.opts.Brand.FieldManager), s.crdsFrom)
		}()
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.http.ServeTLS(s.ln, "", "") }()
	s.log.Info("serving", "url", s.url, "brand", s.opts.Brand.Name)

	err := s.awaitShutdown(ctx, serveErr)
	s.started()
	s.stopServing()
	if s.auditSink != nil {
		if aerr := s.auditSink.Close(); aerr != nil {
			s.log.Error("closing the audit log", "err", aerr)
		}
	}
	stopControllers()
	wg.Wait()
	for _, release := range s.stopHooks {
		release()
	}
	s.agg.Close()
	if cerr := s.closeStore(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the database: %w", cerr)
	}
	s.log.Info("stopped")
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// startScavengeDelay is how long after the default policy is written the
// start's garbage goes back to the OS. The controllers start then: their
// first lists and the objects they write at a first start (service
// accounts, root CA config maps, the API server's endpoints) take a few
// hundred milliseconds on a small store, so the scavenge usually follows
// them; on a large store it may come during their first pass, whose
// garbage then stays until the heap next grows.
const startScavengeDelay = time.Second

// startControllers ensures the default namespaces and runs the in-process
// controllers until ctx ends.
func (s *Server) startControllers(ctx context.Context) {
	b := s.opts.Brand
	// The system objects are cluster-scoped: they are written while the
	// namespaces are, so a first start pays for their commits once.
	seeded := make(chan struct{})
	go func() {
		defer close(seeded)
		s.plantSeeds(ctx)
	}()
	// The default RBAC policy is built and written beside them, not ahead
	// of the namespaces; requests are served meanwhile, as upstream's
	// post-start hook lets them.
	var rbacWG sync.WaitGroup
	rbacWG.Add(1)
	go func() {
		defer rbacWG.Done()
		rb := s.rbacBootstrap()
		if rb == nil {
			close(s.rbacDone)
			return
		}
		s.writeRBACPolicy(ctx, rb)
	}()
	defer rbacWG.Wait()
	var nsWG sync.WaitGroup
	var nsFailed atomic.Bool
	for _, ns := range []string{"default", b.SystemNamespace, b.PublicNamespace, b.NodeLeaseNamespace} {
		nsWG.Add(1)
		go func() {
			defer nsWG.Done()
			if !s.hookWork(ctx, hookNamespaces, "creating the namespace "+ns, 0, func() error { return s.rest.EnsureNamespace(ctx, ns) }) {
				nsFailed.Store(true)
			}
		}()
	}
	// What the kept objects should be is worked out while the namespaces
	// are written.
	kept := &controllers.Kept{Source: s.store, Objects: s.rest, Wanted: s.keptWanted(), Log: s.log}
	trust0 := s.trustNow()
	if trust, ok, err := s.authenticationTrustObject(trust0); err != nil {
		s.log.Error("publishing the authentication configuration", "configmap", AuthenticationConfigMap, "err", err)
	} else if ok {
		kept.Wanted = append(kept.Wanted, trust)
	}
	nsWG.Wait()
	if nsFailed.Load() {
		return
	}
	s.hooks.finish(hookNamespaces)
	// The API's own Service exists before the server is ready, so its
	// cluster IP is never handed to another service; cluster-info is
	// written beside it.
	var infoWG sync.WaitGroup
	infoWG.Add(1)
	go func() {
		defer infoWG.Done()
		s.writeClusterInfo(ctx)
	}()
	ok := s.hookWork(ctx, hookBootstrap, "creating the API server's service", 0, func() error { return kept.EnsureAll(ctx) })
	infoWG.Wait()
	if !ok {
		return
	}
	s.hooks.finish(hookAuthInfo, hookBootstrap)
	<-seeded
	// The controllers start once the last start-up hook (the default
	// policy) has passed, as upstream's controller manager waits for a
	// healthy API server: at scale their first lists (the garbage
	// collector reads every object) would take the cores from the work
	// readiness waits for.
	select {
	case <-s.rbacDone:
	case <-ctx.Done():
		return
	}
	// The start's one-off work (the default policy, the seeds, then the
	// controllers' first lists and the writes they make) leaves garbage
	// several times the live heap: the collector's setting returns now,
	// and the garbage goes back to the OS a little later (see
	// startScavengeDelay), so an idle server holds only what it keeps.
	s.started()
	close(s.startDone)
	go func() {
		t := time.NewTimer(startScavengeDelay)
		defer t.Stop()
		select {
		case <-t.C:
			// The first collection moves what the start's bursts left in
			// sync.Pools (bbolt's page buffers among them) to the pools'
			// victim caches; the second, FreeOSMemory's, frees them.
			runtime.GC()
			debug.FreeOSMemory()
		case <-ctx.Done():
		}
	}()
	var runs []func(context.Context)
	on := s.opts.ControllerEnabled
	if on(config.ControllerNamespace) {
		runs = append(runs, (&controllers.Namespaces{Source: s.store, Objects: s.rest, Registry: s.reg, Finalizer: b.NamespaceFinalizer, Log: s.log}).Run)
	}
	if sa := s.reg.Lookup("", "v1", "serviceaccounts"); sa != nil && on(config.ControllerServiceAccount) {
		runs = append(runs, (&controllers.ServiceAccounts{Source: s.store, Objects: s.rest, Registry: s.reg, ServiceAccounts: sa, Log: s.log}).Run)
	}
	if cm := s.reg.Lookup("", "v1", "configmaps"); cm != nil && on(config.ControllerRootCA) {
		runs = append(runs, (&controllers.RootCA{Source: s.store, Objects: s.rest, Registry: s.reg, ConfigMaps: cm,
			Name: b.RootCAConfigMap, Annotation: b.Label("description"), Description: b.RootCADescription, CA: s.rootCA, Log: s.log}).Run)
	}
	if t := s.legacyTokens(); t != nil && on(config.ControllerServiceAccountToken) {
		runs = append(runs, t.Run)
	}
	if on(config.ControllerGarbageCollector) {
		runs = append(runs, (&controllers.GarbageCollector{Source: s.store, Objects: s.rest, Registry: s.reg, Log: s.log}).Run)
	}
	if on(config.ControllerDeletionGrace) {
		runs = append(runs, (&controllers.DeletionGrace{Source: s.store, Objects: s.rest, Registry: s.reg, Log: s.log}).Run)
	}
	if cr := s.reg.Lookup(b.Group("rbac.authorization"), "v1", "clusterroles"); cr != nil && on(config.ControllerClusterRoleAggregation) {
		runs = append(runs, (&controllers.ClusterRoleAggregation{Source: s.store, Objects: s.rest, ClusterRoles: cr, Log: s.log}).Run)
	}
	if s.reg.Quotas() != nil && on(config.ControllerResourceQuota) {
		runs = append(runs, (&controllers.ResourceQuotas{Source: s.store, Objects: s.rest, Registry: s.reg, Log: s.log}).Run)
	}
	if pol := s.reg.Lookup(b.Group("admissionregistration"), "v1", "validatingadmissionpolicies"); pol != nil && on(config.ControllerPolicyStatus) {
		runs = append(runs, (&controllers.PolicyTypeChecking{Source: s.store, Objects: s.rest, Applier: s.rest, Policies: pol,
			Kind: s.servedKind, Schemas: s.oa.KindSchemas, Log: s.log}).Run)
	}
	if c := s.csrSigning(); c != nil && on(config.ControllerCSRSigning) {
		runs = append(runs, c.Run)
	}
	if d := s.reg.Lookup(b.Group("certificates"), "v1", "certificatesigningrequests"); d != nil {
		if on(config.ControllerCSRApproving) {
			runs = append(runs, (&controllers.CSRApproving{Source: s.store, Objects: s.rest, Requests: d, Authorizer: s.authz,
				Signer: b.Label("kube-apiserver-client-kubelet"), Log: s.log}).Run)
		}
		if on(config.ControllerCSRCleaner) {
			runs = append(runs, (&controllers.CSRCleaning{Source: s.store, Objects: s.rest, Requests: d, Log: s.log}).Run)
		}
	}
	if m := s.mirroring(); m != nil && on(config.ControllerEndpointSliceMirroring) {
		runs = append(runs, m.Run)
	}
	runs = append(runs, s.bootstrapControllers()...)
	if p := s.protection(); p != nil {
		runs = append(runs, p.Run)
	}

	// The controllers' writes are recorded as the controller manager's,
	// the kept objects' as the API server's own.
	lead := func(ctx context.Context) {
		cctx := rest.WithManager(ctx, b.ControllerManager)
		var wg sync.WaitGroup
		// The API server's own Service is kept by the server itself, as
		// upstream's bootstrap controller: it cannot be switched off.
		wg.Add(1)
		go func() {
			defer wg.Done()
			kept.Run(ctx)
		}()
		// The published CAs follow the files as the authenticators do.
		if s.trustFiles {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.followTrust(ctx, kept, trust0)
			}()
		}
		// So is the availability of aggregated APIServices, as upstream's
		// aggregator keeps it.
		if a := s.availability(); a != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.Run(ctx)
			}()
		}
		// Events expire one --event-ttl after their last write, as
		// upstream's storage leases them: the server's own doing, which
		// no --controllers entry switches off.
		if x := s.expiry(); x != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				x.Run(ctx)
			}()
		}
		// And the bootstrap flow-control configuration, as upstream's
		// configuration producer keeps it.
		if fc := s.flowControlKeeper(); fc != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fc.Run(ctx)
			}()
		}
		for _, run := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(cctx)
			}()
		}
		wg.Wait()
	}
	if s.replicas == nil {
		lead(ctx)
		return
	}
	// With replicas they run on the elected leader only.
	s.runReplicated(ctx, lead)
}

// expiry is the controller that removes the objects of types that expire
// after their last write; nil when --event-ttl is 0 or no such type is
// served.
func (s *Server) expiry() *controllers.Expiry {
	if s.opts.EventTTL <= 0 {
		return nil
	}
	var prefixes []string
	for _, d := range s.reg.All() {
		if d.ExpiresAfterWrite && d.Stored() && !slices.Contains(prefixes, d.ResourcePrefix()) {
			prefixes = append(prefixes, d.ResourcePrefix())
		}
	}
	if len(prefixes) == 0 {
		return nil
	}
	return &controllers.Expiry{Source: s.store, Store: s.store, Prefixes: prefixes, TTL: s.opts.EventTTL, Log: s.log}
}

// availability is the controller that keeps the Available condition of
// APIServices that name a service; nil when one of the types it reads is
// not served.
func (s *Server) availability() *controllers.APIServiceAvailability {
	a := &controllers.APIServiceAvailability{Source: s.store, Objects: s.rest, Log: s.log,
		CheckDiscovery: s.agg.CheckDiscovery, Forget: s.agg.Forget,
		APIServices: s.reg.Lookup(s.opts.Brand.Group("apiregistration"), "v1", "apiservices"),
		Services:    s.reg.Lookup("", "v1", "services"), Endpoints: s.reg.Lookup("", "v1", "endpoints")}
	if a.APIServices == nil || a.Services == nil || a.Endpoints == nil {
		return nil
	}
	return a
}

// mirroring is the controller that mirrors the Endpoints of services
// without a selector to EndpointSlices; nil when one of the three types
// is not served.
func (s *Server) mirroring() *controllers.EndpointSliceMirroring {
	m := &controllers.EndpointSliceMirroring{Source: s.store, Objects: s.rest, Brand: s.opts.Brand, Log: s.log,
		Endpoints: s.reg.Lookup("", "v1", "endpoints"), Services: s.reg.Lookup("", "v1", "services"),
		Slices: s.reg.Lookup(s.opts.Brand.Group("discovery"), "v1", "endpointslices")}
	if m.Endpoints == nil || m.Services == nil || m.Slices == nil {
		return nil
	}
	return m
}

// csrSigning is the controller that signs approved certificate signing
// requests with the data directory's CA for the signers of API clients,
// kubelets' clients and kubelets' serving, and the legacy signer; nil
// when the requests are not served.
func (s *Server) csrSigning() *controllers.CSRSigning {
	b := s.opts.Brand
	d := s.reg.Lookup(b.Group("certificates"), "v1", "certificatesigningrequests")
	if d == nil || s.ca == nil {
		return nil
	}
	ttl := s.opts.ClusterSigningDuration
	if ttl == 0 {
		ttl = config.DefaultClusterSigningDuration
	}
	return &controllers.CSRSigning{Source: s.store, Objects: s.rest, Requests: d, CA: s.ca, TTL: ttl, Log: s.log,
		Signers: map[string]controllers.SignerRule{
			b.Label("kube-apiserver-client"):         security.ClientRequest,
			b.Label("kube-apiserver-client-kubelet"): security.KubeletClientRequest,
			b.Label("kubelet-serving"):               security.KubeletServingRequest,
			// Requests for the legacy signer follow no rule, as upstream's.
			b.Label("legacy-unknown"): func(*x509.CertificateRequest, []string) error { return nil },
		}}
}

// protection is the controller that releases the protection finalizers
// of claims and volumes, with the halves --controllers leaves on; nil when
// both are off.
func (s *Server) protection() *controllers.ClaimProtection {
	b, on := s.opts.Brand, s.opts.ControllerEnabled
	claim, volume := builtin.ProtectionFinalizers(b)
	p := &controllers.ClaimProtection{Source: s.store, Objects: s.rest, Registry: s.reg, Pods: s.reg.Lookup("", "v1", "pods"),
		ClaimFinalizer: claim, VolumeFinalizer: volume, Log: s.log}
	if on(config.ControllerClaimProtection) {
		p.Claims = s.reg.Lookup("", "v1", "persistentvolumeclaims")
	}
	if on(config.ControllerVolumeProtection) {
		p.Volumes = s.reg.Lookup("", "v1", "persistentvolumes")
	}
	if p.Claims == nil && p.Volumes == nil {
		return nil
	}
	return p
}

// apiServer says where in-cluster clients reach this server: the first
// address of the service range, and the advertised address and port.
func (s *Server) apiServer() controllers.APIServer {
	ranges := serviceRanges(s.opts)
	a := controllers.APIServer{ServiceIP: ranges.ClusterIPs.At(0), Port: s.ln.Addr().(*net.TCPAddr).Port}
	addr, err := advertiseAddress(s.opts.AdvertiseAddress, s.opts.BindAddress, ranges.ClusterIPs.Is6())
	if err != nil {
		s.log.Warn("no address to advertise: the API server's Endpoints and EndpointSlice are not kept", "err", err)
		return a
	}
	a.Address = addr
	return a
}

// healthChecks registers the checks of /livez, /readyz and /healthz in
// upstream's order: ping, log, etcd, (readyz) etcd-readiness and
// informer-sync, the start-up hooks (see startHooks), (readyz) shutdown.
func (s *Server) healthChecks(hooks []string) *health.Registry {
	hr := health.NewRegistry(s.log)
	hr.QuietWhileLogStuck(s.logWatch)
	all := []string{health.Livez, health.Readyz, health.Healthz}
	storage, storageReady := s.storageChecks()
	must(hr.Add(all, health.Ping, s.logWatch.Check(), storage))
	must(hr.Add([]string{health.Readyz}, storageReady, health.InformerSync(s.informers.pending)))
	checks := make([]health.Check, len(hooks))
	for i, name := range hooks {
		switch name {
		case rbacBootstrapHook:
			checks[i] = health.Hook(name, s.rbacDone)
		case autoregisterCompletion:
			checks[i] = health.Awaits(name, s.hooks.ch(hookAutoregistration))
		case hookAPIServiceRegistration:
			checks[i] = health.Hook(name, s.hooks.ch(hookAutoregistration))
		default:
			checks[i] = health.Hook(name, s.hooks.ch(name))
		}
	}
	must(hr.Add([]string{health.Readyz, health.Healthz}, checks...))
	// On livez the hooks pass during --livez-grace-period from now, as
	// upstream counts it from when its checks are registered.
	if g := s.opts.LivezGracePeriod; g > 0 {
		until := time.Now().Add(g)
		for i, c := range checks {
			checks[i] = health.Grace(c, until)
		}
	}
	must(hr.Add([]string{health.Livez}, checks...))
	must(hr.Add([]string{health.Readyz}, health.Shutdown(s.shuttingDown)))
	return hr
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// openAuditLog starts the writer of audit events: the --audit-log-path
// file, rotated as the flags say, or standard output for "-".
func openAuditLog(a config.AuditLog, log *slog.Logger) (*audit.Backend, error) {
	if a.Path == "-" {
		return audit.NewBackend(audit.NewStreamWriter(os.Stdout), log), nil
	}
	f, err := audit.OpenLogFile(a.Path, a.MaxSize, a.MaxBackup, a.MaxAge, nil)
	if err != nil {
		return nil, fmt.Errorf("--audit-log-path: %w", err)
	}
	return audit.NewBackend(f, log), nil
}

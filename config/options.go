package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Authorization modes accepted by --authorization-mode.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeABAC        = "ABAC"
	ModeNode        = "Node"
	ModeRBAC        = "RBAC"
	ModeWebhook     = "Webhook"
)

// AuthorizationModeNames are the modes in the order upstream lists them.
var AuthorizationModeNames = []string{ModeAlwaysAllow, ModeAlwaysDeny, ModeABAC, ModeWebhook, ModeRBAC, ModeNode}

// DefaultHistoryRetention is how long the watch history is kept: five
// minutes, the compaction interval clients of the upstream server expect
// (a relist after a 410 is cheap, a longer ring costs memory).
const DefaultHistoryRetention = 5 * time.Minute

// DefaultWatchHistoryMaxBytes is --watch-history-max-bytes's default, the
// storage engine's (bolt.DefaultHistoryMaxBytes, which says why): the bytes
// of replaced values the watch history keeps in memory.
const DefaultWatchHistoryMaxBytes = 32 << 20

// DefaultStorageDefragThreshold is --storage-defrag-threshold's default:
// the database file is rewritten online once it is more than twice its
// live data, when half the disk it takes is free.
const DefaultStorageDefragThreshold = 2.0

// Options is the validated configuration of `platd serve`.
type Options struct {
	// DataDir holds the database, key material and the admin kubeconfig.
	DataDir string
	// DataDirDefault says DataDir is the flag's default, not the
	// operator's choice: with etcd and a --cert-dir, Validate makes the
	// cert directory the data directory, as an upstream command line
	// names no other directory and platd then keeps no objects of its own.
	DataDirDefault bool
	// SecurePort is the HTTPS port; 0 picks a free one (tests).
	SecurePort int
	// BindAddress is the IP to listen on.
	BindAddress string
	// AdvertiseAddress is the IP the API's Endpoints name; "" chooses
	// one (the bind address, else an interface's).
	AdvertiseAddress string
	// TLSCertFile and TLSPrivateKeyFile are an operator-supplied serving
	// pair; when empty a pair signed by the data directory's CA is used.
	TLSCertFile       string
	TLSPrivateKeyFile string
	// CertDir holds the generated key material.
	CertDir string
	// TLSSANs are extra names and IPs for the generated serving certificate.
	TLSSANs []string
	// TLSMinVersionName and TLSCipherSuiteNames are --tls-min-version and
	// --tls-cipher-suites as given; Validate parses them into
	// TLSMinVersion and TLSCipherSuites (DefaultTLSCipherSuites without
	// the flag).
	TLSMinVersionName   string
	TLSCipherSuiteNames []string
	TLSMinVersion       uint16
	TLSCipherSuites     []uint16
	// ClientCAFile is an extra CA bundle trusted for client certificates,
	// besides the data directory's own CA.
	ClientCAFile string
	// ProxyClientCertFile and ProxyClientKeyFile are the client
	// certificate presented to extension API servers when requests are
	// proxied to them; when empty none is presented.
	ProxyClientCertFile string
	ProxyClientKeyFile  string
	// AggregatorAllowRedirects hands an extension API server's redirects
	// to the client (--aggregator-reject-forwarding-redirect=false); the
	// zero value answers them 502, upstream's default.
	AggregatorAllowRedirects bool
	// EnableAggregatorRouting is accepted for upstream's command lines:
	// requests for extension servers always go to an endpoint of the
	// service, as upstream routes with it set.
	EnableAggregatorRouting bool
	// TokenAuthFile is the static token CSV file.
	TokenAuthFile string
	// EnableBootstrapTokenAuth lets bootstrap token secrets authenticate.
	EnableBootstrapTokenAuth bool
	// AuthenticationConfigFile is --authentication-config: JWT
	// authenticators, re-read when the file changes.
	AuthenticationConfigFile string
	// AuthenticationConfigReloadInterval is how often that file is
	// re-read; 0 means the default minute (tests shorten it).
	AuthenticationConfigReloadInterval time.Duration
	// OIDC are the legacy --oidc-* flags.
	OIDC OIDCFlags
	// TokenWebhook and RequestHeader configure the token webhook and the
	// authenticating proxy (authnremote.go).
	TokenWebhook  TokenWebhook
	RequestHeader RequestHeader
	// AnonymousAuth lets requests without credentials in as system:anonymous.
	AnonymousAuth bool
	// Warnings are what Validate changed or found doubtful without
	// refusing; the server logs them at start.
	Warnings []string
	// Audit is the --audit-* flags.
	Audit AuditLog
	// AnonymousAuthSet says --anonymous-auth was given on the command
	// line: then the authentication configuration file may not say it.
	AnonymousAuthSet bool
	// AnonymousPaths, filled from the file's anonymous conditions, limits
	// anonymous requests to these exact paths.
	AnonymousPaths []string
	// AuthorizationModes is the ordered authorizer chain; unused (and
	// cleared by Validate) with AuthorizationConfigFile.
	AuthorizationModes []string
	// AuthorizationModesSet says --authorization-mode was given on the
	// command line: then --authorization-config may not be.
	AuthorizationModesSet bool
	// AuthorizationWebhook is the --authorization-webhook-* flags.
	AuthorizationWebhook AuthorizationWebhook
	// AuthorizationConfigFile is --authorization-config: the authorizer
	// chain, re-read when the file changes.
	AuthorizationConfigFile string
	// AuthorizationConfigReloadInterval is how often that file is
	// re-read; 0 means the default minute (tests shorten it).
	AuthorizationConfigReloadInterval time.Duration
	// AuthorizationPolicyFile is the ABAC policy file, required by and
	// only allowed with the ABAC mode; Validate reads it into ABACPolicies.
	AuthorizationPolicyFile string
	ABACPolicies            []ABACPolicy
	// EncryptionProviderConfigFile is --encryption-provider-config: which
	// resources are encrypted in the data file. Validate reads it into
	// Encryption (nil without the flag: nothing is encrypted).
	EncryptionProviderConfigFile string
	Encryption                   *EncryptionConfiguration
	// AdmissionControlConfigFile is --admission-control-config-file: an
	// AdmissionConfiguration holding admission plugins' configurations.
	// Validate reads it into Admission (every plugin's default without
	// the flag).
	AdmissionControlConfigFile string
	Admission                  AdmissionPlugins
	// EnableAdmissionPlugins and DisableAdmissionPlugins are
	// --enable-admission-plugins and --disable-admission-plugins,
	// upstream's plugin names (a value may hold several separated by
	// commas). Validate reads them into AdmissionOff.
	EnableAdmissionPlugins  []string
	DisableAdmissionPlugins []string
	// AdmissionOff are the admission plugins that do not run (nil:
	// upstream's default set runs).
	AdmissionOff AdmissionPluginsOff
	// ForbidPrivileged is --allow-privileged=false: containers asking
	// for privileged mode are refused by validation.
	ForbidPrivileged bool
	// EncryptionConfigReload is --encryption-provider-config-automatic-reload:
	// the file is re-read every EncryptionConfigReloadInterval (0: the
	// default minute; tests shorten it).
	EncryptionConfigReload         bool
	EncryptionConfigReloadInterval time.Duration
	// Brand is the chosen brand.
	Brand Brand
	// HistoryRetention is how long watch history stays replayable.
	HistoryRetention time.Duration
	// WatchHistoryMaxBytes bounds the memory the watch history keeps (the
	// values its events replaced); past it the oldest events are compacted
	// before their retention ends. 0 means DefaultWatchHistoryMaxBytes,
	// below 0 no bound.
	WatchHistoryMaxBytes int64
	// UnsafeNoFsync skips fsync: a crash can lose acknowledged writes.
	UnsafeNoFsync bool
	// StorageBackend is --storage-backend: StorageBackendBBolt (Validate
	// fills it in) or StorageBackendETCD3, which Etcd configures.
	StorageBackend string
	Etcd           EtcdOptions
	// StorageDefragThreshold is the ratio of the database file's size to
	// its live data above which the file is rewritten online; 0 turns the
	// rewrites off.
	StorageDefragThreshold float64
	// WriteKubeconfig writes <DataDir>/admin.kubeconfig at start.
	WriteKubeconfig bool
	// RuntimeConfig is --runtime-config as given: values of comma-separated
	// key[=value] entries that switch API groups, versions and resources.
	RuntimeConfig []string
	// Controllers picks the in-process controllers that run, as
	// kube-controller-manager's --controllers: "*", "name", "-name".
	Controllers []string
	// ClusterSigningDuration is the longest validity of a certificate
	// issued for a signing request (--cluster-signing-duration); a request
	// may ask for less. 0 means DefaultClusterSigningDuration.
	ClusterSigningDuration time.Duration
	// Replicas times leader election and identity leases when replicas
	// share the store.
	Replicas Replicas
	// APIEnablement is RuntimeConfig parsed; Validate fills it. The server
	// resolves it against its registry with RuntimeConfig.Resolve.
	APIEnablement RuntimeConfig
	// ServiceClusterIPRange and ServiceNodePortRange are the service range
	// flags as given ("" for the default); Validate parses them into
	// ServiceCIDR and NodePorts.
	ServiceClusterIPRange string
	ServiceNodePortRange  string
	ServiceCIDR           netip.Prefix
	NodePorts             PortRange
	// ServiceAccounts are the service-account token flags.
	ServiceAccounts ServiceAccountOptions
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight cap the reads
	// and writes served at once (beyond them: 429); 0 means no cap.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// RequestTimeout bounds every request that is not long-running
	// (beyond it: 504); ?timeout= may only shorten it. 0 means no bound.
	RequestTimeout time.Duration
	// EventTTL is how long an event is kept after its last write
	// (--event-ttl); 0 keeps events until they are deleted.
	EventTTL time.Duration
	// HTTP2MaxStreamsPerConnection is how many streams one HTTP/2
	// connection may have open at once (--http2-max-streams-per-connection);
	// 0 means upstream's 100.
	HTTP2MaxStreamsPerConnection int
	// GoawayChance is the fraction of HTTP/2 requests answered with
	// GOAWAY (--goaway-chance), so clients behind a load balancer spread
	// over its servers; 0 is off.
	GoawayChance float64
	// Conn holds the connection timeouts no flag sets.
	Conn ConnTimeouts
	// ShutdownDelayDuration is how long requests are still served after
	// SIGTERM while readyz already fails.
	ShutdownDelayDuration time.Duration
	// ShutdownSendRetryAfter keeps the listener open after the delay until
	// in-flight requests have drained, answering new ones 429 with
	// Retry-After, as upstream's --shutdown-send-retry-after.
	ShutdownSendRetryAfter bool
	// ShutdownWatchTerminationGracePeriod is how long open watches get to
	// end, paced, once the server stops taking requests; 0 ends them at
	// once without waiting.
	ShutdownWatchTerminationGracePeriod time.Duration
	// LivezGracePeriod is how long after start /livez reports the
	// start-up hooks as passing whether they finished or not.
	LivezGracePeriod time.Duration
	// NoLoopbackCompression keeps responses to clients on the loopback
	// interface uncompressed (--compress-loopback-responses=false): both
	// ends share the machine's CPU and the link costs nothing. Upstream
	// compresses for every client; so does the zero value.
	NoLoopbackCompression bool
	// FeatureGatesFlag is --feature-gates as given; Validate parses it
	// into FeatureGates and appends its warnings to Warnings.
	FeatureGatesFlag []string
	FeatureGates     FeatureGates
	// LogLevel is the least severe level logged (--log-level); at debug
	// every request is logged too.
	LogLevel slog.Level
}

// AnonymousResetWarning is upstream's warning when AlwaysAllow turns the
// default anonymous access off.
const AnonymousResetWarning = "AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer"

// ErrInvalid marks configuration errors: the command exits with code 2.
var ErrInvalid = errors.New("invalid configuration")

// DBPath is the bbolt file.
func (o *Options) DBPath() string { return filepath.Join(o.DataDir, "platd.db") }

// KubeconfigPath is the admin kubeconfig written at start.
func (o *Options) KubeconfigPath() string { return filepath.Join(o.DataDir, "admin.kubeconfig") }

// Validate checks the options for contradictions and fills derived values.
// Every error wraps ErrInvalid and says what to change.
func (o *Options) Validate() error {
	var errs []string
	// Gates first: later checks depend on them.
	gates, gateWarnings, gateErr := parseFeatureGates(o.FeatureGatesFlag)
	if gateErr != nil {
		errs = append(errs, "--feature-gates: "+gateErr.Error())
	}
	o.FeatureGates = gates
	if o.DataDir == "" {
		errs = append(errs, "--data-dir must not be empty")
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Sprintf("--secure-port %d must be between 1 and 65535, inclusive (0 picks a free port)", o.SecurePort))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Sprintf("--bind-address %q is not an IP address, such as 127.0.0.1 or 0.0.0.0", o.BindAddress))
	}
	if o.AdvertiseAddress != "" {
		if ip := net.ParseIP(o.AdvertiseAddress); ip == nil || ip.IsUnspecified() || ip.IsLoopback() {
			errs = append(errs, fmt.Sprintf("--advertise-address %q must be an IP address that is neither unspecified nor loopback", o.AdvertiseAddress))
		}
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, "--tls-cert-file and --tls-private-key-file must be given together")
	}
	if (o.ProxyClientCertFile == "") != (o.ProxyClientKeyFile == "") {
		errs = append(errs, "--proxy-client-cert-file and --proxy-client-key-file must be given together")
	}
	if o.TLSCertFile != "" && len(o.TLSSANs) > 0 {
		errs = append(errs, "--tls-san applies only to the generated serving certificate; it cannot be combined with --tls-cert-file")
	}
	errs = append(errs, validateTLSSANs(o.TLSSANs)...)
	errs = append(errs, o.validateTLS()...)
	errs = append(errs, o.validateAuthorization()...)
	errs = append(errs, o.Audit.validate()...)
	if o.AuthorizationConfigFile != "" {
		// The file names the chain; the flag's default does not apply.
		o.AuthorizationModes = nil
	} else if len(o.AuthorizationModes) == 0 {
		errs = append(errs, "--authorization-mode must name at least one mode")
	}
	seen := map[string]bool{}
	for _, m := range o.AuthorizationModes {
		if !slices.Contains(AuthorizationModeNames, m) {
			errs = append(errs, fmt.Sprintf("--authorization-mode: unknown mode %q: supported modes are %s", m, strings.Join(AuthorizationModeNames, ", ")))
		}
		if seen[m] {
			errs = append(errs, fmt.Sprintf("--authorization-mode: %q is listed more than once", m))
		}
		seen[m] = true
	}
	if seen[ModeABAC] && o.AuthorizationPolicyFile == "" {
		errs = append(errs, "authorization-mode ABAC's authorization policy file not passed")
	}
	// With --authorization-config the file's ABAC entry reads the policy
	// file; whether it has one is checked when the chain is built.
	if o.AuthorizationPolicyFile != "" && !seen[ModeABAC] && o.AuthorizationConfigFile == "" {
		errs = append(errs, "cannot specify --authorization-policy-file without mode ABAC")
	}
	if o.AnonymousAuth && seen[ModeAlwaysAllow] {
		// Anonymous requests are on by default: AlwaysAllow turns them off
		// with upstream's warning, and refuses only an explicit request.
		if o.AnonymousAuthSet {
			errs = append(errs, "--anonymous-auth=true is not allowed with the AlwaysAllow authorizer: every request without credentials would be allowed; choose another --authorization-mode, or drop --anonymous-auth to turn anonymous requests off")
		} else {
			o.AnonymousAuth = false
			o.Warnings = append(o.Warnings, AnonymousResetWarning)
		}
	}
	if o.HistoryRetention <= 0 {
		errs = append(errs, fmt.Sprintf("--history-retention %s must be positive, such as 5m", o.HistoryRetention))
	}
	if t := o.StorageDefragThreshold; t != 0 && !(t > 1) {
		errs = append(errs, fmt.Sprintf("--storage-defrag-threshold %g must be 0 (off) or above 1: a file is never smaller than its live data", t))
	}
	errs = append(errs, o.validateStorage()...)
	if o.DataDirDefault && o.UsesEtcd() && o.CertDir != "" {
		o.DataDir = o.CertDir
	}
	errs = append(errs, o.validateLifecycle()...)
	errs = append(errs, o.validateServiceRanges()...)
	errs = append(errs, o.ServiceAccounts.validate(o.Brand)...)
	errs = append(errs, o.validateJWTAuthn()...)
	errs = append(errs, o.TokenWebhook.validate()...)
	errs = append(errs, o.RequestHeader.validate()...)
	rc, problems := parseRuntimeConfig(o.RuntimeConfig)
	for _, p := range problems {
		errs = append(errs, "--runtime-config: "+p)
	}
	for _, p := range parseControllers(o.Controllers) {
		errs = append(errs, "--controllers: "+p)
	}
	off, problems := parseAdmissionPlugins(o.EnableAdmissionPlugins, o.DisableAdmissionPlugins)
	errs = append(errs, problems...)
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(errs, "; "))
	}
	if o.AuthorizationPolicyFile != "" {
		p, err := ParseABACPolicyFile(o.AuthorizationPolicyFile, o.Brand, slog.Default())
		if err != nil {
			return fmt.Errorf("%w: --authorization-policy-file: %w", ErrInvalid, err)
		}
		o.ABACPolicies = p
	}
	if o.EncryptionConfigReload && o.EncryptionProviderConfigFile == "" {
		return fmt.Errorf("%w: --encryption-provider-config-automatic-reload must be set with --encryption-provider-config", ErrInvalid)
	}
	if o.EncryptionProviderConfigFile != "" {
		c, err := LoadEncryptionConfig(o.EncryptionProviderConfigFile, o.Brand)
		if err != nil {
			return fmt.Errorf("%w: --encryption-provider-config: %w", ErrInvalid, err)
		}
		o.Encryption = c
	}
	// Read without the flag too: a plugin that runs may need a
	// configuration only the file can give (EventRateLimit's limits).
	a, err := LoadAdmissionConfig(o.AdmissionControlConfigFile, o.Brand, off)
	if err != nil {
		return fmt.Errorf("%w: --admission-control-config-file: %w", ErrInvalid, err)
	}
	o.Admission = a
	o.APIEnablement = rc
	o.AdmissionOff = off
	o.Warnings = append(o.Warnings, gateWarnings...)
	if o.CertDir == "" {
		o.CertDir = filepath.Join(o.DataDir, "pki")
	}
	return nil
}

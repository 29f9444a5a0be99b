// Command platd serves the declarative resource API from one binary and one
// bbolt file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"platd/config"
	"platd/server"
)

func main() { os.Exit(run(os.Args)) }

// run returns the process exit code: 0 on success, 2 for usage and
// configuration errors (before anything is written), 1 for failures.
func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	app := newApp(serveLogged)
	err := app.RunContext(ctx, args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "platd:", err)
	}
	return exitCode(err)
}

// exitCode is 0 for success, 2 for usage and configuration errors, 1
// for the rest.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, config.ErrInvalid):
		return 2
	default:
		return 1
	}
}

var errUsage = errors.New("usage")

// serveLogged runs the server with logs at o.LogLevel on standard error.
func serveLogged(ctx context.Context, o config.Options) error {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: o.LogLevel})))
	return server.Run(ctx, o)
}

func init() {
	// --version prints what the version command prints.
	cli.VersionPrinter = func(c *cli.Context) { printVersion(c.App.Writer) }
}

func printVersion(w io.Writer) {
	v := server.Version()
	fmt.Fprintf(w, "platd %s (API %s, %s, %s/%s)\n", v.Platd, v.GitVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// newApp builds the command line; serve is what `platd serve` runs.
func newApp(serve func(context.Context, config.Options) error) *cli.App {
	serveFlags := []cli.Flag{
		&cli.StringFlag{Name: "data-dir", Value: "platd-data", Usage: "directory for the database, key material and the admin kubeconfig"},
		&cli.IntFlag{Name: "secure-port", Value: 6443, Usage: "HTTPS port (0 picks a free port)"},
		&cli.StringFlag{Name: "bind-address", Value: "127.0.0.1", Usage: "IP address to listen on"},
		&cli.StringFlag{Name: "advertise-address", Usage: "IP the API's Endpoints point in-cluster clients at (default: the bind address, else an interface's)"},
		&cli.StringFlag{Name: "tls-cert-file", Usage: "serving certificate (PEM); default: one signed by the data directory's CA"},
		&cli.StringFlag{Name: "tls-private-key-file", Usage: "key of --tls-cert-file (PEM)"},
		&cli.StringFlag{Name: "cert-dir", Usage: "directory of generated key material (default <data-dir>/pki)"},
		&cli.StringFlag{Name: "tls-min-version", Value: config.DefaultTLSMinVersion, Usage: "Minimum TLS version supported. Possible values: " + strings.Join(config.TLSVersionNames(), ", ")},
		&cli.StringSliceFlag{Name: "tls-cipher-suites", Usage: "Comma-separated list of cipher suites for TLS 1.0-1.2 (TLS 1.3 suites are not configurable). If omitted, the ECDHE suites with AES-GCM or ChaCha20-Poly1305 are used. \nPreferred values: " + strings.Join(config.PreferredTLSCipherNames(), ", ") + ". \nInsecure values: " + strings.Join(config.InsecureTLSCipherNames(), ", ") + "."},
		&cli.StringSliceFlag{Name: "tls-san", Usage: "extra DNS name or IP for the generated serving certificate (repeatable)"},
		&cli.StringFlag{Name: "client-ca-file", Usage: "extra CA bundle trusted for client certificates"},
		&cli.StringFlag{Name: "token-auth-file", Usage: "static token file: token,user,uid[,\"group1,group2\"]"},
		&cli.BoolFlag{Name: "enable-bootstrap-token-auth", Usage: config.EnableBootstrapTokenAuthUsage},
		&cli.StringFlag{Name: "authentication-config", Usage: "AuthenticationConfiguration file of JWT authenticators (re-read when it changes); excludes the --oidc-* flags"},
		&cli.StringFlag{Name: "oidc-issuer-url", Usage: "https URL of the OpenID issuer whose ID tokens are accepted"},
		&cli.StringFlag{Name: "oidc-client-id", Usage: "client ID ID tokens must be issued for (their audience)"},
		&cli.StringFlag{Name: "oidc-ca-file", Usage: "CA bundle verifying the issuer's serving certificate (default: the host's roots)"},
		&cli.StringFlag{Name: "oidc-username-claim", Value: config.DefaultOIDCUsernameClaim, Usage: "claim used as the user name"},
		&cli.StringFlag{Name: "oidc-username-prefix", Usage: "prefix of user names (default \"<issuer-url>#\" unless the claim is email; - for none)"},
		&cli.StringFlag{Name: "oidc-groups-claim", Usage: "claim holding the user's groups (string or list of strings)"},
		&cli.StringFlag{Name: "oidc-groups-prefix", Usage: "prefix of group names"},
		&cli.StringSliceFlag{Name: "oidc-signing-algs", Value: cli.NewStringSlice(config.DefaultOIDCSigningAlgs...), Usage: "accepted signing algorithms: " + strings.Join(config.SupportedSigningAlgs, ", ")},
		&cli.StringSliceFlag{Name: "oidc-required-claim", Usage: "key=value a token's claims must hold (repeatable)"},
		&cli.StringFlag{Name: "authentication-token-webhook-config-file", Usage: "kubeconfig naming a token webhook that reviews bearer tokens (TokenReview)"},
		&cli.DurationFlag{Name: "authentication-token-webhook-cache-ttl", Value: config.DefaultTokenWebhookCacheTTL, Usage: "how long the token webhook's answers are cached"},
		&cli.StringFlag{Name: "authentication-token-webhook-version", Value: config.DefaultTokenWebhookVersion, Usage: "TokenReview version sent to the token webhook: v1 or v1beta1"},
		&cli.StringFlag{Name: "proxy-client-cert-file", Usage: "client certificate (PEM) presented to extension API servers when requests are proxied to them; its CA should be the --requestheader-client-ca-file those servers trust"},
		&cli.StringFlag{Name: "proxy-client-key-file", Usage: "key of --proxy-client-cert-file (PEM)"},
		&cli.BoolFlag{Name: "aggregator-reject-forwarding-redirect", Value: true, Usage: "answer 502 when an extension API server answers a proxied request with a redirect, rather than handing the redirect to the client"},
		&cli.BoolFlag{Name: "enable-aggregator-routing", Usage: "route requests for extension API servers to an endpoint of their service rather than its cluster IP; always so here, as no service proxy runs"},
		&cli.StringFlag{Name: "requestheader-client-ca-file", Usage: "CA bundle verifying an authenticating proxy's client certificate; enables request-header authentication"},
		&cli.StringSliceFlag{Name: "requestheader-allowed-names", Usage: "common names the proxy's certificate may have (empty: any the CA verifies)"},
		&cli.StringSliceFlag{Name: "requestheader-username-headers", Usage: "request headers carrying the user name, first non-empty wins (X-Remote-User is common)"},
		&cli.StringSliceFlag{Name: "requestheader-uid-headers", Usage: "request headers carrying the user uid (X-Remote-Uid is suggested)"},
		&cli.StringSliceFlag{Name: "requestheader-group-headers", Usage: "request headers carrying groups (X-Remote-Group is suggested)"},
		&cli.StringSliceFlag{Name: "requestheader-extra-headers-prefix", Usage: "request header prefixes carrying user extras (X-Remote-Extra- is suggested)"},
		&cli.BoolFlag{Name: "anonymous-auth", Value: true, Usage: "let requests without credentials in as system:anonymous (the default policy lets them reach only health and version)"},
		&cli.StringFlag{Name: "authorization-mode", Value: config.ModeNode + "," + config.ModeRBAC, Usage: "comma-separated authorizers: " + strings.Join(config.AuthorizationModeNames, ", ")},
		&cli.StringFlag{Name: "authorization-webhook-config-file", Usage: "kubeconfig naming a webhook that reviews requests (SubjectAccessReview), used with --authorization-mode=Webhook"},
		&cli.StringFlag{Name: "authorization-webhook-version", Value: config.DefaultAuthzWebhookVersion, Usage: "SubjectAccessReview version sent to the authorization webhook: v1 or v1beta1"},
		&cli.DurationFlag{Name: "authorization-webhook-cache-authorized-ttl", Value: config.DefaultAuthzWebhookAuthorizedTTL, Usage: "how long the authorization webhook's allowed answers are cached"},
		&cli.DurationFlag{Name: "authorization-webhook-cache-unauthorized-ttl", Value: config.DefaultAuthzWebhookUnauthorizedTTL, Usage: "how long the authorization webhook's other answers are cached"},
		&cli.StringFlag{Name: "encryption-provider-config", Usage: "EncryptionConfiguration file: the resources encrypted in the data file and their providers (aesgcm, aescbc, secretbox, identity); the first provider encrypts writes, all decrypt reads"},
		&cli.BoolFlag{Name: "encryption-provider-config-automatic-reload", Usage: "re-read --encryption-provider-config every minute: a changed, valid file applies to later writes (and marks values of keys no longer first for rewriting); an invalid one is logged and the old one kept"},
		&cli.StringFlag{Name: "authorization-config", Usage: "AuthorizationConfiguration file naming the authorizer chain (re-read when it changes); excludes --authorization-mode and the --authorization-webhook-* flags"},
		&cli.StringFlag{Name: "admission-control-config-file", Usage: "AdmissionConfiguration file holding admission plugins' configurations; the PodSecurity plugin's (a PodSecurityConfiguration, inline or by path) sets the policy of namespaces without pod-security labels and the users, namespaces and runtime classes exempt from it"},
		&cli.BoolFlag{Name: "allow-privileged", Value: true, Usage: "admit pods and pod templates whose containers ask for privileged mode; false refuses them (upstream's own default is false; kubeadm, kind and envtest run it with true)"},
		&cli.StringSliceFlag{Name: "enable-admission-plugins", Usage: config.AdmissionPluginsUsage(true)},
		&cli.StringSliceFlag{Name: "disable-admission-plugins", Usage: config.AdmissionPluginsUsage(false)},
		&cli.StringFlag{Name: "authorization-policy-file", Usage: "ABAC policy file, one JSON policy per line; used with --authorization-mode=ABAC"},
		&cli.StringFlag{Name: "brand", Value: "plat", Usage: "API spelling: " + strings.Join(config.BrandNames(), " or ")},
		&cli.IntFlag{Name: "max-requests-inflight", Value: config.DefaultMaxRequestsInFlight, Usage: "most non-mutating requests served at once, beyond which they get 429; 0 means no limit"},
		&cli.IntFlag{Name: "max-mutating-requests-inflight", Value: config.DefaultMaxMutatingRequestsInFlight, Usage: "most mutating requests served at once, beyond which they get 429; 0 means no limit"},
		&cli.IntFlag{Name: "http2-max-streams-per-connection", Usage: "most streams a client may have open at once on one HTTP/2 connection; 0 means the default of 100"},
		&cli.Float64Flag{Name: "goaway-chance", Usage: "fraction of HTTP/2 requests sent a GOAWAY, so that clients reconnect and spread over the servers behind a load balancer; 0 (off) to 0.02; leave it off with a single server"},
		&cli.DurationFlag{Name: "request-timeout", Value: config.DefaultRequestTimeout, Usage: "longest a request other than a watch or stream may take before it gets 504; ?timeout= may shorten it; 0 means no limit"},
		&cli.DurationFlag{Name: "event-ttl", Value: config.DefaultEventTTL, Usage: "Amount of time to retain events."},
		&cli.DurationFlag{Name: "shutdown-delay-duration", Usage: "how long requests are still served after SIGTERM while /readyz already fails, so load balancers stop sending first"},
		&cli.BoolFlag{Name: "shutdown-send-retry-after", Usage: "after the shutdown delay, keep listening until in-flight requests finish and answer new ones 429 with Retry-After and Connection: close, so clients retry elsewhere"},
		&cli.DurationFlag{Name: "shutdown-watch-termination-grace-period", Usage: "how long open watches get to end, spread over this period, once the server stops taking requests; 0 ends them at once"},
		&cli.DurationFlag{Name: "livez-grace-period", Usage: "how long after start /livez reports unfinished start-up hooks as passing, so a slow start is not mistaken for a dead server"},
		&cli.BoolFlag{Name: "compress-loopback-responses", Value: true, Usage: "gzip large get and list responses for clients on the loopback interface too, as for any client that accepts gzip; false saves the CPU both ends share"},
		&cli.DurationFlag{Name: "history-retention", Value: config.DefaultHistoryRetention, Usage: "how long watch history stays replayable"},
		&cli.IntFlag{Name: "watch-history-max-bytes", Value: config.DefaultWatchHistoryMaxBytes, Usage: "bytes of replaced values the watch history may keep in memory; past it the oldest events are dropped before --history-retention ends (a watch or list from before them gets 410 Expired); -1: no bound"},
		&cli.StringSliceFlag{Name: "runtime-config", Usage: "switch built-in APIs on or off: comma-separated <group>/<version>[=true|false], <group>/<version>/<resource>[=true|false], v1 or api/v1 for the core group, api/all, api/ga, api/beta, api/alpha (repeatable)"},
		&cli.StringSliceFlag{Name: "feature-gates", Usage: config.FeatureGatesUsage()},
		&cli.DurationFlag{Name: "cluster-signing-duration", Value: config.DefaultClusterSigningDuration, Usage: "longest validity of a certificate issued for an approved signing request; a request may ask for less with spec.expirationSeconds"},
		&cli.StringSliceFlag{Name: "controllers", Value: cli.NewStringSlice("*"), Usage: "in-process controllers to run: * for all, name to enable, -name to disable (repeatable); names: " + strings.Join(config.ControllerNames(), ", ")},
		&cli.StringFlag{Name: "service-cluster-ip-range", Value: config.DefaultServiceClusterIPRange, Usage: "CIDR services get cluster IPs from; its first usable address is the API server's own service's"},
		&cli.StringFlag{Name: "service-node-port-range", Value: config.DefaultServiceNodePortRange, Usage: "ports NodePort and LoadBalancer services get node ports from (first-last)"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "least severe log level written to standard error: " + strings.Join(config.LogLevels, ", ") + "; debug also logs every request"},
		&cli.StringFlag{Name: "audit-policy-file", Usage: "audit Policy file (YAML or JSON) saying which requests are recorded at which level; audit is on when it and --audit-log-path are given"},
		&cli.StringFlag{Name: "audit-log-path", Usage: "file audit events are appended to, one JSON line each; - for standard output"},
		&cli.IntFlag{Name: "audit-log-maxage", Usage: "days rotated audit log files are kept; 0 keeps them regardless of age"},
		&cli.IntFlag{Name: "audit-log-maxbackup", Usage: "rotated audit log files kept; 0 keeps all"},
		&cli.IntFlag{Name: "audit-log-maxsize", Usage: "megabytes an audit log file may grow to before it is rotated; 0 means 100"},
		&cli.StringFlag{Name: "audit-log-format", Value: config.AuditFormatJSON, Usage: "format of audit log lines: json"},
		&cli.Float64Flag{Name: "storage-defrag-threshold", Value: config.DefaultStorageDefragThreshold, Usage: "rewrite the database file while serving once it is more than this many times the size of its live data (and at least 4 MiB); 0 turns it off (see platd defrag)"},
		&cli.BoolFlag{Name: "unsafe-no-fsync", Usage: "skip fsync on commit: a crash may lose acknowledged writes; only for throwaway data such as CI"},
	}
	serveFlags = append(serveFlags, serviceAccountFlags()...)
	serveFlags = append(serveFlags, storageFlags()...)
	serveFlags = withEnv(append(serveFlags, configFlag()))
	serveAction := func(c *cli.Context) error {
		if c.NArg() > 0 {
			return fmt.Errorf("%w: unexpected argument %q", errUsage, c.Args().First())
		}
		if err := applyConfigFile(c, serveFlags); err != nil {
			return err
		}
		o, err := optionsFrom(c)
		if err != nil {
			return err
		}
		return serve(c.Context, o)
	}
	cliFlags := fixedNames(serveFlags)
	return &cli.App{
		Name:            "platd",
		Usage:           "the declarative resource API in one binary",
		Version:         server.Version().Platd,
		HideHelpCommand: true,
		Flags:           cliFlags,
		Action:          serveAction,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError(serveFlags, err)
		},
		Commands: []*cli.Command{
			{
				Name:   "serve",
				Usage:  "serve the API (the default command)",
				Flags:  cliFlags,
				Action: serveAction,
				OnUsageError: func(_ *cli.Context, err error, _ bool) error {
					return usageError(serveFlags, err)
				},
			},
			sharedEnv(kubeconfigCommand(), serveFlags),
			sharedEnv(defragCommand(), serveFlags),
			sharedEnv(checkCommand(), serveFlags),
			sharedEnv(migrateCommand(), serveFlags),
			completionCommand(),
			{
				Name:  "version",
				Usage: "print the version",
				Action: func(c *cli.Context) error {
					printVersion(c.App.Writer)
					return nil
				},
			},
		},
	}
}

// optionsFrom turns parsed flags into validated options.
func optionsFrom(c *cli.Context) (config.Options, error) {
	brand, err := config.LookupBrand(c.String("brand"))
	if err != nil {
		return config.Options{}, fmt.Errorf("%w: --brand: %v", config.ErrInvalid, err)
	}
	level, err := config.ParseLogLevel(c.String("log-level"))
	if err != nil {
		return config.Options{}, err
	}
	var modes []string
	for _, m := range strings.Split(c.String("authorization-mode"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			modes = append(modes, m)
		}
	}
	o := config.Options{
		DataDir:                  c.String("data-dir"),
		SecurePort:               c.Int("secure-port"),
		BindAddress:              c.String("bind-address"),
		AdvertiseAddress:         c.String("advertise-address"),
		TLSCertFile:              c.String("tls-cert-file"),
		TLSPrivateKeyFile:        c.String("tls-private-key-file"),
		CertDir:                  c.String("cert-dir"),
		TLSSANs:                  c.StringSlice("tls-san"),
		ClientCAFile:             c.String("client-ca-file"),
		ProxyClientCertFile:      c.String("proxy-client-cert-file"),
		ProxyClientKeyFile:       c.String("proxy-client-key-file"),
		EnableAggregatorRouting:  c.Bool("enable-aggregator-routing"),
		TokenAuthFile:            c.String("token-auth-file"),
		AuthenticationConfigFile: c.String("authentication-config"),
		OIDC: config.OIDCFlags{
			IssuerURL: c.String("oidc-issuer-url"), ClientID: c.String("oidc-client-id"), CAFile: c.String("oidc-ca-file"),
			UsernameClaim: c.String("oidc-username-claim"), UsernamePrefix: c.String("oidc-username-prefix"),
			GroupsClaim: c.String("oidc-groups-claim"), GroupsPrefix: c.String("oidc-groups-prefix"),
			SigningAlgs: c.StringSlice("oidc-signing-algs"), RequiredClaims: c.StringSlice("oidc-required-claim"),
		},
		AnonymousAuth:    c.Bool("anonymous-auth"),
		AnonymousAuthSet: c.IsSet("anonymous-auth"),
		TokenWebhook: config.TokenWebhook{
			ConfigFile: c.String("authentication-token-webhook-config-file"),
			CacheTTL:   c.Duration("authentication-token-webhook-cache-ttl"),
			Version:    c.String("authentication-token-webhook-version"),
		},
		RequestHeader: config.RequestHeader{
			ClientCAFile:       c.String("requestheader-client-ca-file"),
			AllowedNames:       c.StringSlice("requestheader-allowed-names"),
			UsernameHeaders:    c.StringSlice("requestheader-username-headers"),
			UIDHeaders:         c.StringSlice("requestheader-uid-headers"),
			GroupHeaders:       c.StringSlice("requestheader-group-headers"),
			ExtraHeadersPrefix: c.StringSlice("requestheader-extra-headers-prefix"),
		},
		AuthorizationModes:    modes,
		AuthorizationModesSet: c.IsSet("authorization-mode"),
		AuthorizationWebhook: config.AuthorizationWebhook{
			ConfigFile:      c.String("authorization-webhook-config-file"),
			Version:         c.String("authorization-webhook-version"),
			AuthorizedTTL:   c.Duration("authorization-webhook-cache-authorized-ttl"),
			UnauthorizedTTL: c.Duration("authorization-webhook-cache-unauthorized-ttl"),
		},
		AuthorizationConfigFile:      c.String("authorization-config"),
		AuthorizationPolicyFile:      c.String("authorization-policy-file"),
		EncryptionProviderConfigFile: c.String("encryption-provider-config"),
		EncryptionConfigReload:       c.Bool("encryption-provider-config-automatic-reload"),
		AdmissionControlConfigFile:   c.String("admission-control-config-file"),
		EnableAdmissionPlugins:       c.StringSlice("enable-admission-plugins"),
		DisableAdmissionPlugins:      c.StringSlice("disable-admission-plugins"),
		ForbidPrivileged:             !c.Bool("allow-privileged"),
		Brand:                        brand,
		HistoryRetention:             c.Duration("history-retention"),
		MaxRequestsInFlight:          c.Int("max-requests-inflight"),
		MaxMutatingRequestsInFlight:  c.Int("max-mutating-requests-inflight"),
		RequestTimeout:               c.Duration("request-timeout"),
		EventTTL:                     c.Duration("event-ttl"),
		ShutdownDelayDuration:        c.Duration("shutdown-delay-duration"),
		UnsafeNoFsync:                c.Bool("unsafe-no-fsync"),
		StorageDefragThreshold:       c.Float64("storage-defrag-threshold"),
		RuntimeConfig:                c.StringSlice("runtime-config"),
		ServiceClusterIPRange:        c.String("service-cluster-ip-range"),
		ServiceNodePortRange:         c.String("service-node-port-range"),
		Controllers:                  c.StringSlice("controllers"),
		ClusterSigningDuration:       c.Duration("cluster-signing-duration"),
		FeatureGatesFlag:             c.StringSlice("feature-gates"),
		WriteKubeconfig:              true,
		ServiceAccounts:              serviceAccountOptions(c),
		LogLevel:                     level,
		Audit: config.AuditLog{PolicyFile: c.String("audit-policy-file"), Path: c.String("audit-log-path"),
			MaxAge: c.Int("audit-log-maxage"), MaxBackup: c.Int("audit-log-maxbackup"), MaxSize: c.Int("audit-log-maxsize"), Format: c.String("audit-log-format")},
	}
	o.DataDirDefault = !c.IsSet("data-dir")
	o.EnableBootstrapTokenAuth = c.Bool("enable-bootstrap-token-auth")
	o.WatchHistoryMaxBytes = int64(c.Int("watch-history-max-bytes"))
	o.ShutdownSendRetryAfter = c.Bool("shutdown-send-retry-after")
	o.ShutdownWatchTerminationGracePeriod = c.Duration("shutdown-watch-termination-grace-period")
	o.LivezGracePeriod = c.Duration("livez-grace-period")
	o.NoLoopbackCompression = !c.Bool("compress-loopback-responses")
	o.AggregatorAllowRedirects = !c.Bool("aggregator-reject-forwarding-redirect")
	o.TLSMinVersionName = c.String("tls-min-version")
	o.TLSCipherSuiteNames = c.StringSlice("tls-cipher-suites")
	o.HTTP2MaxStreamsPerConnection = c.Int("http2-max-streams-per-connection")
	o.GoawayChance = c.Float64("goaway-chance")
	storageOptions(c, &o)
	for _, f := range []string{"authorization-webhook-config-file", "authorization-webhook-version",
		"authorization-webhook-cache-authorized-ttl", "authorization-webhook-cache-unauthorized-ttl"} {
		if c.IsSet(f) {
			o.AuthorizationWebhook.Set = append(o.AuthorizationWebhook.Set, f)
		}
	}
	return o, o.Validate()
}

// kubeconfigCommand is `platd kubeconfig`: a kubeconfig for a non-admin
// user, with a client certificate signed by the data directory's CA.
func kubeconfigCommand() *cli.Command {
	return &cli.Command{
		Name:  "kubeconfig",
		Usage: "write a kubeconfig for a user, with a client certificate signed by platd's CA",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "user", Usage: "user name (the certificate's CN)"},
			&cli.StringSliceFlag{Name: "group", Usage: "group of the user (the certificate's O; repeatable)"},
			&cli.StringFlag{Name: "data-dir", Value: "platd-data", Usage: "platd's data directory"},
			&cli.StringFlag{Name: "cert-dir", Usage: "directory of platd's key material (default <data-dir>/pki)"},
			&cli.StringFlag{Name: "server", Usage: "server URL (default: the admin kubeconfig's)"},
			&cli.StringFlag{Name: "brand", Value: "plat", Usage: "API spelling, which names the cluster: " + strings.Join(config.BrandNames(), " or ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "file to write (mode 0600), - for standard output"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w: %v", errUsage, err)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("%w: unexpected argument %q", errUsage, c.Args().First())
			}
			brand, err := config.LookupBrand(c.String("brand"))
			if err != nil {
				return fmt.Errorf("%w: --brand: %v", config.ErrInvalid, err)
			}
			kc, err := server.UserKubeconfig(server.UserKubeconfigOptions{
				DataDir: c.String("data-dir"), CertDir: c.String("cert-dir"), Brand: brand,
				User: c.String("user"), Groups: c.StringSlice("group"), Server: c.String("server"),
			})
			if err != nil {
				return err
			}
			if out := c.String("output"); out != "-" {
				return os.WriteFile(out, kc, 0o600)
			}
			_, err = c.App.Writer.Write(kc)
			return err
		},
	}
}

// defragProgressAfter is how long a defrag runs before it reports
// progress, and how often: a small file finishes silently.
const defragProgressAfter = time.Second

// defragCommand is `platd defrag`: the database file of a stopped platd
// rewritten compactly.
func defragCommand() *cli.Command {
	return dataDirCommand("defrag", "rewrite the database file of a stopped platd compactly, giving free space back to the file system",
		func(c *cli.Context, dir string) error {
			start := time.Now()
			res, err := server.Defrag(dir, recordProgress(c.App.ErrWriter, defragProgressAfter, "copied"))
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "%s: %s -> %s in %v\n", res.Path, byteSize(res.Before), byteSize(res.After), time.Since(start).Round(time.Millisecond))
			return nil
		})
}

// dataDirCommand is a subcommand working on the data directory of a
// stopped platd: its one flag, usage errors and no arguments.
func dataDirCommand(name, usage string, run func(c *cli.Context, dir string) error) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data-dir", Value: "platd-data", Usage: "platd's data directory"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w: %v", errUsage, err)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("%w: unexpected argument %q", errUsage, c.Args().First())
			}
			return run(c, c.String("data-dir"))
		},
	}
}

// recordProgress returns a progress callback that writes a line to w once
// every has passed since the start or the last line, until the work ends.
func recordProgress(w io.Writer, every time.Duration, verb string) func(done, total int64) {
	last := time.Now()
	return func(done, total int64) {
		if now := time.Now(); now.Sub(last) >= every && done < total {
			last = now
			fmt.Fprintf(w, "%s %d of %d records (%d%%)\n", verb, done, total, done*100/max(total, 1))
		}
	}
}

// byteSize formats n bytes for people: KiB, MiB or GiB with one decimal.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 2; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMG"[exp])
}

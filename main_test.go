package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"platd/config"
)

// parse runs the command line with a serve that records its options
// instead of serving.
func parse(t *testing.T, args ...string) (config.Options, error) {
	t.Helper()
	var got config.Options
	app := newApp(func(_ context.Context, o config.Options) error { got = o; return nil })
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &bytes.Buffer{}
	err := app.RunContext(context.Background(), append([]string{"platd"}, args...))
	return got, err
}

// The tests here run one at a time: urfave/cli applies its shared help
// flag to every app it parses, so two apps parsing at once race.

func TestFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir, "--secure-port", "7443", "--brand", "kubernetes",
		"--authorization-mode", "AlwaysDeny,AlwaysAllow", "--tls-san", "a.example", "--tls-san", "10.0.0.9", "--history-retention", "2m", "--unsafe-no-fsync")
	if err != nil {
		t.Fatal(err)
	}
	if o.DataDir != dir || o.SecurePort != 7443 || o.Brand.Name != "kubernetes" || o.BindAddress != "127.0.0.1" ||
		strings.Join(o.AuthorizationModes, ",") != "AlwaysDeny,AlwaysAllow" || strings.Join(o.TLSSANs, ",") != "a.example,10.0.0.9" ||
		o.HistoryRetention.String() != "2m0s" || !o.UnsafeNoFsync || o.AnonymousAuth || o.CertDir != filepath.Join(dir, "pki") {
		t.Errorf("options: %+v", o)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--runtime-config", "api/all=false,apps/v1=true", "--runtime-config", "api/v1,batch/v1/jobs=false")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.RuntimeConfig, " ") != "api/all=false apps/v1=true api/v1 batch/v1/jobs=false" ||
		o.APIEnablement.String() != "api/all=false,apps/v1=true,/v1=true,batch/v1/jobs=false" {
		t.Errorf("runtime-config: %q parsed as %q", o.RuntimeConfig, o.APIEnablement.String())
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--feature-gates", "AuthorizeWithSelectors=false,CBORServingAndStorage=true", "--feature-gates", "KMSv1=false")
	if err != nil || o.FeatureGates.Enabled(config.AuthorizeWithSelectors) || !o.FeatureGates.Enabled(config.CBORServingAndStorage) ||
		!o.FeatureGates.Enabled(config.WatchList) || !slices.Contains(o.Warnings, "Setting deprecated feature gate KMSv1=false. It will be removed in a future release.") {
		t.Errorf("feature-gates: %q %v %q", o.FeatureGates.String(), err, o.Warnings)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--controllers", "*,-"+config.ControllerGarbageCollector)
	if err != nil || o.ControllerEnabled(config.ControllerGarbageCollector) || !o.ControllerEnabled(config.ControllerNamespace) {
		t.Errorf("controllers: %q %v", o.Controllers, err)
	}
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte(testCAPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--oidc-issuer-url", "https://id.example", "--oidc-client-id", "platd", "--oidc-ca-file", ca,
		"--oidc-username-claim", "email", "--oidc-username-prefix", "-", "--oidc-groups-claim", "g", "--oidc-groups-prefix", "g:",
		"--oidc-signing-algs", "RS256,ES256", "--oidc-required-claim", "a=1", "--oidc-required-claim", "b=2")
	if want := (config.OIDCFlags{IssuerURL: "https://id.example", ClientID: "platd", CAFile: ca, UsernameClaim: "email", UsernamePrefix: "-",
		GroupsClaim: "g", GroupsPrefix: "g:", SigningAlgs: []string{"RS256", "ES256"}, RequiredClaims: []string{"a=1", "b=2"}}); err != nil || !reflect.DeepEqual(o.OIDC, want) {
		t.Errorf("oidc flags: %+v %v", o.OIDC, err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--service-cluster-ip-range", "10.96.0.0/12", "--service-node-port-range", "20000-20099", "--advertise-address", "192.0.2.1")
	if err != nil || o.ServiceCIDR.String() != "10.96.0.0/12" || o.NodePorts != (config.PortRange{Base: 20000, Size: 100}) || o.AdvertiseAddress != "192.0.2.1" {
		t.Errorf("service ranges: %v %v %v", o.ServiceCIDR, o.NodePorts, err)
	}
	policy := filepath.Join(dir, "abac.jsonl")
	line := `{"apiVersion":"` + config.Brands["plat"].ABACGroup() + `/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"ns1","resource":"*","apiGroup":"*","readonly":true}}`
	if err := os.WriteFile(policy, []byte("# alice reads ns1\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--authorization-mode", "ABAC,RBAC", "--authorization-policy-file", policy)
	if want := []config.ABACPolicy{{User: "alice", Namespace: "ns1", Resource: "*", APIGroup: "*", Readonly: true}}; err != nil ||
		o.AuthorizationPolicyFile != policy || !reflect.DeepEqual(o.ABACPolicies, want) {
		t.Errorf("authorization-policy-file: %q %+v %v", o.AuthorizationPolicyFile, o.ABACPolicies, err)
	}
	// serve is the default command.
	o, err = parse(t, "--data-dir", dir)
	if err != nil || o.SecurePort != 6443 || o.Brand.Name != "plat" || o.HistoryRetention != config.DefaultHistoryRetention {
		t.Errorf("default command: %+v %v", o, err)
	}
}

func TestBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--no-such-flag"}, "flag provided but not defined"},
		{[]string{"serve", "--brand", "acme"}, `unknown brand "acme"`},
		{[]string{"serve", "--tls-cert-file", "x.crt"}, "--tls-cert-file and --tls-private-key-file must be given together"},
		{[]string{"serve", "--authorization-mode", "Magic"}, `unknown mode "Magic"`},
		{[]string{"serve", "--anonymous-auth", "--authorization-mode", "AlwaysAllow"}, "--anonymous-auth=true is not allowed with the AlwaysAllow authorizer"},
		{[]string{"serve", "--secure-port", "70000"}, "--secure-port 70000 must be between 1 and 65535"},
		{[]string{"serve", "--bind-address", "nowhere"}, `--bind-address "nowhere" is not an IP address`},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"serve", "--log-level", "verbose"}, `--log-level "verbose": must be one of debug, info, warn, error`},
		{[]string{"serve", "--runtime-config", "apps/v1=maybe"}, `--runtime-config: invalid value of apps/v1: maybe`},
		{[]string{"serve", "--runtime-config", "apps"}, `--runtime-config: runtime-config invalid key apps`},
		{[]string{"serve", "--runtime-config", "api/all=false"}, `--runtime-config: invalid key with only api/all=false`},
		{[]string{"serve", "--feature-gates", "Bogus=true"}, "--feature-gates: unrecognized feature gate: Bogus"},
		{[]string{"serve", "--feature-gates", "WatchList=maybe"}, `--feature-gates: invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{[]string{"serve", "--feature-gates", "StructuredAuthorizationConfiguration=false"}, "--feature-gates: cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true"},
		{[]string{"serve", "--feature-gates", "DynamicResourceAllocation=true,PodIndexLabel=false"}, "--feature-gates: cannot set feature gate PodIndexLabel to false, feature is locked to true"},
		{[]string{"serve", "--controllers", "*,-nope"}, `--controllers: unknown controller "-nope"`},
		{[]string{"serve", "--storage-defrag-threshold", "0.9"}, "--storage-defrag-threshold 0.9 must be 0 (off) or above 1"},
		{[]string{"serve", "--storage-defrag-threshold", "two"}, `--storage-defrag-threshold "two": want a number, such as 2`},
		{[]string{"serve", "--service-cluster-ip-range", "10.0.0.0/8"}, `--service-cluster-ip-range: 10.0.0.0/8 is too large; for 32-bit addresses, the mask must be >= 12`},
		{[]string{"serve", "--service-cluster-ip-range", "bogus"}, `--service-cluster-ip-range: "bogus" is not a CIDR such as 10.0.0.0/24`},
		{[]string{"serve", "--service-cluster-ip-range", "10.0.0.0/24,fd00::/108"},
			`--service-cluster-ip-range: "10.0.0.0/24,fd00::/108": dual-stack service ranges are not supported by platd; give one CIDR, such as 10.0.0.0/24`},
		{[]string{"serve", "--service-node-port-range", "32767-30000"}, `--service-node-port-range: "32767-30000": the last port is below the first`},
		{[]string{"serve", "--advertise-address", "127.0.0.1"}, `--advertise-address "127.0.0.1" must be an IP address that is neither unspecified nor loopback`},
		{[]string{"serve", "--authentication-config", "authn.yaml", "--oidc-issuer-url", "https://a", "--oidc-client-id", "c"}, "authentication-config file and oidc-* flags are mutually exclusive"},
		{[]string{"serve", "--oidc-issuer-url", "https://a"}, "oidc-issuer-url and oidc-client-id must be specified together"},
		{[]string{"serve", "--oidc-issuer-url", "https://a", "--oidc-client-id", "c", "--oidc-signing-algs", "HS256"}, `oidc: unsupported signing alg: "HS256"`},
		{[]string{"serve", "--oidc-issuer-url", "http://a", "--oidc-client-id", "c"}, `--oidc-*: jwt[0].issuer.url: Invalid value: "http://a": URL scheme must be https`},
		{[]string{"serve", "--authentication-config", "/nonexistent/authn.yaml"}, "--authentication-config: invalid authentication configuration: open /nonexistent/authn.yaml"},
		{[]string{"serve", "--authorization-mode", "ABAC"}, "authorization-mode ABAC's authorization policy file not passed"},
		{[]string{"serve", "--authorization-mode", "RBAC", "--authorization-policy-file", "p.jsonl"}, "cannot specify --authorization-policy-file without mode ABAC"},
		{[]string{"serve", "--authorization-mode", "ABAC", "--authorization-policy-file", "/nonexistent/p.jsonl"}, "--authorization-policy-file: open /nonexistent/p.jsonl"},
		{[]string{"serve", "--authorization-mode", "ABAC", "--authorization-policy-file", "testdata/abac-malformed.jsonl"},
			`--authorization-policy-file: error reading policy file testdata/abac-malformed.jsonl, line 3: {"user": "alice", "readonly": yes}: invalid character 'y' looking for beginning of value`},
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "data")
		_, err := parse(t, append(c.args, "--data-dir", dir)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
			continue
		}
		if !errors.Is(err, errUsage) && !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%v: error %v is not a usage error (exit code 2)", c.args, err)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%v: data directory was created", c.args)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	if code := run([]string{"platd", "serve", "--no-such-flag"}); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if code := run([]string{"platd", "serve", "--data-dir", dir, "--authorization-mode", "ABAC", "--authorization-policy-file", "testdata/abac-malformed.jsonl"}); code != 2 {
		t.Errorf("malformed policy file: exit %d, want 2", code)
	}
	for _, gates := range []string{"NoSuchGate=true", "StructuredAuthorizationConfiguration=false"} {
		if code := run([]string{"platd", "serve", "--data-dir", dir, "--feature-gates", gates}); code != 2 {
			t.Errorf("--feature-gates %s: exit %d, want 2", gates, code)
		}
	}
	if code := run([]string{"platd", "version"}); code != 0 {
		t.Errorf("version: exit %d", code)
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		var out bytes.Buffer
		app := newApp(func(context.Context, config.Options) error { t.Fatal("served"); return nil })
		app.Writer, app.ErrWriter = &out, &out
		if err := app.RunContext(context.Background(), append([]string{"platd"}, args...)); err != nil || !strings.HasPrefix(out.String(), "platd ") ||
			!strings.Contains(out.String(), "(API v1.32.") {
			t.Errorf("%v: %v %q", args, err, out.String())
		}
	}
}

func TestLogLevelFlag(t *testing.T) {
	o, err := parse(t, "serve", "--data-dir", t.TempDir(), "--log-level", "debug")
	if err != nil || o.LogLevel != slog.LevelDebug {
		t.Errorf("--log-level debug: %v %v", o.LogLevel, err)
	}
	o, err = parse(t, "serve", "--data-dir", t.TempDir())
	if err != nil || o.LogLevel != slog.LevelInfo {
		t.Errorf("default: %v %v", o.LogLevel, err)
	}
}

// testCAPEM is a CA certificate for flags that read one.
const testCAPEM = `-----BEGIN CERTIFICATE-----
MIIBRjCB7aADAgECAgEBMAoGCCqGSM49BAMCMBIxEDAOBgNVBAMTB3Rlc3QtY2Ew
IBcNNzAwMTAxMDAwMDAwWhgPMjA5OTAxMDEwMDAwMDBaMBIxEDAOBgNVBAMTB3Rl
c3QtY2EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATor+1sPTp/ut2iAhnvRnFy
KcDYlwo9AB3qaagALEUwupT65F9pFQpx+srB8ByGQdXkZAkmywxy1cWKKHBQgRqI
ozIwMDAPBgNVHRMBAf8EBTADAQH/MB0GA1UdDgQWBBTz9AbkR4cj98s1OKVDeqHg
Dw5TpjAKBggqhkjOPQQDAgNIADBFAiEAw2sEgWXHsJeq1A+RKTdXXAMGI2l7Gz0L
fizmwP2RDS4CIG/yeT5sqRUIEtC0zSjKPO1BJdUQtZiGpnElAUdGeCw4
-----END CERTIFICATE-----
`

func TestRemoteAuthnFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir)
	if err != nil || o.TokenWebhook.CacheTTL != 2*time.Minute || o.TokenWebhook.Version != "v1beta1" || o.TokenWebhook.ConfigFile != "" || o.RequestHeader.ClientCAFile != "" {
		t.Errorf("defaults: %+v %+v %v", o.TokenWebhook, o.RequestHeader, err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--authentication-token-webhook-config-file", "hook.kubeconfig",
		"--authentication-token-webhook-cache-ttl", "30s", "--authentication-token-webhook-version", "v1",
		"--requestheader-client-ca-file", "proxy-ca.crt", "--requestheader-allowed-names", "front-proxy,aggregator",
		"--requestheader-username-headers", "X-Remote-User", "--requestheader-uid-headers", "X-Remote-Uid",
		"--requestheader-group-headers", "X-Remote-Group", "--requestheader-group-headers", "X-Groups",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-")
	if err != nil {
		t.Fatal(err)
	}
	wantHook := config.TokenWebhook{ConfigFile: "hook.kubeconfig", CacheTTL: 30 * time.Second, Version: "v1"}
	wantRH := config.RequestHeader{ClientCAFile: "proxy-ca.crt", AllowedNames: []string{"front-proxy", "aggregator"},
		UsernameHeaders: []string{"X-Remote-User"}, UIDHeaders: []string{"X-Remote-Uid"}, GroupHeaders: []string{"X-Remote-Group", "X-Groups"},
		ExtraHeadersPrefix: []string{"X-Remote-Extra-"}}
	if !reflect.DeepEqual(o.TokenWebhook, wantHook) || !reflect.DeepEqual(o.RequestHeader, wantRH) {
		t.Errorf("got %+v %+v", o.TokenWebhook, o.RequestHeader)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--proxy-client-cert-file", "proxy.crt", "--proxy-client-key-file", "proxy.key", "--enable-aggregator-routing")
	if err != nil || o.ProxyClientCertFile != "proxy.crt" || o.ProxyClientKeyFile != "proxy.key" || !o.EnableAggregatorRouting {
		t.Errorf("proxy client flags: %q %q %v, %v", o.ProxyClientCertFile, o.ProxyClientKeyFile, o.EnableAggregatorRouting, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--authentication-token-webhook-version", "v2"}, `unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"`},
		{[]string{"--requestheader-group-headers", " "}, `empty value in "requestheader-group-headers"`},
		{[]string{"--proxy-client-key-file", "proxy.key"}, "--proxy-client-cert-file and --proxy-client-key-file must be given together"},
	} {
		_, err := parse(t, append([]string{"serve", "--data-dir", filepath.Join(t.TempDir(), "d")}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestKubeconfigCommandErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := parse(t, "kubeconfig", "--data-dir", dir); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "--user must not be empty") {
		t.Errorf("no --user: %v", err)
	}
	// No CA yet: platd has not run with this data directory.
	if _, err := parse(t, "kubeconfig", "--data-dir", dir, "--user", "carol"); err == nil || !strings.Contains(err.Error(), "run platd serve with this data directory first") {
		t.Errorf("no CA: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pki", "ca.crt")); !os.IsNotExist(err) {
		t.Errorf("a CA was made: %v", err)
	}
}

func TestAuthorizationFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir, "--authorization-mode", "Webhook", "--authorization-webhook-config-file", "/kc",
		"--authorization-webhook-version", "v1", "--authorization-webhook-cache-authorized-ttl", "1m", "--authorization-webhook-cache-unauthorized-ttl", "2s")
	if err != nil {
		t.Fatal(err)
	}
	w := o.AuthorizationWebhook
	if w.ConfigFile != "/kc" || w.Version != "v1" || w.AuthorizedTTL != time.Minute || w.UnauthorizedTTL != 2*time.Second || len(w.Set) != 4 {
		t.Errorf("webhook flags: %+v", w)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--authorization-config", "/authz.yaml")
	if err != nil || o.AuthorizationConfigFile != "/authz.yaml" || o.AuthorizationModes != nil {
		t.Errorf("--authorization-config: %v %+v", err, o.AuthorizationModes)
	}
	o, err = parse(t, "serve", "--data-dir", dir)
	if err != nil || o.AuthorizationWebhook.Version != "v1beta1" || o.AuthorizationWebhook.AuthorizedTTL != 5*time.Minute ||
		o.AuthorizationWebhook.UnauthorizedTTL != 30*time.Second || o.AuthorizationModesSet {
		t.Errorf("defaults: %v %+v", err, o.AuthorizationWebhook)
	}
	both := "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--authorization-config", "/a", "--authorization-mode", "RBAC"}, both},
		{[]string{"--authorization-config", "/a", "--authorization-webhook-cache-authorized-ttl", "1m"}, both},
		{[]string{"--authorization-mode", "Webhook"}, "authorization-mode Webhook's authorization config file not passed"},
		{[]string{"--authorization-webhook-config-file", "/kc"}, "cannot specify --authorization-webhook-config-file without mode Webhook"},
	} {
		_, err := parse(t, append([]string{"serve", "--data-dir", dir}, c.args...)...)
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if code := run([]string{"platd", "serve", "--data-dir", dir, "--authorization-config", "/a", "--authorization-mode", "RBAC"}); code != 2 {
		t.Errorf("both set: exit %d, want 2", code)
	}
}

// serveApp runs the command line with the real server until ctx ends.
func serveApp(ctx context.Context, args ...string) error {
	app := newApp(serveLogged)
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &bytes.Buffer{}
	return app.RunContext(ctx, append([]string{"platd"}, args...))
}

// A start that fails on a flag's file or the port leaves no data
// directory behind.
func TestNothingWrittenOnFailedStart(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badTokens := write("tokens.csv", "only-a-token\n")
	emptyTokens := write("empty-tokens.csv", "")
	spacedTokens := write("spaced-tokens.csv", "ok,bob,1\n\"two words\",alice,2\n")
	notPEM := write("ca.pem", "not a certificate\n")
	badKC := write("hook.kubeconfig", "clusters: [\n")
	badPolicy := write("audit.yaml", "rules: [\n")
	goodPolicy := write("audit-ok.yaml", "apiVersion: audit."+config.Brands["plat"].Domain+"/v1\nkind: Policy\nrules: [{level: Metadata}]\n")
	badAdmission := write("admission.yaml", "apiVersion: apiserver.config."+config.Brands["plat"].Domain+"/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config."+config.Brands["plat"].Domain+"/v1\n    kind: PodSecurityConfiguration\n    defaults: {enforce: strict}\n")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--token-auth-file", badTokens}, 2, "--token-auth-file: token file '" + badTokens + "' must have at least 3 columns (token, user name, user uid), found 1"},
		{[]string{"--token-auth-file", emptyTokens}, 2, "--token-auth-file: unusable token file: token file '" + emptyTokens + "' is empty"},
		{[]string{"--token-auth-file", spacedTokens}, 2, "--token-auth-file: unusable token file: token file '" + spacedTokens + "' line 2: the token holds a space at byte 4"},
		{[]string{"--tls-cipher-suites", "TLS_NOPE"}, 2, "--tls-cipher-suites: Cipher suite TLS_NOPE not supported or doesn't exist"},
		{[]string{"--token-auth-file", filepath.Join(tmp, "missing.csv")}, 2, "--token-auth-file: open " + filepath.Join(tmp, "missing.csv") + ": no such file or directory"},
		{[]string{"--client-ca-file", notPEM}, 2, "--client-ca-file " + notPEM + " holds no PEM certificate"},
		{[]string{"--requestheader-client-ca-file", notPEM}, 2, "--requestheader-client-ca-file:"},
		{[]string{"--tls-cert-file", notPEM, "--tls-private-key-file", notPEM}, 2, "--tls-cert-file, --tls-private-key-file: tls: failed to find any PEM data in certificate input"},
		{[]string{"--proxy-client-cert-file", notPEM, "--proxy-client-key-file", notPEM}, 2, "--proxy-client-cert-file, --proxy-client-key-file: tls: failed to find any PEM data in certificate input"},
		{[]string{"--proxy-client-cert-file", filepath.Join(tmp, "missing.crt"), "--proxy-client-key-file", notPEM}, 2, "--proxy-client-cert-file, --proxy-client-key-file: open " + filepath.Join(tmp, "missing.crt") + ": no such file or directory"},
		{[]string{"--proxy-client-cert-file", notPEM}, 2, "--proxy-client-cert-file and --proxy-client-key-file must be given together"},
		{[]string{"--authentication-token-webhook-config-file", badKC}, 2, "--authentication-token-webhook-config-file:"},
		{[]string{"--authorization-mode", "Webhook,RBAC", "--authorization-webhook-config-file", badKC}, 2, "--authorization-webhook-config-file:"},
		{[]string{"--audit-policy-file", badPolicy, "--audit-log-path", filepath.Join(tmp, "audit.log")}, 2, "--audit-policy-file: invalid audit policy:"},
		{[]string{"--audit-policy-file", goodPolicy, "--audit-log-path", filepath.Join(notPEM, "audit.log")}, 2, "--audit-log-path: creating the directory of the audit log: mkdir " + notPEM + ": not a directory"},
		{[]string{"--admission-control-config-file", badAdmission}, 2, "--admission-control-config-file: invalid admission control configuration: " + badAdmission + `: couldn't init admission plugin "PodSecurity": PodSecurity configuration error: Enforce.Level: must be one of privileged, baseline, restricted`},
		{[]string{"--secure-port", busyPort}, 1, "listening on 127.0.0.1:" + busyPort + ": listen tcp 127.0.0.1:" + busyPort + ": bind: address already in use (another process holds the port: stop it, or choose another --secure-port; 0 picks a free one)"},
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "data")
		err := serveApp(context.Background(), append([]string{"serve", "--data-dir", dir, "--secure-port", "0"}, c.args...)...)
		if code := exitCode(err); code != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, error %v; want exit %d and %q", c.args, code, err, c.code, c.want)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%v: the data directory was created", c.args)
		}
	}
}

// A data directory keeps the brand of its first start.
func TestBrandRefusedExitCode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // New runs, then Serve stops at once.
	if err := serveApp(ctx, "serve", "--data-dir", dir, "--secure-port", "0", "--brand", "kubernetes", "--log-level", "error"); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]string {
		files := map[string]string{}
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			files[path] = info.ModTime().String() + " " + strconv.FormatInt(info.Size(), 10)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	before := snapshot()
	err := serveApp(context.Background(), "serve", "--data-dir", dir, "--secure-port", "0")
	if after := snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("the refused start changed the data directory:\n%v\n%v", before, after)
	}
	if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), "holds the objects of --brand kubernetes, and this start asks for --brand plat") ||
		!strings.Contains(err.Error(), "Start with --brand kubernetes") {
		t.Errorf("exit %d: %v", exitCode(err), err)
	}
}

func TestEnvAndConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := write("platd.yaml", `# platd serve flags
secure-port: 7000
brand: kubernetes
tls-san: [a.example, b.example]
history-retention: 2m
unsafe-no-fsync: true
anonymous-auth: false
authorization-mode: RBAC
controllers: "*,-`+config.ControllerGarbageCollector+`"
log-level: debug
feature-gates: {WatchList: false, CBORServingAndStorage: true}
runtime-config:
  api/all: true
  batch/v1/jobs: false
`)
	o, err := parse(t, "--data-dir", dir, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if o.SecurePort != 7000 || o.Brand.Name != "kubernetes" || strings.Join(o.TLSSANs, ",") != "a.example,b.example" || o.HistoryRetention != 2*time.Minute ||
		!o.UnsafeNoFsync || o.AnonymousAuth || !o.AnonymousAuthSet || strings.Join(o.AuthorizationModes, ",") != "RBAC" ||
		o.ControllerEnabled(config.ControllerGarbageCollector) || o.LogLevel != slog.LevelDebug ||
		o.FeatureGates.Enabled(config.WatchList) || !o.FeatureGates.Enabled(config.CBORServingAndStorage) ||
		strings.Join(o.RuntimeConfig, " ") != "api/all=true batch/v1/jobs=false" {
		t.Errorf("from the file: %+v", o)
	}
	// Precedence: flag > environment > file > default.
	t.Setenv("PLATD_SECURE_PORT", "7100")
	t.Setenv("PLATD_TLS_SAN", "c.example")
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file)
	if err != nil || o.SecurePort != 7100 || strings.Join(o.TLSSANs, ",") != "c.example" || o.Brand.Name != "kubernetes" {
		t.Errorf("environment over file: %v %d %q", err, o.SecurePort, o.TLSSANs)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file, "--secure-port", "7200", "--tls-san", "d.example")
	if err != nil || o.SecurePort != 7200 || strings.Join(o.TLSSANs, ",") != "d.example" {
		t.Errorf("flag over environment: %v %d %q", err, o.SecurePort, o.TLSSANs)
	}
	// The file itself may come from the environment; every flag has a variable.
	t.Setenv("PLATD_CONFIG", file)
	t.Setenv("PLATD_HISTORY_RETENTION", "3m")
	t.Setenv("PLATD_DATA_DIR", dir)
	o, err = parse(t)
	if err != nil || o.SecurePort != 7100 || o.HistoryRetention != 3*time.Minute || o.DataDir != dir || o.Brand.Name != "kubernetes" {
		t.Errorf("PLATD_CONFIG: %v %+v", err, o)
	}
	os.Unsetenv("PLATD_CONFIG")
	o, err = parse(t, "--config", write("empty.yaml", "# nothing\n"))
	if err != nil || o.SecurePort != 7100 || o.Brand.Name != "plat" {
		t.Errorf("empty file: %v %+v", err, o)
	}

	for _, c := range []struct{ content, want string }{
		{"secure-port: 7000\nsecure_port: 1\nbogus: 2\n", "unknown keys bogus, secure_port: the keys are the names of platd serve's flags without the dashes (platd serve --help lists them)"},
		{"config: other.yaml\n", "unknown keys config"},
		{"brand: [plat, kubernetes]\n", "brand: want one value, not a list"},
		{"request-timeout: 5\n", `request-timeout: invalid value "5": want a duration such as 90s, 5m or 1h30m (units ns, us, ms, s, m, h)`},
		{"max-requests-inflight: lots\n", `max-requests-inflight: invalid value "lots": want an integer, such as 400`},
		{"unsafe-no-fsync: {a: 1}\n", "unsafe-no-fsync: want one value, not a mapping"},
		{"feature-gates: {WatchList: [1]}\n", "feature-gates: WatchList: want true, false or text"},
		{"api-audiences: [{a: 1}]\n", "api-audiences: want text, a list of text, or a mapping of names to values"},
		{"- secure-port\n", `want a mapping of flag names to values, such as "secure-port: 7443"`},
		{"secure-port: [\n", "yaml: line 1: did not find expected node content"},
	} {
		f := write("bad.yaml", c.content)
		_, err := parse(t, "serve", "--data-dir", filepath.Join(dir, "never"), "--config", f)
		if err == nil || !strings.Contains(err.Error(), "invalid configuration: --config "+f+": "+c.want) || exitCode(err) != 2 {
			t.Errorf("%q: %v, want %q", c.content, err, c.want)
		}
	}
	if _, err := parse(t, "--config", filepath.Join(dir, "missing.yaml")); exitCode(err) != 2 || !strings.Contains(err.Error(), "--config: open ") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); !os.IsNotExist(err) {
		t.Error("a bad --config file created the data directory")
	}
}

// --event-ttl is upstream's: an hour unless set by flag, variable or the
// --config file; 0 keeps events, a negative one is refused.
func TestEventTTLFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "platd.yaml")
	if err := os.WriteFile(file, []byte("event-ttl: 90s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  string
		want time.Duration
		err  string
	}{
		{want: time.Hour},
		{args: []string{"--event-ttl", "5m"}, want: 5 * time.Minute},
		{args: []string{"--event-ttl=0s"}, want: 0},
		{env: "2h30m", want: 150 * time.Minute},
		{args: []string{"--config", file}, want: 90 * time.Second},
		{args: []string{"--event-ttl", "-1m"}, err: "--event-ttl -1m0s must not be negative (0 keeps events until they are deleted)"},
		{args: []string{"--event-ttl", "3600"}, err: `--event-ttl "3600": want a duration such as 90s, 5m or 1h30m (units ns, us, ms, s, m, h)`},
	} {
		t.Run(strings.Join(append(c.args, c.env), " "), func(t *testing.T) {
			if c.env != "" {
				t.Setenv("PLATD_EVENT_TTL", c.env)
			}
			o, err := parse(t, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || exitCode(err) != 2 {
					t.Fatalf("exit %d, %v, want %q", exitCode(err), err, c.err)
				}
				return
			}
			if err != nil || o.EventTTL != c.want {
				t.Fatalf("EventTTL %s, %v, want %s", o.EventTTL, err, c.want)
			}
		})
	}
}

// --cluster-signing-duration is upstream's: a year unless set; a negative
// one is refused.
func TestClusterSigningDurationFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
		err  string
	}{
		{want: 365 * 24 * time.Hour},
		{args: []string{"--cluster-signing-duration", "720h"}, want: 720 * time.Hour},
		{args: []string{"--cluster-signing-duration", "-1h"}, err: "--cluster-signing-duration -1h0m0s must not be negative (0 means the default of a year)"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			o, err := parse(t, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || exitCode(err) != 2 {
					t.Fatalf("exit %d, %v, want %q", exitCode(err), err, c.err)
				}
				return
			}
			if err != nil || o.ClusterSigningDuration != c.want {
				t.Fatalf("ClusterSigningDuration %s, %v, want %s", o.ClusterSigningDuration, err, c.want)
			}
		})
	}
}

// Every serve flag has a PLATD_ variable, and a bad value in it says
// which variable and what it takes.
func TestFlagValueErrors(t *testing.T) {
	cases := []struct {
		args []string
		env  [2]string
		want string
	}{
		{args: []string{"--secure-port", "abc"}, want: `--secure-port "abc": want an integer, such as 6443`},
		{args: []string{"--max-mutating-requests-inflight", "1.5"}, want: `--max-mutating-requests-inflight "1.5": want an integer, such as 200`},
		{args: []string{"--request-timeout", "30"}, want: `--request-timeout "30": want a duration such as 90s, 5m or 1h30m (units ns, us, ms, s, m, h)`},
		{args: []string{"--storage-defrag-threshold", "x"}, want: `--storage-defrag-threshold "x": want a number, such as 2`},
		{args: []string{"--anonymous-auth=maybe"}, want: `--anonymous-auth "maybe": want true or false`},
		{args: []string{"--secure-port"}, want: `--secure-port needs a value: an integer, such as 6443`},
		{args: []string{"--no-such-flag"}, want: `flag provided but not defined: --no-such-flag (platd --help lists the flags)`},
		{env: [2]string{"PLATD_HISTORY_RETENTION", "ten"}, want: `PLATD_HISTORY_RETENTION="ten" (--history-retention): want a duration such as 90s, 5m or 1h30m (units ns, us, ms, s, m, h)`},
		{env: [2]string{"PLATD_UNSAFE_NO_FSYNC", "yes please"}, want: `PLATD_UNSAFE_NO_FSYNC="yes please" (--unsafe-no-fsync): want true or false`},
		{args: []string{"--bind-address", "localhost"}, want: `--bind-address "localhost" is not an IP address, such as 127.0.0.1 or 0.0.0.0`},
		{args: []string{"--tls-san", "a..b"}, want: `--tls-san "a..b": want a DNS name such as api.example.com (or *.example.com) or an IP address`},
		{args: []string{"--history-retention", "0s"}, want: `--history-retention 0s must be positive, such as 5m`},
	}
	for _, c := range cases {
		t.Run(strings.Join(append(c.args, c.env[0]), " "), func(t *testing.T) {
			if c.env[0] != "" {
				t.Setenv(c.env[0], c.env[1])
			}
			for _, cmd := range [][]string{{"serve"}, nil} {
				_, err := parse(t, append(append(cmd, "--data-dir", t.TempDir()), c.args...)...)
				if err == nil || !strings.HasSuffix(err.Error(), c.want) || exitCode(err) != 2 {
					t.Errorf("%v: exit %d, %v\nwant %q", cmd, exitCode(err), err, c.want)
				}
			}
		})
	}
	app := newApp(nil)
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			got := f.(interface{ GetEnvVars() []string }).GetEnvVars()
			if shared := slices.ContainsFunc(app.Flags, func(s cli.Flag) bool { return s.Names()[0] == name }); shared != (len(got) == 1 && got[0] == envName(name)) || len(got) > 1 {
				t.Errorf("platd %s --%s: environment variables %q", cmd.Name, name, got)
			}
		}
	}
	for _, f := range app.Flags {
		name := f.Names()[0]
		if got := f.(interface{ GetEnvVars() []string }).GetEnvVars(); len(got) != 1 || got[0] != envName(name) {
			t.Errorf("--%s: environment variables %q", name, got)
		}
	}
}

// Responses are compressed for loopback clients unless told otherwise.
func TestCompressionFlag(t *testing.T) {
	dir := t.TempDir()
	if o, err := parse(t, "serve", "--data-dir", dir); err != nil || o.NoLoopbackCompression {
		t.Errorf("default: no loopback compression %v, %v", o.NoLoopbackCompression, err)
	}
	if o, err := parse(t, "serve", "--data-dir", dir, "--compress-loopback-responses=false"); err != nil || !o.NoLoopbackCompression {
		t.Errorf("set false: no loopback compression %v, %v", o.NoLoopbackCompression, err)
	}
}

// The lifecycle flags reach the options; their defaults are upstream's
// (no grace, no Retry-After mode).
func TestLifecycleFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir)
	if err != nil || o.ShutdownSendRetryAfter || o.ShutdownWatchTerminationGracePeriod != 0 || o.LivezGracePeriod != 0 {
		t.Errorf("defaults: send-retry-after %v, watch grace %s, livez grace %s, %v",
			o.ShutdownSendRetryAfter, o.ShutdownWatchTerminationGracePeriod, o.LivezGracePeriod, err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--shutdown-send-retry-after", "--shutdown-watch-termination-grace-period", "7s",
		"--livez-grace-period", "1m", "--shutdown-delay-duration", "3s")
	if err != nil || !o.ShutdownSendRetryAfter || o.ShutdownWatchTerminationGracePeriod != 7*time.Second || o.LivezGracePeriod != time.Minute ||
		o.ShutdownDelayDuration != 3*time.Second {
		t.Errorf("set: %+v %v", o, err)
	}
	if _, err := parse(t, "serve", "--data-dir", dir, "--livez-grace-period", "-1s"); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("negative --livez-grace-period: %v, want ErrInvalid", err)
	}
}

func TestConnectionFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir)
	if err != nil || o.HTTP2MaxStreamsPerConnection != 0 || o.GoawayChance != 0 {
		t.Errorf("defaults: streams %d, goaway chance %g, %v", o.HTTP2MaxStreamsPerConnection, o.GoawayChance, err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--http2-max-streams-per-connection", "1000", "--goaway-chance", "0.001")
	if err != nil || o.HTTP2MaxStreamsPerConnection != 1000 || o.GoawayChance != 0.001 {
		t.Errorf("set: streams %d, goaway chance %g, %v", o.HTTP2MaxStreamsPerConnection, o.GoawayChance, err)
	}
	for _, args := range [][]string{{"--goaway-chance", "0.5"}, {"--goaway-chance", "-0.01"}, {"--http2-max-streams-per-connection", "-1"}} {
		if _, err := parse(t, append([]string{"serve", "--data-dir", dir}, args...)...); !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%v: %v, want ErrInvalid", args, err)
		}
	}
}

// complete runs the bash completion script for the words typed so far
// (the last one is being completed).
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	prog := script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + "; _platd; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

func TestCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := func(shell string) string {
		var out bytes.Buffer
		app := newApp(nil)
		app.Writer = &out
		if err := app.RunContext(context.Background(), []string{"platd", "completion", shell}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	bash := script("bash")
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"platd", "ser"}, []string{"serve"}},
		{[]string{"platd", "serve", "--secure-p"}, []string{"--secure-port"}},
		{[]string{"platd", "--log-l"}, []string{"--log-level"}},
		{[]string{"platd", "kubeconfig", "--us"}, []string{"--user"}},
		{[]string{"platd", "completion", "f"}, []string{"fish"}},
		{[]string{"platd", "serve", "--unsafe-no-fsync", "--brand"}, []string{"--brand"}},
	} {
		if got := complete(t, bash, c.words...); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.words, got, c.want)
		}
	}
	// After a flag that names a file, files are offered.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := complete(t, bash, "platd", "serve", "--token-auth-file", filepath.Join(dir, "tok")); !slices.Equal(got, []string{filepath.Join(dir, "tokens.csv")}) {
		t.Errorf("file after --token-auth-file: %q", got)
	}
	if zsh := script("zsh"); !strings.Contains(zsh, "bashcompinit") || !strings.Contains(zsh, "complete -o default -F _platd platd") {
		t.Errorf("zsh script:\n%s", zsh)
	}
	fish := script("fish")
	for _, want := range []string{
		"complete -c platd -n '__fish_use_subcommand' -a serve -d 'serve the API'\n",
		"complete -c platd -n '__fish_seen_subcommand_from serve' -l secure-port -r -F -d 'HTTPS port'\n",
		"complete -c platd -n '__fish_seen_subcommand_from serve' -l unsafe-no-fsync -d 'skip fsync on commit'\n",
	} {
		if !strings.Contains(fish, want) {
			t.Errorf("fish script lacks %q", want)
		}
	}
	if _, err := parse(t, "completion", "tcsh"); exitCode(err) != 2 || !strings.Contains(err.Error(), `unknown shell "tcsh": want bash, zsh or fish`) {
		t.Errorf("unknown shell: %v", err)
	}
}

// A --config file of any content is accepted or refused as a usage or
// configuration error (exit 2), never a panic.
func FuzzConfigFile(f *testing.F) {
	for _, seed := range []string{"secure-port: 7000\n", "tls-san: [a, b]\n", "brand: [x]\n", "- a\n", "null", "{", "anonymous-auth: yes\n",
		"request-timeout: 1.5\n", "controllers: {a: b}\n", "history-retention: ~\n", "feature-gates: [\"WatchList=false\", 3]\n"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		file := filepath.Join(dir, "platd.yaml")
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := parse(t, "serve", "--data-dir", filepath.Join(dir, "data"), "--config", file)
		if err != nil && exitCode(err) != 2 {
			t.Errorf("%q: %v is not a configuration error", content, err)
		}
	})
}

// PLATD_DATA_DIR reaches the other commands that take a data directory.
func TestSharedEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "from-env")
	t.Setenv("PLATD_DATA_DIR", dir)
	_, err := parse(t, "kubeconfig", "--user", "carol")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "pki")) {
		t.Errorf("kubeconfig with PLATD_DATA_DIR: %v", err)
	}
}

func TestEncryptionFlags(t *testing.T) {
	dir := t.TempDir()
	b := config.Brands["plat"]
	cfg := filepath.Join(dir, "enc.yaml")
	body := "apiVersion: " + config.EncryptionConfigAPIVersions(b)[0] + "\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers: [{identity: {}}]\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parse(t, "serve", "--data-dir", dir, "--encryption-provider-config", cfg, "--encryption-provider-config-automatic-reload")
	if err != nil || o.EncryptionProviderConfigFile != cfg || !o.EncryptionConfigReload || o.Encryption == nil || len(o.Encryption.Resources) != 1 {
		t.Errorf("encryption flags: %v %+v", err, o.Encryption)
	}
	if _, err := parse(t, "serve", "--data-dir", dir, "--encryption-provider-config-automatic-reload"); err == nil ||
		!strings.Contains(err.Error(), "--encryption-provider-config-automatic-reload must be set with --encryption-provider-config") {
		t.Errorf("reload without a file: %v", err)
	}
	if _, err := parse(t, "serve", "--data-dir", dir, "--encryption-provider-config", filepath.Join(dir, "missing.yaml")); err == nil ||
		!strings.Contains(err.Error(), "error opening encryption provider configuration file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestAdmissionPluginFlagsExit(t *testing.T) {
	b := config.Brands["plat"]
	limits := filepath.Join(t.TempDir(), "admission.yaml")
	body := "apiVersion: " + config.AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    apiVersion: " +
		config.EventRateLimitConfigAPIVersions(b)[0] + "\n    kind: Configuration\n    limits: [{type: Server, qps: 5, burst: 10}]\n"
	if err := os.WriteFile(limits, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(t.TempDir(), "backend.kubeconfig")
	imagePolicy := filepath.Join(filepath.Dir(backend), "admission.yaml")
	if err := os.WriteFile(backend, []byte("clusters:\n- name: b\n  cluster: {server: \"https://images.example.com\"}\ncontexts:\n- name: c\n  context: {cluster: b}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(imagePolicy, []byte("apiVersion: "+config.AdmissionConfigAPIVersions(b)[0]+"\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy: {kubeConfigFile: "+backend+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args    []string
		off, on []string
		err     string
	}{
		{args: []string{"--disable-admission-plugins=ServiceAccount"}, off: []string{config.PluginServiceAccount}, on: []string{config.PluginLimitRanger}},
		{args: []string{"--disable-admission-plugins", "ServiceAccount,LimitRanger", "--disable-admission-plugins", "Priority"},
			off: []string{config.PluginServiceAccount, config.PluginLimitRanger, config.PluginPriority}, on: []string{config.PluginRuntimeClass}},
		{args: []string{"--enable-admission-plugins=AlwaysAdmit"}, on: []string{config.PluginAlwaysAdmit, config.PluginServiceAccount}},
		{args: []string{"--enable-admission-plugins=NodeRestriction"}, on: []string{config.PluginNodeRestriction, config.PluginServiceAccount}},
		{args: []string{"--enable-admission-plugins=Bogus"}, err: `enable-admission-plugins plugin "Bogus" is unknown`},
		{args: []string{"--enable-admission-plugins=LimitPodHardAntiAffinityTopology"},
			on: []string{config.PluginLimitPodHardAntiAffinityTopology, config.PluginServiceAccount}},
		{args: []string{"--enable-admission-plugins=ExtendedResourceToleration"},
			on: []string{config.PluginExtendedResourceToleration, config.PluginServiceAccount}},
		{args: []string{"--enable-admission-plugins=DenyServiceExternalIPs"},
			on: []string{config.PluginDenyServiceExternalIPs, config.PluginServiceAccount}},
		{args: []string{"--enable-admission-plugins=ImagePolicyWebhook"}, err: `couldn't init admission plugin "ImagePolicyWebhook": no config specified`},
		{args: []string{"--enable-admission-plugins=ImagePolicyWebhook", "--admission-control-config-file", imagePolicy},
			on: []string{config.PluginImagePolicyWebhook, config.PluginServiceAccount}},
		{args: []string{"--enable-admission-plugins=EventRateLimit"},
			err: `couldn't init admission plugin "EventRateLimit": limits: Invalid value: []eventratelimit.Limit(nil): must not be empty`},
		{args: []string{"--enable-admission-plugins=EventRateLimit", "--admission-control-config-file", limits}, on: []string{config.PluginEventRateLimit}},
		{args: []string{"--enable-admission-plugins=AlwaysPullImages"}, on: []string{config.PluginAlwaysPullImages, config.PluginServiceAccount}},
		{args: []string{"--enable-admission-plugins=LimitRanger", "--disable-admission-plugins=LimitRanger"},
			err: `[LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped`},
	} {
		o, err := parse(t, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || exitCode(err) != 2 {
				t.Errorf("%v: exit %d, %v, want 2 and %q", c.args, exitCode(err), err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		for _, n := range c.off {
			if o.AdmissionOff.Enabled(n) {
				t.Errorf("%v: %s runs", c.args, n)
			}
		}
		for _, n := range c.on {
			if !o.AdmissionOff.Enabled(n) {
				t.Errorf("%v: %s does not run", c.args, n)
			}
		}
	}
}

func TestAllowPrivilegedFlag(t *testing.T) {
	for _, c := range []struct {
		args   []string
		forbid bool
	}{
		{args: nil, forbid: false},
		{args: []string{"--allow-privileged=true"}, forbid: false},
		{args: []string{"--allow-privileged=false"}, forbid: true},
	} {
		o, err := parse(t, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...)
		if err != nil || o.ForbidPrivileged != c.forbid {
			t.Errorf("%v: ForbidPrivileged %v, %v; want %v", c.args, o.ForbidPrivileged, err, c.forbid)
		}
	}
}

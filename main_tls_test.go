package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"platd/config"
)

// --tls-min-version and --tls-cipher-suites arrive from the command line,
// the PLATD_* variables and the --config file alike.
func TestTLSFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir)
	if err != nil || o.TLSMinVersion != tls.VersionTLS12 || !slices.Equal(o.TLSCipherSuites, config.DefaultTLSCipherSuites(tls.VersionTLS12)) {
		t.Fatalf("defaults: %v min %x suites %x", err, o.TLSMinVersion, o.TLSCipherSuites)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--tls-min-version", "VersionTLS13")
	if err != nil || o.TLSMinVersion != tls.VersionTLS13 {
		t.Errorf("flag: %v %x", err, o.TLSMinVersion)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA")
	if want := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}; err != nil || !slices.Equal(o.TLSCipherSuites, want) {
		t.Errorf("flag: %v %x", err, o.TLSCipherSuites)
	}
	file := filepath.Join(dir, "platd.yaml")
	yaml := "tls-min-version: VersionTLS11\ntls-cipher-suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_RSA_WITH_AES_128_CBC_SHA]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file)
	if want := []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA}; err != nil || o.TLSMinVersion != tls.VersionTLS11 || !slices.Equal(o.TLSCipherSuites, want) {
		t.Errorf("--config: %v %x %x", err, o.TLSMinVersion, o.TLSCipherSuites)
	}
	if !slices.Contains(o.Warnings, "Use of insecure cipher 'TLS_RSA_WITH_AES_128_CBC_SHA' detected.") {
		t.Errorf("no warning for an insecure suite: %q", o.Warnings)
	}
	t.Setenv("PLATD_TLS_MIN_VERSION", "VersionTLS10")
	t.Setenv("PLATD_TLS_CIPHER_SUITES", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA")
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file)
	if want := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA}; err != nil || o.TLSMinVersion != tls.VersionTLS10 || !slices.Equal(o.TLSCipherSuites, want) {
		t.Errorf("environment over file: %v %x %x", err, o.TLSMinVersion, o.TLSCipherSuites)
	}
	// TLS 1.3 suites are Go's: listed suites need no HTTP/2 suite, and
	// the flag is said to have no effect.
	o, err = parse(t, "serve", "--data-dir", dir, "--tls-min-version", "VersionTLS13", "--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA")
	if err != nil || !slices.Contains(o.Warnings, "--tls-cipher-suites has no effect with --tls-min-version VersionTLS13: TLS 1.3 suites are not configurable") {
		t.Errorf("TLS 1.3 with suites: %v %q", err, o.Warnings)
	}
	os.Unsetenv("PLATD_TLS_MIN_VERSION")
	os.Unsetenv("PLATD_TLS_CIPHER_SUITES")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-min-version", "TLS12"}, `--tls-min-version: unknown tls version "TLS12": want one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13`},
		{[]string{"--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,ECDHE-ECDSA-AES128-GCM-SHA256"}, "--tls-cipher-suites: Cipher suite ECDHE-ECDSA-AES128-GCM-SHA256 not supported or doesn't exist"},
		{[]string{"--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}, "--tls-cipher-suites must include TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
	} {
		_, err := parse(t, append([]string{"serve", "--data-dir", dir}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

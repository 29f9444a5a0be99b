package config

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"
)

func TestParseTLSCipherSuites(t *testing.T) {
	t.Parallel()
	ids, insecure, err := ParseTLSCipherSuites([]string{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"})
	if err != nil || !slices.Equal(ids, []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_AES_128_GCM_SHA256}) ||
		!slices.Equal(insecure, []string{"TLS_RSA_WITH_AES_128_GCM_SHA256"}) {
		t.Errorf("%x %q %v", ids, insecure, err)
	}
	if _, _, err := ParseTLSCipherSuites([]string{"tls_ecdhe_rsa_with_aes_128_gcm_sha256"}); err == nil || err.Error() != "Cipher suite tls_ecdhe_rsa_with_aes_128_gcm_sha256 not supported or doesn't exist" {
		t.Errorf("lower case name: %v", err)
	}
	if v, err := ParseTLSVersion(""); err != nil || v != tls.VersionTLS12 {
		t.Errorf("default version %x %v", v, err)
	}
	// The defaults are all AEAD with ECDHE, none of Go's insecure list.
	for _, id := range DefaultTLSCipherSuites(tls.VersionTLS12) {
		name := tls.CipherSuiteName(id)
		if !strings.HasPrefix(name, "TLS_ECDHE_") || strings.Contains(name, "CBC") || strings.HasSuffix(name, "_SHA") || insecureCipherSuites[name] != 0 {
			t.Errorf("default suite %s", name)
		}
	}
}

// Below TLS 1.2 the defaults add the CBC-SHA suites of Go's defaults, and
// a list without a suite the lowest version can use is refused. The
// defaults are the caller's to change.
func TestTLSLegacyVersions(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"VersionTLS10", "VersionTLS11"} {
		o := Options{TLSMinVersionName: v}
		if errs := o.validateTLS(); len(errs) > 0 {
			t.Fatal(errs)
		}
		if !slices.Contains(o.TLSCipherSuites, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA) || !slices.Contains(o.TLSCipherSuites, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA) ||
			!slices.Contains(o.TLSCipherSuites, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256) {
			t.Errorf("%s defaults: %x", v, o.TLSCipherSuites)
		}
		o = Options{TLSMinVersionName: v, TLSCipherSuiteNames: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"}}
		want := "--tls-cipher-suites has no suite that " + v + " clients can use: add a CBC suite such as TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA or TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, or raise --tls-min-version"
		if errs := o.validateTLS(); !slices.Equal(errs, []string{want}) {
			t.Errorf("%s with TLS 1.2-only suites: %q", v, errs)
		}
	}
	if got := DefaultTLSCipherSuites(0); slices.ContainsFunc(got, func(id uint16) bool { return slices.Contains(legacyTLSCipherSuites, id) }) {
		t.Errorf("TLS 1.2 defaults hold CBC suites: %x", got)
	}
	d := DefaultTLSCipherSuites(tls.VersionTLS12)
	d[0] = 0
	if DefaultTLSCipherSuites(tls.VersionTLS12)[0] == 0 {
		t.Error("the defaults are shared with a caller")
	}
}

// FuzzTLSFlags feeds arbitrary --tls-min-version and --tls-cipher-suites
// values: no panic, and what is accepted is a known version and known
// suites.
func FuzzTLSFlags(f *testing.F) {
	f.Add("VersionTLS12", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_RC4_128_SHA")
	f.Add("", "")
	f.Add("VersionTLS13", " , ,TLS_AES_128_GCM_SHA256")
	f.Add("versiontls10", "TLS_FOO")
	f.Fuzz(func(t *testing.T, version, suites string) {
		o := Options{TLSMinVersionName: version, TLSCipherSuiteNames: []string{suites}}
		if errs := o.validateTLS(); len(errs) > 0 {
			return
		}
		if !slices.Contains([]uint16{tls.VersionTLS10, tls.VersionTLS11, tls.VersionTLS12, tls.VersionTLS13}, o.TLSMinVersion) || len(o.TLSCipherSuites) == 0 {
			t.Fatalf("accepted %q %q as %x %x", version, suites, o.TLSMinVersion, o.TLSCipherSuites)
		}
		for _, id := range o.TLSCipherSuites {
			if n := tls.CipherSuiteName(id); strings.HasPrefix(n, "0x") {
				t.Fatalf("unknown suite %x from %q", id, suites)
			}
		}
	})
}

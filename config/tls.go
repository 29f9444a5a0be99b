package config

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// TLS versions by the names --tls-min-version takes (upstream's).
var tlsVersions = map[string]uint16{
	"VersionTLS10": tls.VersionTLS10,
	"VersionTLS11": tls.VersionTLS11,
	"VersionTLS12": tls.VersionTLS12,
	"VersionTLS13": tls.VersionTLS13,
}

// DefaultTLSMinVersion is --tls-min-version's default, upstream's: TLS 1.0
// and 1.1 have no AEAD suites.
const DefaultTLSMinVersion = "VersionTLS12"

// TLSVersionNames are the values --tls-min-version accepts, sorted.
func TLSVersionNames() []string { return slices.Sorted(maps.Keys(tlsVersions)) }

// ParseTLSVersion returns the TLS version named name; "" is the default.
// The error text is upstream's.
func ParseTLSVersion(name string) (uint16, error) {
	if name == "" {
		name = DefaultTLSMinVersion
	}
	v, ok := tlsVersions[name]
	if !ok {
		return 0, fmt.Errorf("unknown tls version %q", name)
	}
	return v, nil
}

// Cipher suites by their IANA names, as upstream accepts them: every
// suite Go implements, the insecure ones too (they earn a warning), and
// two older spellings of the ChaCha20 suites.
var (
	secureCipherSuites   = map[string]uint16{}
	insecureCipherSuites = map[string]uint16{}
)

func init() {
	for _, s := range tls.CipherSuites() {
		secureCipherSuites[s.Name] = s.ID
	}
	secureCipherSuites["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"] = tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
	secureCipherSuites["TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"] = tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
	for _, s := range tls.InsecureCipherSuites() {
		insecureCipherSuites[s.Name] = s.ID
	}
}

// defaultTLSCipherSuites are the TLS 1.2 suites served without
// --tls-cipher-suites: ECDHE key exchange with an AEAD cipher only. Go's
// own default adds CBC suites with SHA-1 MACs (Lucky13-style padding
// oracles, no forward-secure integrity), which upstream serves; platd
// leaves them out unless TLS 1.0 or 1.1 is allowed. TLS 1.3 suites are
// always on and not configurable.
var defaultTLSCipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// legacyTLSCipherSuites are the suites TLS 1.0 and 1.1 can use among Go's
// (and so upstream's) defaults: none of the AEAD ones exist before 1.2.
var legacyTLSCipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
}

// DefaultTLSCipherSuites returns the suites served without
// --tls-cipher-suites when the lowest version is minVersion (0 is TLS
// 1.2): the AEAD suites, and below TLS 1.2 the CBC-SHA suites the older
// clients need. The slice is the caller's.
func DefaultTLSCipherSuites(minVersion uint16) []uint16 {
	out := slices.Clone(defaultTLSCipherSuites)
	if minVersion != 0 && minVersion < tls.VersionTLS12 {
		out = append(out, legacyTLSCipherSuites...)
	}
	return out
}

// usableAt reports whether suite id can be negotiated at version v.
func usableAt(id, v uint16) bool {
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, s := range list {
			if s.ID == id {
				return slices.Contains(s.SupportedVersions, v)
			}
		}
	}
	return false
}

// PreferredTLSCipherNames are the suite names --tls-cipher-suites accepts
// without a warning, sorted.
func PreferredTLSCipherNames() []string { return slices.Sorted(maps.Keys(secureCipherSuites)) }

// InsecureTLSCipherNames are the suite names --tls-cipher-suites accepts
// with a warning, sorted.
func InsecureTLSCipherNames() []string { return slices.Sorted(maps.Keys(insecureCipherSuites)) }

// ParseTLSCipherSuites returns the suites named, in order, and the names
// among them that are insecure. An unknown name is an error with
// upstream's text.
func ParseTLSCipherSuites(names []string) (ids []uint16, insecure []string, err error) {
	for _, n := range names {
		if id, ok := secureCipherSuites[n]; ok {
			ids = append(ids, id)
			continue
		}
		id, ok := insecureCipherSuites[n]
		if !ok {
			return nil, nil, fmt.Errorf("Cipher suite %s not supported or doesn't exist", n)
		}
		ids = append(ids, id)
		insecure = append(insecure, n)
	}
	return ids, insecure, nil
}

// http2Required are the suites of which HTTP/2 (RFC 7540 §9.2.2) needs one
// below TLS 1.3; Go's HTTP/2 server refuses to start without. Which one
// the serving key can use is checked once the key is read
// (security.ServerTLSConfig).
var http2Required = []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}

// validateTLS parses --tls-min-version and --tls-cipher-suites into
// TLSMinVersion and TLSCipherSuites.
func (o *Options) validateTLS() []string {
	var errs []string
	v, err := ParseTLSVersion(o.TLSMinVersionName)
	if err != nil {
		errs = append(errs, "--tls-min-version: "+err.Error()+": want one of "+strings.Join(TLSVersionNames(), ", "))
	}
	o.TLSMinVersion = v
	var names []string
	for _, n := range o.TLSCipherSuiteNames {
		for _, p := range strings.Split(n, ",") {
			if p = strings.TrimSpace(p); p != "" {
				names = append(names, p)
			}
		}
	}
	if len(names) == 0 {
		o.TLSCipherSuites = DefaultTLSCipherSuites(v)
		return errs
	}
	ids, insecure, err := ParseTLSCipherSuites(names)
	if err != nil {
		return append(errs, "--tls-cipher-suites: "+err.Error()+" (platd serve --help lists the names)")
	}
	o.TLSCipherSuites = ids
	if v == tls.VersionTLS13 {
		o.Warnings = append(o.Warnings, "--tls-cipher-suites has no effect with --tls-min-version VersionTLS13: TLS 1.3 suites are not configurable")
	}
	for _, n := range insecure {
		o.Warnings = append(o.Warnings, fmt.Sprintf("Use of insecure cipher '%s' detected.", n))
	}
	if v != 0 && v < tls.VersionTLS12 && !slices.ContainsFunc(ids, func(id uint16) bool { return usableAt(id, v) }) {
		errs = append(errs, fmt.Sprintf("--tls-cipher-suites has no suite that %s clients can use: add a CBC suite such as TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA or TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, or raise --tls-min-version", cmp.Or(o.TLSMinVersionName, DefaultTLSMinVersion)))
	}
	if v != 0 && v < tls.VersionTLS13 && !slices.ContainsFunc(ids, func(id uint16) bool { return slices.Contains(http2Required, id) }) {
		errs = append(errs, "--tls-cipher-suites must include TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: HTTP/2 requires one of them below TLS 1.3")
	}
	return errs
}

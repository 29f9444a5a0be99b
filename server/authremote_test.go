package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"platd/config"
)

func testCAPEM(t *testing.T, cn string, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: notAfter.Add(-48 * time.Hour),
		NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestMergeAuthenticationTrust(t *testing.T) {
	t.Parallel()
	now := time.Now()
	mine, other := testCAPEM(t, "mine", now.Add(time.Hour)), testCAPEM(t, "other", now.Add(time.Hour))
	expired, graced := testCAPEM(t, "expired", now.Add(-6*time.Minute)), testCAPEM(t, "graced", now.Add(-4*time.Minute))
	proxy := testCAPEM(t, "proxy", now.Add(time.Hour))
	trust := authenticationTrust{clientCA: []byte(mine), proxyCA: []byte(proxy), rh: config.RequestHeader{
		AllowedNames: []string{"front-proxy"}, UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"},
	}}
	have := map[string]string{
		"client-ca-file":                 other + expired + graced + mine,
		"requestheader-allowed-names":    `["aggregator","front-proxy"]`,
		"requestheader-username-headers": `["X-User"]`,
		"unrelated":                      "dropped",
	}
	got, err := mergeAuthenticationTrust(have, trust, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"client-ca-file":                     other + graced + mine,
		"requestheader-client-ca-file":       proxy,
		"requestheader-allowed-names":        `["aggregator","front-proxy"]`,
		"requestheader-username-headers":     `["X-User","X-Remote-User"]`,
		"requestheader-uid-headers":          `[]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `[]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged\n got %v\nwant %v", got, want)
	}
	// Without a proxy CA anywhere, only the client CA is published.
	got, err = mergeAuthenticationTrust(nil, authenticationTrust{clientCA: []byte(mine)}, now)
	if err != nil || !reflect.DeepEqual(got, map[string]string{"client-ca-file": mine}) {
		t.Errorf("client CA only: %v %v", got, err)
	}
	// A stored value that is not a list is not overwritten.
	_, err = mergeAuthenticationTrust(map[string]string{"requestheader-group-headers": "X-Group"}, trust, now)
	if err == nil || !strings.HasPrefix(err.Error(), "requestheader-group-headers: ") {
		t.Errorf("bad stored list: %v", err)
	}
}

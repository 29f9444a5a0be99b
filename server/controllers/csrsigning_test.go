package controllers

import (
	"crypto/x509"
	"encoding/json"
	"testing"
	"time"

	"platd/bolt"
)

func TestCSRSigningTTL(t *testing.T) {
	t.Parallel()
	c := &CSRSigning{TTL: 365 * 24 * time.Hour}
	secs := func(s int64) *int64 { return &s }
	for _, tc := range []struct {
		asked *int64
		want  time.Duration
	}{
		{nil, 365 * 24 * time.Hour},
		{secs(86400), 24 * time.Hour},
		{secs(600), 10 * time.Minute},
		{secs(60), 10 * time.Minute},
		{secs(10 * 365 * 86400), 365 * 24 * time.Hour},
	} {
		if got := c.ttl(tc.asked); got != tc.want {
			t.Errorf("expirationSeconds %v: ttl %v, want %v", tc.asked, got, tc.want)
		}
	}
}

func TestCSRSigningPending(t *testing.T) {
	t.Parallel()
	c := &CSRSigning{Signers: map[string]SignerRule{"d/client": func(*x509.CertificateRequest, []string) error { return nil }}}
	for _, tc := range []struct {
		name, status string
		signer       string
		want         bool
	}{
		{"approved", `{"conditions":[{"type":"Approved","status":"True"}]}`, "d/client", true},
		{"not decided", `{}`, "d/client", false},
		{"another signer", `{"conditions":[{"type":"Approved","status":"True"}]}`, "example.com/x", false},
		{"approved and denied", `{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"}]}`, "d/client", false},
		{"failed", `{"conditions":[{"type":"Approved","status":"True"},{"type":"Failed","status":"True"}]}`, "d/client", false},
		{"a failure no longer true", `{"conditions":[{"type":"Approved","status":"True"},{"type":"Failed","status":"False"}]}`, "d/client", true},
		{"issued", `{"certificate":"Yw==","conditions":[{"type":"Approved","status":"True"}]}`, "d/client", false},
	} {
		var r signingRequest
		if err := json.Unmarshal([]byte(`{"spec":{"signerName":"`+tc.signer+`"},"status":`+tc.status+`}`), &r); err != nil {
			t.Fatal(err)
		}
		if got := c.pending(&r); got != tc.want {
			t.Errorf("%s: pending %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSigningRequestEvent(t *testing.T) {
	t.Parallel()
	stored := []byte(`{"metadata":{"name":"csr-1"},"spec":{"signerName":"s"}}`)
	for _, tc := range []struct {
		name    string
		ev      bolt.Event
		want    string
		request bool
		wantErr bool
	}{
		{"put", bolt.Event{Type: bolt.Put, KV: bolt.KV{Key: "/k", Value: stored}}, "csr-1", true, false},
		{"delete", bolt.Event{Type: bolt.Delete, Prev: &bolt.KV{Key: "/k", Value: stored}}, "csr-1", false, false},
		{"delete unknown", bolt.Event{Type: bolt.Delete}, "", false, false},
		{"delete unreadable", bolt.Event{Type: bolt.Delete, Prev: &bolt.KV{Key: "/k", Value: []byte("{")}}, "", false, false},
		{"put unreadable", bolt.Event{Type: bolt.Put, KV: bolt.KV{Key: "/k", Value: []byte("{")}}, "", false, true},
	} {
		r, name, err := signingRequestEvent(tc.ev)
		if (err != nil) != tc.wantErr || name != tc.want || (r != nil) != tc.request {
			t.Errorf("%s: request %v, name %q, err %v; want request %v, name %q, error %v", tc.name, r != nil, name, err, tc.request, tc.want, tc.wantErr)
		}
		if r != nil && r.Spec.SignerName != "s" {
			t.Errorf("%s: signer %q, want s", tc.name, r.Spec.SignerName)
		}
	}
}

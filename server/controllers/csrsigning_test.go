package controllers

import (
	"crypto/x509"
	"encoding/json"
	"testing"
	"time"
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

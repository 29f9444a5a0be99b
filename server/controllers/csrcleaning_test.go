package controllers

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

func TestCleanupAt(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	notAfter := time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "u"}, NotBefore: notAfter.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	const created = `"2026-11-28T10:00:00Z"`
	for _, tc := range []struct {
		name, status string
		want         string // RFC 3339, "" for never
	}{
		{"pending: a day after its creation", `{}`, "2026-11-29T10:00:00Z"},
		{"approved, not issued: never", `{"conditions":[{"type":"Approved","lastUpdateTime":"2026-11-28T10:30:00Z"}]}`, ""},
		{"issued: an hour after approval", `{"certificate":"` + cert + `","conditions":[{"type":"Approved","lastUpdateTime":"2026-11-28T10:30:00Z"}]}`, "2026-11-28T11:30:00Z"},
		{"issued: the certificate's end when sooner", `{"certificate":"` + cert + `","conditions":[{"type":"Approved","lastUpdateTime":"2026-11-28T12:30:00Z"}]}`, "2026-11-28T13:00:00Z"},
		{"denied: an hour after", `{"conditions":[{"type":"Denied","lastUpdateTime":"2026-11-28T10:10:00Z"}]}`, "2026-11-28T11:10:00Z"},
		{"failed: an hour after", `{"conditions":[{"type":"Approved","lastUpdateTime":"2026-11-28T10:10:00Z"},{"type":"Failed","lastUpdateTime":"2026-11-28T10:20:00Z"}]}`, "2026-11-28T11:20:00Z"},
		{"a decision without its time: never", `{"conditions":[{"type":"Denied"}]}`, ""},
	} {
		var r signingRequest
		if err := json.Unmarshal([]byte(`{"metadata":{"creationTimestamp":`+created+`},"status":`+tc.status+`}`), &r); err != nil {
			t.Fatal(err)
		}
		got := cleanupAt(&r)
		switch {
		case tc.want == "" && !got.IsZero():
			t.Errorf("%s: cleaned up at %v, want never", tc.name, got)
		case tc.want != "" && got.Format(time.RFC3339) != tc.want:
			t.Errorf("%s: cleaned up at %v, want %s", tc.name, got, tc.want)
		}
	}
}

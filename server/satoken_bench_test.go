//go:build linux

package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAuthenticatedGets measures GETs of one ConfigMap per second
// with three credentials: a static token, a service-account JWT (bound,
// from a TokenRequest) and the admin client certificate. Target: the JWT
// within 10% of the static token, thanks to the verified-token cache.
//
//	go test -run XXX -bench AuthenticatedGets -benchtime 1x ./server/
func BenchmarkAuthenticatedGets(b *testing.B) {
	platdBinary(b)
	const gets, clients, rounds = 20000, 16, 5
	tokens := filepath.Join(b.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("static-bench-token,bench,bench-uid\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	var static, jwt, cert time.Duration
	for range b.N {
		b.StopTimer()
		p := startPlatd(b, b.TempDir(), "--token-auth-file", tokens)
		cmBody := []byte(`{"metadata":{"name":"probe"},"data":{"a":"b"}}`)
		if code, body, err := p.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", cmBody, "Content-Type", "application/json"); err != nil || code != http.StatusCreated {
			b.Fatalf("creating the ConfigMap: %d %v %s", code, err, body)
		}
		saBody := []byte(`{"metadata":{"name":"bench"}}`)
		if code, body, err := p.do(http.MethodPost, "/api/v1/namespaces/default/serviceaccounts", saBody, "Content-Type", "application/json"); err != nil || code != http.StatusCreated {
			b.Fatalf("creating the ServiceAccount: %d %v %s", code, err, body)
		}
		code, body, err := p.do(http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/bench/token", []byte(`{"spec":{}}`), "Content-Type", "application/json")
		if err != nil || code != http.StatusCreated {
			b.Fatalf("TokenRequest: %d %v %s", code, err, body)
		}
		var tr struct{ Status struct{ Token string } }
		if err := json.Unmarshal(body, &tr); err != nil || tr.Status.Token == "" {
			b.Fatalf("TokenRequest reply %s: %v", body, err)
		}
		b.StartTimer()
		// Rounds alternate the credentials so that warm-up and the
		// machine's other load fall on all three alike.
		for range rounds {
			static += benchGets(b, p, gets/rounds, clients, "static-bench-token")
			jwt += benchGets(b, p, gets/rounds, clients, tr.Status.Token)
			cert += benchGets(b, p, gets/rounds, clients, "")
		}
		b.StopTimer()
		p.terminate()
		b.StartTimer()
	}
	perSec := func(d time.Duration) float64 { return float64(gets*b.N) / d.Seconds() }
	b.ReportMetric(perSec(static), "static-gets/s")
	b.ReportMetric(perSec(jwt), "jwt-gets/s")
	b.ReportMetric(perSec(cert), "cert-gets/s")
	b.ReportMetric(100*perSec(jwt)/perSec(static), "jwt-%-of-static")
}

// benchGets sends n GETs from clients parallel HTTP/2 connections with the
// bearer token, or with the admin client certificate when token is "".
func benchGets(b *testing.B, p *platdProc, n, clients int, token string) time.Duration {
	b.Helper()
	conns := make([]*http.Client, clients)
	for i := range conns {
		if token == "" {
			conns[i] = p.newClient()
		} else {
			conns[i] = tokenClient(b, p)
		}
		defer conns[i].CloseIdleConnections()
	}
	var next atomic.Int64
	var failed atomic.Pointer[string]
	var wg sync.WaitGroup
	began := time.Now()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var hdr []string
			if token != "" {
				hdr = []string{"Authorization", "Bearer " + token}
			}
			for failed.Load() == nil && int(next.Add(1)) <= n {
				code, body, err := doWith(c, p.url, http.MethodGet, "/api/v1/namespaces/default/configmaps/probe", nil, hdr...)
				if err != nil || code != http.StatusOK {
					msg := fmt.Sprintf("GET: %d %v %.200s", code, err, body)
					failed.CompareAndSwap(nil, &msg)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(began)
	if msg := failed.Load(); msg != nil {
		b.Fatal(*msg)
	}
	return took
}

// tokenClient is an HTTP/2 client trusting the data directory's CA that
// presents no client certificate, so a bearer token is what authenticates.
func tokenClient(b *testing.B, p *platdProc) *http.Client {
	b.Helper()
	caPEM, err := os.ReadFile(filepath.Join(p.dataDir, "pki", "ca.crt"))
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
}

//go:build linux

package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"platd/config"
)

// benchSecret returns the JSON of the i-th benchmark Secret: about 1 KB of
// credentials and a certificate-sized blob, varied per object.
func benchSecret(i int) []byte {
	blob := make([]byte, 600)
	for j := range blob {
		blob[j] = byte(i + j)
	}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{
			"name": fmt.Sprintf("checkout-db-%05d", i), "namespace": benchNS,
			"labels": map[string]string{"app": fmt.Sprintf("checkout-%02d", i%40)},
		},
		"data": map[string]string{
			"username": base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("svc-%05d", i))),
			"password": base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("pw-%032x", i))),
			"ca.crt":   base64.StdEncoding.EncodeToString(blob),
		},
	})
	return b
}

// BenchmarkSecretEncryption measures 10,000 Secret creates and 20,000
// GETs from 16 clients against a fresh durable server, then the restart
// to ready with those secrets, without --encryption-provider-config, with
// the identity provider and with aesgcm:
//
//	go test -run XXX -bench SecretEncryption -benchtime 1x ./server/
//
// GETs are served from memory and should not differ; creates pay one
// encryption of the value and one of the previous state; the restart
// decrypts every secret once.
func BenchmarkSecretEncryption(b *testing.B) {
	platdBinary(b)
	brand := config.Brands["plat"]
	head := "apiVersion: " + config.EncryptionConfigAPIVersions(brand)[0] + "\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n"
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	for _, mode := range []struct{ name, providers string }{
		{"none", ""},
		{"identity", "  - identity: {}\n"},
		{"aesgcm", "  - aesgcm: {keys: [{name: key1, secret: " + key + "}]}\n"},
	} {
		b.Run(mode.name, func(b *testing.B) {
			var flags []string
			if mode.providers != "" {
				p := filepath.Join(b.TempDir(), "enc.yaml")
				if err := os.WriteFile(p, []byte(head+mode.providers), 0o600); err != nil {
					b.Fatal(err)
				}
				flags = []string{"--encryption-provider-config", p}
			}
			const gets, clients = 20000, 16
			var creates, reads, restart time.Duration
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				p := startPlatd(b, dir, flags...)
				benchNamespace(b, p)
				b.StartTimer()
				creates += benchCreateOf(b, p, "secrets", benchSecret, 0, benchObjects, clients)
				reads += benchRequests(b, p, gets, clients, func(c *http.Client, i int) string {
					path := fmt.Sprintf("/api/v1/namespaces/%s/secrets/checkout-db-%05d", benchNS, i%benchObjects)
					if code, resp, err := doWith(c, p.url, http.MethodGet, path, nil); err != nil || code != http.StatusOK {
						return fmt.Sprintf("get %s: %d %v %.200s", path, code, err, resp)
					}
					return ""
				})
				b.StopTimer()
				p.terminate()
				b.StartTimer()
				p = launchPlatd(b, dir, flags...)
				restart += p.waitReady()
				b.StopTimer()
				p.terminate()
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(float64(benchObjects)*n/creates.Seconds(), "creates/s")
			b.ReportMetric(float64(gets)*n/reads.Seconds(), "gets/s")
			b.ReportMetric(millis(restart)/n, "ms/restart")
		})
	}
}

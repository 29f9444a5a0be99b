package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"platd/server"
)

// bigValueSize is the size of the data value of the large-object
// benchmarks: 1 MB, close to the largest object an upstream store takes.
const bigValueSize = 1 << 20

// bigConfigMap is a ConfigMap named big whose one data value is size
// bytes, starting with tag.
func bigConfigMap(tag string, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"v":"`)
	b.WriteString(tag)
	b.WriteString(strings.Repeat("x", size-len(tag)))
	b.WriteString(`"}}`)
	return b.Bytes()
}

// BenchmarkBigValueUpdate sends sequential PUTs of a 1 MB ConfigMap to a
// server in this process and reports the bytes the process allocates per
// update (the client's share is a few KB: bodies are sent from memory and
// responses discarded). Profile the server's copies with -memprofile.
func BenchmarkBigValueUpdate(b *testing.B) {
	o := testOptions(b, b.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, o, quietLog())
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	caPEM, err := os.ReadFile(filepath.Join(o.CertDir, "ca.crt"))
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	// As curl by default: no gzip, so the response is the stored bytes.
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	base := srv.URL()
	path := "/api/v1/namespaces/default/configmaps"
	send := func(method, path string, body []byte) {
		r, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+adminToken)
		r.Header.Set("Content-Type", "application/json")
		res, err := c.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 || n < bigValueSize {
			b.Fatalf("%s %s: %d, %d bytes", method, path, res.StatusCode, n)
		}
	}
	send(http.MethodPost, path, bigConfigMap("x", bigValueSize))
	bodies := make([][]byte, 8)
	for i := range bodies {
		bodies[i] = bigConfigMap(fmt.Sprint(i), bigValueSize)
	}
	var before, after, now runtime.MemStats
	var peak uint64
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		send(http.MethodPut, path+"/big", bodies[i%len(bodies)])
		// The heap the process holds, sampled between updates: the
		// resident memory follows it.
		b.StopTimer()
		runtime.ReadMemStats(&now)
		peak = max(peak, now.HeapInuse)
		b.StartTimer()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	b.ReportMetric(float64(alloc)/float64(b.N)/(1<<20), "MiB-alloc/update")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-heap")
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "MiB-live")
}

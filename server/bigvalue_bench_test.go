package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

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

// bigValueHeapProfile names a file for the heap profile of the collection
// that set BenchmarkBigValueUpdate's highest heap goal.
var bigValueHeapProfile = flag.String("bigvalue.heapprofile", "", "write the heap profile at BenchmarkBigValueUpdate's highest heap goal to this file")

func writeHeapProfile(b *testing.B, path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
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
	for deadline := time.Now().Add(10 * time.Second); ; {
		rq, _ := http.NewRequest(http.MethodGet, base+"/readyz", nil)
		rq.Header.Set("Authorization", "Bearer "+adminToken)
		res, err := c.Do(rq)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("not ready within 10s: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	send(http.MethodPost, path, bigConfigMap("x", bigValueSize))
	// One body, its value's first bytes changed per update, so the
	// client holds no more than the probe's curl does.
	body := bigConfigMap("x", bigValueSize)
	tag := bytes.Index(body, []byte(`"x`)) + 1
	var before, after, now runtime.MemStats
	var peak, goal uint64
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		copy(body[tag:], fmt.Sprintf("%08d", i))
		send(http.MethodPut, path+"/big", body)
		// The heap the process holds, sampled between updates: the
		// resident memory follows it.
		b.StopTimer()
		runtime.ReadMemStats(&now)
		peak = max(peak, now.HeapInuse)
		if now.NextGC > goal {
			// The heap profile is of the last collection: the one that set
			// the highest goal shows what the peak is made of.
			goal = now.NextGC
			writeHeapProfile(b, *bigValueHeapProfile)
		}
		b.StartTimer()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	b.ReportMetric(float64(alloc)/float64(b.N)/(1<<20), "MiB-alloc/update")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-heap")
	b.ReportMetric(float64(goal)/(1<<20), "MiB-peak-goal")
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "MiB-live")
}

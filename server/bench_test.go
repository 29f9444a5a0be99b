//go:build linux

// Benchmarks of the platd process as a user starts it: the real binary,
// durable writes (no --unsafe-no-fsync), HTTPS with the admin client
// certificate from this process. Run each once with:
//
//	go test -run XXX -bench . -benchtime 1x ./server/
//
// The figures that matter are the custom metrics (ms/start, s/10k,
// ms/list, MB...); ns/op is whatever the timed part of one iteration took.

package server_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/codec"
)

// Benchmark workload.
const (
	// benchObjects is the number of ConfigMaps a benchmark creates: the
	// size of a busy small cluster's ConfigMap population.
	benchObjects = 10000
	// benchNS is the namespace the benchmarks write into.
	benchNS = "bench"
)

// benchConfigMap returns the JSON of the i-th benchmark ConfigMap: about
// 800 bytes of what applications keep in ConfigMaps (properties, a few
// settings, labels and annotations), varied per object.
func benchConfigMap(i int) []byte {
	svc := i % 40
	props := strings.Join([]string{
		"server.port=8080",
		fmt.Sprintf("spring.datasource.url=jdbc:postgresql://db-%02d.internal:5432/checkout", svc),
		"spring.datasource.hikari.maximum-pool-size=20",
		"spring.jpa.open-in-view=false",
		fmt.Sprintf("cache.redis.host=redis-%02d.internal", svc%8),
		"cache.ttl=300s",
		"feature.new-cart=true",
		"feature.express-checkout=false",
		"logging.level.root=INFO",
		fmt.Sprintf("tracing.sample-rate=0.%02d", i%100),
		"",
	}, "\n")
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name":        fmt.Sprintf("checkout-config-%05d", i),
			"namespace":   benchNS,
			"labels":      map[string]string{"app": fmt.Sprintf("checkout-%02d", svc), "tier": "backend", "env": "staging"},
			"annotations": map[string]string{"owner": "team-payments", "config-revision": strconv.Itoa(i)},
		},
		"data": map[string]string{
			"application.properties": props,
			"LOG_LEVEL":              "info",
			"HTTP_TIMEOUT":           "30s",
			"PAYMENTS_ENDPOINT":      fmt.Sprintf("https://payments-%02d.internal/v2/charge", svc),
			"RETRY_POLICY":           `{"maxAttempts":5,"backoff":"exponential","initialDelay":"200ms"}`,
		},
	})
	return b
}

// benchNamespace creates the benchmark namespace and its service account.
func benchNamespace(b *testing.B, p *platdProc) {
	b.Helper()
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + benchNS + `"}}`)
	if code, resp, err := p.do(http.MethodPost, "/api/v1/namespaces", body); err != nil || code != http.StatusCreated {
		b.Fatalf("create namespace: %d %v %s", code, err, resp)
	}
	// The service account the benchmark pods run as.
	body = []byte(`{"metadata":{"name":"checkout"}}`)
	if code, resp, err := p.do(http.MethodPost, "/api/v1/namespaces/"+benchNS+"/serviceaccounts", body); err != nil || code != http.StatusCreated {
		b.Fatalf("create service account: %d %v %s", code, err, resp)
	}
}

// benchPod returns the JSON of the i-th benchmark Pod: about 3 KB, shaped
// like what a Deployment of a web service stamps out (labels, owner,
// two containers with env, resources, probes and mounts, a sidecar,
// volumes, tolerations and a spread constraint), varied per object.
func benchPod(i int) []byte {
	app := fmt.Sprintf("checkout-%02d", i%40)
	env := func(names ...string) []any {
		var out []any
		for _, n := range names {
			out = append(out, map[string]any{"name": n, "value": fmt.Sprintf("%s-%d", strings.ToLower(n), i%17)})
		}
		return out
	}
	probe := func(path string, delay int) map[string]any {
		return map[string]any{
			"httpGet":             map[string]any{"path": path, "port": 8080},
			"initialDelaySeconds": delay, "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3,
		}
	}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("%s-7d9f8c6b5-%05d", app, i),
			"namespace": benchNS,
			"labels": map[string]string{
				"app": app, "pod-template-hash": "7d9f8c6b5", "tier": "backend", "env": "staging", "version": "v2.14.3",
			},
			"annotations": map[string]string{
				"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics",
				"config-checksum": fmt.Sprintf("sha256:%064x", i),
			},
		},
		"spec": map[string]any{
			"serviceAccountName": "checkout",
			"containers": []any{
				map[string]any{
					"name":  "app",
					"image": "registry.example.com/payments/checkout:v2.14.3",
					"args":  []any{"--config=/etc/checkout/application.properties", "--port=8080", "--metrics-port=9090"},
					"ports": []any{
						map[string]any{"name": "http", "containerPort": 8080},
						map[string]any{"name": "metrics", "containerPort": 9090},
					},
					"env": env("LOG_LEVEL", "HTTP_TIMEOUT", "PAYMENTS_ENDPOINT", "DB_HOST", "DB_NAME", "CACHE_HOST", "TRACING_ENDPOINT", "REGION"),
					"resources": map[string]any{
						"requests": map[string]any{"cpu": "250m", "memory": "512Mi"},
						"limits":   map[string]any{"cpu": "1", "memory": "1Gi"},
					},
					"readinessProbe": probe("/ready", 5),
					"livenessProbe":  probe("/healthz", 15),
					"volumeMounts": []any{
						map[string]any{"name": "config", "mountPath": "/etc/checkout", "readOnly": true},
						map[string]any{"name": "tmp", "mountPath": "/tmp"},
					},
					"securityContext": map[string]any{
						"runAsNonRoot": true, "runAsUser": 10001, "allowPrivilegeEscalation": false,
						"readOnlyRootFilesystem": true, "capabilities": map[string]any{"drop": []any{"ALL"}},
					},
				},
				map[string]any{
					"name":      "log-shipper",
					"image":     "registry.example.com/observability/log-shipper:1.9.0",
					"env":       env("SHIP_TO", "BUFFER_SIZE"),
					"resources": map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}},
					"volumeMounts": []any{
						map[string]any{"name": "tmp", "mountPath": "/var/log/app", "readOnly": true},
					},
				},
			},
			"volumes": []any{
				map[string]any{"name": "config", "configMap": map[string]any{"name": fmt.Sprintf("checkout-config-%05d", i)}},
				map[string]any{"name": "tmp", "emptyDir": map[string]any{"sizeLimit": "256Mi"}},
			},
			"tolerations": []any{
				map[string]any{"key": "dedicated", "operator": "Equal", "value": "payments", "effect": "NoSchedule"},
			},
			"affinity": map[string]any{
				"nodeAffinity": map[string]any{
					"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
						"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{
							map[string]any{"key": "node.example.com/pool", "operator": "In", "values": []any{"payments", "general"}},
						}}},
					},
				},
				"podAntiAffinity": map[string]any{
					"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
						"weight": 100,
						"podAffinityTerm": map[string]any{
							"topologyKey":   "topology.example.com/host",
							"labelSelector": map[string]any{"matchLabels": map[string]string{"app": app}},
						},
					}},
				},
			},
			"topologySpreadConstraints": []any{
				map[string]any{
					"maxSkew": 1, "topologyKey": "topology.example.com/zone", "whenUnsatisfiable": "ScheduleAnyway",
					"labelSelector": map[string]any{"matchLabels": map[string]string{"app": app}},
				},
			},
		},
	})
	return b
}

// benchCreate creates ConfigMaps first..first+n-1 from clients parallel
// clients, each with its own connection, and returns the wall time.
func benchCreate(b *testing.B, p *platdProc, first, n, clients int) time.Duration {
	b.Helper()
	return benchCreateOf(b, p, "configmaps", benchConfigMap, first, n, clients)
}

// benchCreateOf creates objects first..first+n-1 of the namespaced
// resource from the bodies body returns, from clients parallel clients,
// each with its own connection, and returns the wall time.
func benchCreateOf(b *testing.B, p *platdProc, resource string, body func(int) []byte, first, n, clients int) time.Duration {
	b.Helper()
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = body(first + i)
	}
	collection := "/api/v1/namespaces/" + benchNS + "/" + resource
	return benchRequests(b, p, n, clients, func(c *http.Client, i int) string {
		code, resp, err := doWith(c, p.url, http.MethodPost, collection, bodies[i])
		if err != nil || code != http.StatusCreated {
			return fmt.Sprintf("create %d: %d %v %.200s", first+i, code, err, resp)
		}
		return ""
	})
}

// benchRequests makes requests 0..n-1 with send from clients parallel
// clients, each with its own connection, and returns the wall time. send
// returns what went wrong, "" for nothing; the first failure stops the
// run and fails b.
func benchRequests(b *testing.B, p *platdProc, n, clients int, send func(c *http.Client, i int) string) time.Duration {
	b.Helper()
	conns := make([]*http.Client, clients)
	for i := range conns {
		conns[i] = p.newClient()
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
			for failed.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if msg := send(c, i); msg != "" {
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

// residentMB reads the resident set size of a process from /proc.
func residentMB(b *testing.B, pid int) float64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseFloat(f[0], 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				b.Fatalf("unexpected VmRSS line %q", line)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat: the kernel's
// user-space clock tick, fixed at 100 per second on Linux.
const userHZ = 100

// cpuSeconds reads the user plus system CPU time a process has used. It
// is less disturbed by other work on the machine than wall time.
func cpuSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name is in parentheses and may hold spaces; the fields
	// after it start with the state (field 3); utime and stime are fields
	// 14 and 15.
	end := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[end+1:]))
	if end < 0 || len(f) < 13 {
		b.Fatalf("unexpected /proc/%d/stat: %q", pid, stat)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("unexpected /proc/%d/stat: %q", pid, stat)
	}
	return (utime + stime) / userHZ
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkStartToReady measures process start to the first 200 from
// /readyz on an empty data directory (CA, serving and admin certificates
// and the database are all created). Target: 50 ms. Wall time is noisy
// on a shared machine: the server's CPU time and heap allocations up to
// ready are reported beside it.
func BenchmarkStartToReady(b *testing.B) {
	platdBinary(b)
	benchStarts(b, false)
}

// BenchmarkRestartToReady is BenchmarkStartToReady for a data directory
// a first start made: key material is read and the default objects are
// found current.
func BenchmarkRestartToReady(b *testing.B) {
	platdBinary(b)
	benchStarts(b, true)
}

func benchStarts(b *testing.B, restart bool) {
	var total time.Duration
	var cpu, mallocs float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		if restart {
			startPlatd(b, dir).terminate()
		}
		b.StartTimer()
		p := launchPlatd(b, dir)
		total += p.waitReady()
		b.StopTimer()
		cpu += cpuSeconds(b, p.pid())
		mallocs += serverMallocs(b, p)
		p.terminate()
		b.StartTimer()
	}
	b.ReportMetric(millis(total)/float64(b.N), "ms/start")
	// CPU time has a 10 ms tick: meaningful with -benchtime 20x or more.
	b.ReportMetric(cpu*1000/float64(b.N), "server-cpu-ms/start")
	b.ReportMetric(mallocs/float64(b.N), "server-allocs/start")
}

// serverMallocs reads the server's count of heap allocations so far from
// its metrics.
func serverMallocs(b *testing.B, p *platdProc) float64 {
	b.Helper()
	code, body, err := p.do(http.MethodGet, "/metrics", nil, "Accept", "text/plain")
	if err != nil || code != http.StatusOK {
		b.Fatalf("metrics: %d %v %.200s", code, err, body)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_mallocs_total "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("metrics: %q: %v", line, err)
			}
			return n
		}
	}
	b.Fatalf("metrics: no go_memstats_mallocs_total in %.300s", body)
	return 0
}

// BenchmarkParallelCreates measures 10,000 ConfigMap creates of about 800
// bytes from 16 and 32 parallel clients against a fresh durable server.
// Target: 2.5 s per 10k.
func BenchmarkParallelCreates(b *testing.B) {
	platdBinary(b)
	for _, clients := range []int{16, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			benchFreshCreates(b, "configmaps", benchConfigMap, clients)
		})
	}
}

// BenchmarkPodCreates measures 10,000 creates of a realistic 3 KB Pod
// from 16 parallel clients against a fresh durable server: pods carry
// the most defaulting and validation of any type. Target: 3 s per 10k.
func BenchmarkPodCreates(b *testing.B) {
	platdBinary(b)
	if n := len(benchPod(0)); n < 2500 || n > 3500 {
		b.Fatalf("benchmark pod is %d bytes, want about 3 KB", n)
	}
	benchFreshCreates(b, "pods", benchPod, 16)
}

// benchFreshCreates times 10,000 creates of resource from clients
// parallel clients against a fresh durable server per iteration, and
// reports the wall time, the rate, the server's CPU time and the load's
// (this process's): on a small machine both share the cores, so the wall
// time follows their sum.
func benchFreshCreates(b *testing.B, resource string, body func(int) []byte, clients int) {
	benchFreshCreatesWith(b, resource, body, clients)
}

// benchFreshCreatesWith is benchFreshCreates against servers started with
// flags.
func benchFreshCreatesWith(b *testing.B, resource string, body func(int) []byte, clients int, flags ...string) {
	var total time.Duration
	var cpu, clientCPU float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		p := startPlatd(b, b.TempDir(), flags...)
		benchNamespace(b, p)
		cpuBefore, selfBefore := cpuSeconds(b, p.pid()), cpuSeconds(b, os.Getpid())
		b.StartTimer()
		total += benchCreateOf(b, p, resource, body, 0, benchObjects, clients)
		b.StopTimer()
		cpu += cpuSeconds(b, p.pid()) - cpuBefore
		clientCPU += cpuSeconds(b, os.Getpid()) - selfBefore
		p.terminate()
		b.StartTimer()
	}
	per := total.Seconds() / float64(b.N)
	b.ReportMetric(per, "s/10k")
	b.ReportMetric(benchObjects/per, "creates/s")
	b.ReportMetric(cpu/float64(b.N), "server-cpu-s/10k")
	b.ReportMetric(clientCPU/float64(b.N), "client-cpu-s/10k")
}

// BenchmarkServerSideApply times 5,000 server-side applies of ConfigMaps
// from 16 clients against a fresh durable server: half create, half update
// what the first half created (another revision of each), as the load
// tool's apply scenario. Target: 2,500 applies/s.
func BenchmarkServerSideApply(b *testing.B) {
	platdBinary(b)
	const applies, clients = 5000, 16
	bodies := make([][]byte, applies)
	for i := range bodies {
		bodies[i] = benchConfigMap(i % (applies / 2))
		if i >= applies/2 {
			bodies[i] = bytes.Replace(bodies[i], []byte(`"LOG_LEVEL":"info"`), []byte(`"LOG_LEVEL":"debug"`), 1)
		}
	}
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		p := startPlatd(b, b.TempDir())
		benchNamespace(b, p)
		b.StartTimer()
		total += benchApply(b, p, bodies, clients)
		b.StopTimer()
		p.terminate()
		b.StartTimer()
	}
	b.ReportMetric(float64(applies*b.N)/total.Seconds(), "applies/s")
}

// benchApply sends the apply bodies in order from clients parallel
// clients; each names its object. The first half must create, the rest
// update.
func benchApply(b *testing.B, p *platdProc, bodies [][]byte, clients int) time.Duration {
	b.Helper()
	collection := "/api/v1/namespaces/" + benchNS + "/configmaps/"
	return benchRequests(b, p, len(bodies), clients, func(c *http.Client, i int) string {
		name := fmt.Sprintf("checkout-config-%05d", i%(len(bodies)/2))
		code, resp, err := doWith(c, p.url, http.MethodPatch, collection+name+"?fieldManager=bench&force=true", bodies[i], "Content-Type", "application/apply-patch+yaml")
		if err != nil || code != http.StatusOK && code != http.StatusCreated {
			return fmt.Sprintf("apply %d: %d %v %.200s", i, code, err, resp)
		}
		return ""
	})
}

// BenchmarkListAll measures one full list of 10,000 ConfigMaps: in JSON
// (compact, not pretty) over HTTP/2 (what client-go uses) and over
// HTTP/1.1, and over HTTP/2 in protobuf (what informers of built-in types
// ask for) and as a Table (what kubectl get asks for). Targets: 25 ms for
// JSON, protobuf no slower than JSON, a Table within twice the JSON list.
func BenchmarkListAll(b *testing.B) {
	p := startPlatd(b, b.TempDir())
	benchNamespace(b, p)
	benchCreate(b, p, 0, benchObjects, 16)
	h1 := p.newClient()
	h1Transport := h1.Transport.(*http.Transport)
	h1Transport.ForceAttemptHTTP2 = false
	h1Transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	defer h1.CloseIdleConnections()
	for _, c := range []struct {
		name   string
		client *http.Client
		accept string
		check  func(body []byte) int
	}{
		{"h2", p.client, "application/json", jsonItems},
		{"http1.1", h1, "application/json", jsonItems},
		{"h2/protobuf", p.client, platBrand.ProtobufMediaType, protobufItems},
		{"h2/table", p.client, "application/json;as=Table;v=v1;g=" + platBrand.MetaGroup(), tableRows},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Every namespace also holds the published root CA ConfigMap.
			benchListAs(b, p, c.client, "configmaps", c.accept, func(body []byte) bool {
				n := c.check(body)
				return n == benchObjects || n == benchObjects+1
			})
		})
	}
	p.terminate()
}

// BenchmarkListPods measures one full list of 10,000 realistic 3 KB
// pods in JSON and as a Table (kubectl get pods): a pod's row reads a few
// of its parts, the rest of each pod is only passed over.
func BenchmarkListPods(b *testing.B) {
	p := startPlatd(b, b.TempDir())
	benchNamespace(b, p)
	benchCreateOf(b, p, "pods", benchPod, 0, benchObjects, 16)
	for _, c := range []struct {
		name   string
		accept string
		check  func(body []byte) int
	}{
		{"json", "application/json", jsonItems},
		{"table", "application/json;as=Table;v=v1;g=" + platBrand.MetaGroup(), tableRows},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchListAs(b, p, p.client, "pods", c.accept, func(body []byte) bool { return c.check(body) == benchObjects })
		})
	}
	p.terminate()
}

// benchListAs times full lists of the benchmark namespace's resource
// through client with accept, after a first list whose body ok accepts.
func benchListAs(b *testing.B, p *platdProc, client *http.Client, resource, accept string, ok func(body []byte) bool) {
	b.Helper()
	benchListPathAs(b, p, client, "/api/v1/namespaces/"+benchNS+"/"+resource, accept, ok)
}

// benchListPathAs is benchListAs of the collection at path.
func benchListPathAs(b *testing.B, p *platdProc, client *http.Client, path, accept string, ok func(body []byte) bool) {
	b.Helper()
	resource := path[strings.LastIndexByte(path, '/')+1:]
	list := func() []byte {
		code, body, err := doWith(client, p.url, http.MethodGet, path, nil, "Accept", accept)
		if err != nil || code != http.StatusOK {
			b.Fatalf("list: %d %v %.200s", code, err, body)
		}
		return body
	}
	began := time.Now()
	first := list()
	firstTook := time.Since(began)
	if !ok(first) {
		b.Fatalf("list of %s does not hold the %d objects: %.300s", resource, benchObjects, first)
	}
	var size int
	cpuBefore := cpuSeconds(b, p.pid())
	b.ResetTimer()
	for range b.N {
		size = len(list())
	}
	b.StopTimer()
	b.ReportMetric(millis(b.Elapsed())/float64(b.N), "ms/list")
	// CPU time has a 10 ms tick: meaningful with -benchtime 20x or more.
	b.ReportMetric((cpuSeconds(b, p.pid())-cpuBefore)*1000/float64(b.N), "server-cpu-ms/list")
	b.ReportMetric(millis(firstTook), "ms/first-list")
	b.ReportMetric(float64(size)/1e6, "MB")
}

// jsonItems counts the items of a compact JSON list.
func jsonItems(body []byte) int {
	if strings.Contains(string(body[:min(len(body), 200)]), "\n") {
		return -1 // pretty-printed
	}
	var decoded struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &decoded); err != nil {
		return -1
	}
	return len(decoded.Items)
}

// tableRows counts the rows of a Table.
func tableRows(body []byte) int {
	var decoded struct {
		Kind string            `json:"kind"`
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(body, &decoded); err != nil || decoded.Kind != "Table" {
		return -1
	}
	return len(decoded.Rows)
}

// protobufItems counts the items of a protobuf list envelope.
func protobufItems(body []byte) int {
	_, kind, raw, err := codec.UnwrapProtobuf(body)
	if err != nil || kind != "ConfigMapList" {
		return -1
	}
	n := 0
	for len(raw) > 0 {
		num, _, k := protowire.ConsumeTag(raw)
		_, m := protowire.ConsumeBytes(raw[k:])
		if k < 0 || m < 0 {
			return -1
		}
		if num == 2 {
			n++
		}
		raw = raw[k+m:]
	}
	return n
}

// BenchmarkResidentMemory reads the server's resident memory idle after
// start and after 10,000 creates. Targets: 30 MB idle, 80 MB after.
// Idle is read idleSettle after ready: a second after the default policy
// is written the server hands the start's garbage back to the OS
// (startScavengeDelay); the figure at ready is reported beside it.
func BenchmarkResidentMemory(b *testing.B) {
	platdBinary(b)
	const idleSettle = 3 * time.Second
	var idle, atReady, loaded float64
	for range b.N {
		p := startPlatd(b, b.TempDir())
		atReady += residentMB(b, p.pid())
		time.Sleep(idleSettle)
		idle += residentMB(b, p.pid())
		benchNamespace(b, p)
		benchCreate(b, p, 0, benchObjects, 16)
		loaded += residentMB(b, p.pid())
		p.terminate()
	}
	b.ReportMetric(atReady/float64(b.N), "MB-at-ready")
	b.ReportMetric(idle/float64(b.N), "MB-idle")
	b.ReportMetric(loaded/float64(b.N), "MB-after-10k")
}

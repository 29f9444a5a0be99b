//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"platd/config"
	"platd/etcd/etcdtest"
)

// asBinaryEnv makes the test binary run as platd itself, so that the
// multi-replica test starts real processes it can kill -9 without a
// separate build.
const asBinaryEnv = "PLATD_TEST_AS_BINARY"

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryEnv) == "1" {
		os.Exit(run(os.Args))
	}
	os.Exit(m.Run())
}

// freeAddr picks a free TCP address on host.
func freeAddr(t *testing.T, host string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startEtcdCluster starts an n-member etcd cluster inside the test
// process and returns its client URLs. The members share one process on
// a shared machine: short ticks make the first election quick, no fsync
// keeps the disk out of it.
func startEtcdCluster(t *testing.T, n int) []string {
	t.Helper()
	return etcdtest.StartT(t, etcdtest.Config{Members: n, Fast: true}).Endpoints
}

// advertised is what the replica bound to the loopback address ip
// advertises: the API's Endpoints refuse loopback addresses, as
// upstream's, and the host has one other; TEST-NET-2 addresses are valid
// and nothing dials them.
func advertised(ip string) string {
	return "198.51.100." + ip[strings.LastIndexByte(ip, '.')+1:]
}

// replica is one platd process of the cluster.
type replica struct {
	name, ip, base, kubeconfig, log string
	cmd                             *exec.Cmd
	exited                          chan struct{}
}

// startReplica starts platd on ip:port in the kubernetes brand on the
// etcd cluster; the replicas share certDir (CA, service-account key,
// serving and admin certificates) as upstream's share their key files.
func startReplica(t *testing.T, i int, ip, port, certDir string, etcd []string) *replica {
	t.Helper()
	dir := t.TempDir()
	r := &replica{name: "replica-" + strconv.Itoa(i), ip: ip, base: "https://" + net.JoinHostPort(ip, port),
		kubeconfig: filepath.Join(dir, "data", "admin.kubeconfig"), log: filepath.Join(dir, "platd.log"), exited: make(chan struct{})}
	logf, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(os.Args[0], "serve", "--data-dir", filepath.Join(dir, "data"), "--cert-dir", certDir,
		"--bind-address", ip, "--advertise-address", advertised(ip), "--secure-port", port, "--brand", "kubernetes",
		"--tls-san", "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4", "--hostname-override", r.name,
		"--storage-backend", "etcd3", "--etcd-servers", strings.Join(etcd, ","))
	r.cmd.Env = append(os.Environ(), asBinaryEnv+"=1")
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.cmd.Wait()
		logf.Close()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.exited
		if t.Failed() {
			b, _ := os.ReadFile(r.log)
			t.Logf("%s log:\n%s", r.name, tail(b, 40))
		}
	})
	return r
}

func tail(b []byte, lines int) []byte {
	s := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(s) > lines {
		s = s[len(s)-lines:]
	}
	return bytes.Join(s, []byte("\n"))
}

// kill ends the process with SIGKILL: no shutdown, no lease released.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-r.exited
}

// clusterClient talks to the replicas as the admin.
type clusterClient struct {
	t  *testing.T
	hc *http.Client
}

func newClusterClient(t *testing.T, certDir string) *clusterClient {
	ca, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("ca.crt holds no certificate")
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(certDir, "admin.crt"), filepath.Join(certDir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}, MaxIdleConnsPerHost: 64, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &clusterClient{t: t, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// do sends a request; body is marshalled to JSON unless nil.
func (c *clusterClient) do(method, u string, body any) (int, map[string]any) {
	c.t.Helper()
	code, b, err := c.try(method, u, body)
	if err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("%s %s: %d %s: %v", method, u, code, b, err)
		}
	}
	return code, m
}

func (c *clusterClient) try(method, u string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// must sends a request and fails unless it gets want.
func (c *clusterClient) must(want int, method, u string, body any) map[string]any {
	c.t.Helper()
	code, m := c.do(method, u, body)
	if code != want {
		c.t.Fatalf("%s %s: %d %v, want %d", method, u, code, m, want)
	}
	return m
}

// poll calls f until it reports done or the deadline passes; f's last
// complaint is the failure.
func poll(t *testing.T, within time.Duration, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := f()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, why)
		}
		<-tick.C
	}
}

func jpath(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	return v
}

func jstr(m map[string]any, keys ...string) string {
	s, _ := jpath(m, keys...).(string)
	return s
}

// Three platd processes on one 3-member etcd cluster behave as one API
// server: reads see every acknowledged write at once, watches miss
// nothing, allocators never hand out a value twice, the API's endpoints
// list the live replicas, and the controllers move to a survivor when
// their leader dies.
func TestReplicasOnEtcdCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd cluster and three servers")
	}
	b := config.Brands["kubernetes"]
	etcd := startEtcdCluster(t, 3)
	certDir := filepath.Join(t.TempDir(), "pki")
	port := strconv.Itoa(mustPort(t, freeAddr(t, "127.0.0.1")))
	ips := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	// The first replica creates the shared key material; the others reuse it.
	rs := []*replica{startReplica(t, 0, ips[0], port, certDir, etcd)}
	waitCA(t, rs[0], certDir)
	c := newClusterClient(t, certDir)
	waitReady(t, c, rs[0])
	rs = append(rs, startReplica(t, 1, ips[1], port, certDir, etcd), startReplica(t, 2, ips[2], port, certDir, etcd))
	waitReady(t, c, rs[1])
	waitReady(t, c, rs[2])
	ns := func(r *replica, n, res string) string { return r.base + "/api/v1/namespaces/" + n + "/" + res }

	t.Run("ReadThroughOthersAtOnce", func(t *testing.T) {
		c := &clusterClient{t: t, hc: c.hc}
		for i := range 10 {
			w := rs[i%3]
			name := "rw-" + strconv.Itoa(i)
			created := c.must(201, "POST", ns(w, "default", "configmaps"), map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"i": strconv.Itoa(i)}})
			rv := jstr(created, "metadata", "resourceVersion")
			for _, r := range rs {
				got := c.must(200, "GET", ns(r, "default", "configmaps")+"/"+name, nil)
				if jstr(got, "metadata", "resourceVersion") != rv || jstr(got, "data", "i") != strconv.Itoa(i) || jstr(got, "metadata", "uid") != jstr(created, "metadata", "uid") {
					t.Fatalf("%s read %s after its create through %s: %v, want resourceVersion %s", r.name, name, w.name, got, rv)
				}
			}
			created["data"] = map[string]any{"i": "updated"}
			updated := c.must(200, "PUT", ns(rs[(i+1)%3], "default", "configmaps")+"/"+name, created)
			for _, r := range rs {
				got := c.must(200, "GET", ns(r, "default", "configmaps")+"/"+name, nil)
				if jstr(got, "metadata", "resourceVersion") != jstr(updated, "metadata", "resourceVersion") || jstr(got, "data", "i") != "updated" {
					t.Fatalf("%s read %s after its update: %v", r.name, name, got)
				}
			}
			c.must(200, "DELETE", ns(rs[(i+2)%3], "default", "configmaps")+"/"+name, nil)
			for _, r := range rs {
				if code, got := c.do("GET", ns(r, "default", "configmaps")+"/"+name, nil); code != 404 || jstr(got, "reason") != "NotFound" {
					t.Fatalf("%s read %s after its delete: %d %v", r.name, name, code, got)
				}
			}
		}
		// A list through each replica includes a write just acknowledged by another.
		last := c.must(201, "POST", ns(rs[2], "default", "configmaps"), map[string]any{"metadata": map[string]any{"name": "rw-last"}})
		for _, r := range rs {
			l := c.must(200, "GET", ns(r, "default", "configmaps"), nil)
			if lrv, _ := strconv.ParseInt(jstr(l, "metadata", "resourceVersion"), 10, 64); lrv < mustInt(t, jstr(last, "metadata", "resourceVersion")) {
				t.Fatalf("%s listed at %d, before the acknowledged create at %s", r.name, lrv, jstr(last, "metadata", "resourceVersion"))
			}
			if !slices.ContainsFunc(items(l), func(o map[string]any) bool { return jstr(o, "metadata", "name") == "rw-last" }) {
				t.Fatalf("%s list misses rw-last", r.name)
			}
		}
	})

	t.Run("WatchOnOtherReplicaSeesEveryWrite", func(t *testing.T) {
		c := &clusterClient{t: t, hc: c.hc}
		c.must(201, "POST", rs[0].base+"/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "watched"}})
		start := jstr(c.must(200, "GET", ns(rs[1], "watched", "configmaps"), nil), "metadata", "resourceVersion")
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", ns(rs[1], "watched", "configmaps")+"?watch=1&allowWatchBookmarks=true&resourceVersion="+start, nil)
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("watch: %d", resp.StatusCode)
		}
		type ev struct{ typ, name, rv, data string }
		var want []ev
		record := func(typ string, o map[string]any) {
			want = append(want, ev{typ, jstr(o, "metadata", "name"), jstr(o, "metadata", "resourceVersion"), jstr(o, "data", "v")})
		}
		// 100 creates, 60 updates, 40 deletes through replica A.
		for i := range 100 {
			record("ADDED", c.must(201, "POST", ns(rs[0], "watched", "configmaps"), map[string]any{
				"metadata": map[string]any{"name": fmt.Sprintf("w-%03d", i)}, "data": map[string]any{"v": "0"}}))
			if i%5 == 4 {
				for j := i - 4; j < i-1; j++ {
					u := c.must(200, "GET", ns(rs[0], "watched", "configmaps")+fmt.Sprintf("/w-%03d", j), nil)
					u["data"] = map[string]any{"v": strconv.Itoa(i)}
					record("MODIFIED", c.must(200, "PUT", ns(rs[0], "watched", "configmaps")+fmt.Sprintf("/w-%03d", j), u))
				}
				for j := i - 1; j <= i; j++ {
					// A delete answers with a Status: its revision is
					// checked below by order alone.
					st := c.must(200, "DELETE", ns(rs[0], "watched", "configmaps")+fmt.Sprintf("/w-%03d", j), nil)
					if jstr(st, "status") != "Success" || jstr(st, "details", "name") != fmt.Sprintf("w-%03d", j) {
						t.Fatalf("delete w-%03d: %v", j, st)
					}
					want = append(want, ev{typ: "DELETED", name: jstr(st, "details", "name")})
				}
			}
		}
		if len(want) != 200 {
			t.Fatalf("made %d writes, want 200", len(want))
		}
		dec := json.NewDecoder(bufio.NewReader(resp.Body))
		var got []ev
		for len(got) < len(want) {
			var e struct {
				Type   string         `json:"type"`
				Object map[string]any `json:"object"`
			}
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("after %d of %d events: %v", len(got), len(want), err)
			}
			// The controllers' own writes (the root CA bundle) are not ours.
			if e.Type == "BOOKMARK" || !strings.HasPrefix(jstr(e.Object, "metadata", "name"), "w-") {
				continue
			}
			got = append(got, ev{e.Type, jstr(e.Object, "metadata", "name"), jstr(e.Object, "metadata", "resourceVersion"), jstr(e.Object, "data", "v")})
		}
		var last int64
		for i := range want {
			rv := mustInt(t, got[i].rv)
			if rv <= last {
				t.Fatalf("event %d through %s: resourceVersion %d after %d", i, rs[1].name, rv, last)
			}
			last = rv
			if want[i].typ == "DELETED" {
				got[i].rv, got[i].data = "", ""
			}
			if got[i] != want[i] {
				t.Fatalf("event %d through %s: %+v, want %+v (the write acknowledged by %s)", i, rs[1].name, got[i], want[i], rs[0].name)
			}
		}
	})

	t.Run("ServiceAccountTokenAcrossReplicas", func(t *testing.T) {
		c := &clusterClient{t: t, hc: c.hc}
		// A token one replica signs is accepted by the others: they share
		// the signing key of the shared key directory.
		tr := c.must(201, "POST", ns(rs[0], "default", "serviceaccounts")+"/default/token", map[string]any{
			"apiVersion": b.Group("authentication") + "/v1", "kind": "TokenRequest", "spec": map[string]any{}})
		token := jstr(tr, "status", "token")
		if token == "" {
			t.Fatalf("TokenRequest: %v", tr)
		}
		tcfg := c.hc.Transport.(*http.Transport).TLSClientConfig.Clone()
		tcfg.Certificates = nil
		bearer := &http.Client{Transport: &http.Transport{TLSClientConfig: tcfg, ForceAttemptHTTP2: true}, Timeout: 30 * time.Second}
		defer bearer.CloseIdleConnections()
		for _, r := range rs {
			req, _ := http.NewRequest("POST", r.base+"/apis/"+b.Group("authentication")+"/v1/selfsubjectreviews",
				strings.NewReader(`{"apiVersion":"`+b.Group("authentication")+`/v1","kind":"SelfSubjectReview"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := bearer.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var m map[string]any
			json.Unmarshal(body, &m)
			if resp.StatusCode != 201 || jstr(m, "status", "userInfo", "username") != "system:serviceaccount:default:default" {
				t.Fatalf("SelfSubjectReview through %s with a token from %s: %d %s", r.name, rs[0].name, resp.StatusCode, body)
			}
		}
	})

	t.Run("RequestedValueGrantedOnce", func(t *testing.T) {
		c := &clusterClient{t: t, hc: c.hc}
		// Two replicas asked at once for the same cluster IP and node
		// port: one create wins, the other is refused. It runs before any
		// other service takes a random value that might be one of these.
		c.must(201, "POST", rs[0].base+"/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "asked"}})
		for k := range 5 {
			ip, np := fmt.Sprintf("10.0.0.%d", 200+k), 32000+k
			codes, bodies := make([]int, 2), make([][]byte, 2)
			var wg sync.WaitGroup
			for j := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					codes[j], bodies[j], err = c.try("POST", ns(rs[1+j], "asked", "services"), map[string]any{
						"metadata": map[string]any{"name": fmt.Sprintf("want-%d-%d", k, j)},
						"spec": map[string]any{"type": "NodePort", "clusterIP": ip,
							"ports": []any{map[string]any{"port": 80, "nodePort": np}}}})
					if err != nil {
						codes[j], bodies[j] = 0, []byte(err.Error())
					}
				}()
			}
			wg.Wait()
			won := slices.Index(codes, 201)
			if won < 0 || codes[1-won] != 422 || !bytes.Contains(bodies[1-won], []byte("already allocated")) {
				t.Fatalf("both asking for %s and node port %d: %d %s; %d %s", ip, np, codes[0], bodies[0], codes[1], bodies[1])
			}
		}
	})

	t.Run("NoAllocatedValueTwice", func(t *testing.T) {
		c := &clusterClient{t: t, hc: c.hc}
		c.must(201, "POST", rs[0].base+"/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "svcs"}})
		const n = 32
		type alloc struct {
			name, ip string
			port     float64
			code     int
			status   map[string]any
		}
		out := make([]alloc, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("s-%02d", i)
				code, b, err := c.try("POST", ns(rs[i%3], "svcs", "services"), map[string]any{
					"metadata": map[string]any{"name": name},
					"spec":     map[string]any{"type": "NodePort", "ports": []any{map[string]any{"port": 80}}}})
				var m map[string]any
				if err == nil {
					err = json.Unmarshal(b, &m)
				}
				if err != nil {
					out[i] = alloc{name: name, status: map[string]any{"error": err.Error()}}
					return
				}
				ports, _ := jpath(m, "spec", "ports").([]any)
				var np float64
				if len(ports) == 1 {
					np, _ = ports[0].(map[string]any)["nodePort"].(float64)
				}
				out[i] = alloc{name: name, ip: jstr(m, "spec", "clusterIP"), port: np, code: code, status: m}
			}()
		}
		wg.Wait()
		ipOwner, portOwner := map[string]string{}, map[float64]string{}
		for _, a := range out {
			if a.code != 201 || a.ip == "" || a.port == 0 {
				t.Fatalf("%s: %d %v", a.name, a.code, a.status)
			}
			if o, dup := ipOwner[a.ip]; dup {
				t.Errorf("cluster IP %s handed to %s and %s", a.ip, o, a.name)
			}
			if o, dup := portOwner[a.port]; dup {
				t.Errorf("node port %v handed to %s and %s", a.port, o, a.name)
			}
			ipOwner[a.ip], portOwner[a.port] = a.name, a.name
		}
		// Every replica lists the same 32 services with the same values.
		for _, r := range rs {
			l := items(c.must(200, "GET", ns(r, "svcs", "services"), nil))
			if len(l) != n {
				t.Fatalf("%s lists %d services, want %d", r.name, len(l), n)
			}
			for _, s := range l {
				if ipOwner[jstr(s, "spec", "clusterIP")] != jstr(s, "metadata", "name") {
					t.Fatalf("%s lists %s with %s", r.name, jstr(s, "metadata", "name"), jstr(s, "spec", "clusterIP"))
				}
			}
		}
	})

	endpoints := func(r *replica) (addrs []string, ports []float64, slice []string) {
		_, ep := c.do("GET", ns(r, "default", "endpoints")+"/kubernetes", nil)
		subsets, _ := jpath(ep, "subsets").([]any)
		for _, s := range subsets {
			as, _ := s.(map[string]any)["addresses"].([]any)
			for _, a := range as {
				addrs = append(addrs, jstr(a.(map[string]any), "ip"))
			}
			ps, _ := s.(map[string]any)["ports"].([]any)
			for _, p := range ps {
				pp, _ := p.(map[string]any)["port"].(float64)
				ports = append(ports, pp)
			}
		}
		_, es := c.do("GET", r.base+"/apis/"+b.Group("discovery")+"/v1/namespaces/default/endpointslices/kubernetes", nil)
		eps, _ := jpath(es, "endpoints").([]any)
		for _, e := range eps {
			as, _ := e.(map[string]any)["addresses"].([]any)
			for _, a := range as {
				slice = append(slice, a.(string))
			}
		}
		return addrs, ports, slice
	}
	// listed waits until every replica in through shows exactly want in
	// the API's Endpoints and EndpointSlice.
	listed := func(t *testing.T, within time.Duration, through []*replica, want ...string) {
		t.Helper()
		poll(t, within, func() (bool, string) {
			for _, r := range through {
				addrs, ports, slice := endpoints(r)
				if !slices.Equal(addrs, want) || !slices.Equal(slice, want) || len(ports) != 1 || strconv.Itoa(int(ports[0])) != port {
					return false, fmt.Sprintf("%s: endpoints %v ports %v, slice %v; want %v on port %s", r.name, addrs, ports, slice, want, port)
				}
			}
			return true, ""
		})
	}

	t.Run("EndpointsListEveryReplica", func(t *testing.T) {
		// A replica is listed once its first identity lease is seen.
		listed(t, 20*time.Second, rs, advertised(ips[0]), advertised(ips[1]), advertised(ips[2]))
	})

	t.Run("Kubectl", func(t *testing.T) {
		if _, err := exec.LookPath("kubectl"); err != nil {
			t.Skip("kubectl not on PATH")
		}
		kubectl := func(r *replica, args ...string) string {
			t.Helper()
			out, err := exec.Command("kubectl", append([]string{"--kubeconfig", r.kubeconfig, "--request-timeout", "20s"}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl %v through %s: %v\n%s", args, r.name, err, out)
			}
			return string(out)
		}
		for i, r := range rs {
			if out := kubectl(r, "get", "ns"); !strings.Contains(out, "default ") || !strings.Contains(out, "svcs ") || !strings.Contains(out, b.SystemNamespace+" ") {
				t.Fatalf("kubectl get ns through %s:\n%s", r.name, out)
			}
			name := "kubectl-" + strconv.Itoa(i)
			if out := kubectl(r, "create", "configmap", name, "--from-literal=who="+r.name); out != "configmap/"+name+" created\n" {
				t.Fatalf("kubectl create configmap through %s: %q", r.name, out)
			}
			other := rs[(i+1)%3]
			out := kubectl(other, "get", "cm", name, "-o", "yaml")
			for _, want := range []string{"  who: " + r.name + "\n", "  name: " + name + "\n", "kind: ConfigMap\n", "  namespace: default\n"} {
				if !strings.Contains(out, want) {
					t.Fatalf("kubectl get cm %s -o yaml through %s lacks %q:\n%s", name, other.name, want, out)
				}
			}
		}
	})

	t.Run("KillFollowerThenLeader", func(t *testing.T) {
		c := &clusterClient{t: t, hc: c.hc}
		leaseURL := func(r *replica) string {
			return r.base + "/apis/" + b.Group("coordination") + "/v1/namespaces/" + b.SystemNamespace + "/leases/" + b.ControllerManager
		}
		holder := func(r *replica) string {
			_, l := c.do("GET", leaseURL(r), nil)
			return jstr(l, "spec", "holderIdentity")
		}
		var leader *replica
		poll(t, 20*time.Second, func() (bool, string) {
			h := holder(rs[0])
			for _, r := range rs {
				if strings.HasPrefix(h, r.name+"_") {
					leader = r
					return true, ""
				}
			}
			return false, "controller lease held by " + strconv.Quote(h)
		})
		var followers []*replica
		for _, r := range rs {
			if r != leader {
				followers = append(followers, r)
			}
		}
		dead, survivor := followers[0], followers[1]
		dead.kill(t)
		// The follower's identity lease was renewed at most a renew
		// interval (10 s) before; the leader drops it a TTL (15 s) after.
		var left []string
		for _, ip := range ips {
			if ip != dead.ip {
				left = append(left, advertised(ip))
			}
		}
		listed(t, 30*time.Second, []*replica{leader, survivor}, left...)
		if h := holder(survivor); !strings.HasPrefix(h, leader.name+"_") {
			t.Fatalf("controller lease moved to %q while its holder %s lives", h, leader.name)
		}

		// A namespace whose deletion needs the controllers.
		c.must(201, "POST", survivor.base+"/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "doomed"}})
		c.must(201, "POST", ns(survivor, "doomed", "configmaps"), map[string]any{"metadata": map[string]any{"name": "c"}})

		leader.kill(t)
		// The lease runs out 15 s after its last renewal; the survivor
		// retries every 2 s.
		poll(t, 30*time.Second, func() (bool, string) {
			h := holder(survivor)
			return strings.HasPrefix(h, survivor.name+"_"), "controller lease held by " + strconv.Quote(h)
		})
		// The controllers run again: a deleted namespace is emptied and
		// removed, a new one gets its default service account.
		c.must(200, "DELETE", survivor.base+"/api/v1/namespaces/doomed", nil)
		c.must(201, "POST", survivor.base+"/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "after-failover"}})
		poll(t, 20*time.Second, func() (bool, string) {
			code, sa := c.do("GET", ns(survivor, "after-failover", "serviceaccounts")+"/default", nil)
			return code == 200 && jstr(sa, "metadata", "name") == "default", fmt.Sprintf("default service account: %d %v", code, sa)
		})
		poll(t, 20*time.Second, func() (bool, string) {
			code, n := c.do("GET", survivor.base+"/api/v1/namespaces/doomed", nil)
			return code == 404, fmt.Sprintf("namespace doomed: %d %v", code, jpath(n, "status"))
		})
		if code, _ := c.do("GET", ns(survivor, "doomed", "configmaps")+"/c", nil); code != 404 {
			t.Fatalf("configmap of the deleted namespace: %d", code)
		}
		// The new leader drops the old one from the endpoints.
		listed(t, 30*time.Second, []*replica{survivor}, advertised(survivor.ip))

		// A replica joining after the failover is listed; stopped with
		// SIGTERM it deletes its identity lease on the way out, so the
		// leader drops it without waiting for the lease to go stale.
		joined := startReplica(t, 3, "127.0.0.4", port, certDir, etcd)
		waitReady(t, c, joined)
		listed(t, 20*time.Second, []*replica{survivor, joined}, advertised(survivor.ip), advertised(joined.ip))
		identity := survivor.base + "/apis/" + b.Group("coordination") + "/v1/namespaces/" + b.SystemNamespace + "/leases?labelSelector=" +
			url.QueryEscape(b.Label("hostname")+"="+joined.name)
		if l := items(c.must(200, "GET", identity, nil)); len(l) != 1 || jstr(l[0], "metadata", "annotations", b.Label("peer-advertise-address")) != net.JoinHostPort(advertised(joined.ip), port) {
			t.Fatalf("identity lease of %s: %v", joined.name, l)
		}
		if err := joined.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-joined.exited
		if code := joined.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("%s exited %d on SIGTERM", joined.name, code)
		}
		if l := items(c.must(200, "GET", identity, nil)); len(l) != 0 {
			t.Fatalf("identity lease of %s kept after a clean stop: %v", joined.name, l)
		}
		listed(t, 30*time.Second, []*replica{survivor}, advertised(survivor.ip))
	})
}

func mustPort(t *testing.T, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return int(mustInt(t, p))
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func items(list map[string]any) []map[string]any {
	is, _ := list["items"].([]any)
	out := make([]map[string]any, 0, len(is))
	for _, i := range is {
		m, _ := i.(map[string]any)
		out = append(out, m)
	}
	return out
}

// waitCA waits until the first replica has written the shared CA and
// admin certificate.
func waitCA(t *testing.T, r *replica, certDir string) {
	t.Helper()
	poll(t, 30*time.Second, func() (bool, string) {
		select {
		case <-r.exited:
			t.Fatalf("%s exited before serving", r.name)
		default:
		}
		for _, f := range []string{"ca.crt", "admin.crt", "admin.key"} {
			if _, err := os.Stat(filepath.Join(certDir, f)); err != nil {
				return false, err.Error()
			}
		}
		_, err := os.Stat(r.kubeconfig)
		return err == nil, fmt.Sprint(err)
	})
}

// waitReady waits for /readyz of r.
func waitReady(t *testing.T, c *clusterClient, r *replica) {
	t.Helper()
	poll(t, 30*time.Second, func() (bool, string) {
		select {
		case <-r.exited:
			t.Fatalf("%s exited before ready", r.name)
		default:
		}
		code, b, err := c.try("GET", r.base+"/readyz", nil)
		return err == nil && code == 200, fmt.Sprintf("%s readyz: %d %s %v", r.name, code, b, err)
	})
}

// Replicas started at once on one empty key directory create one CA,
// serving pair and signing key between them, not one each over another's.
func TestReplicasStartTogetherOnOneKeyDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and three servers")
	}
	etcd := startEtcdCluster(t, 1)
	certDir := filepath.Join(t.TempDir(), "pki")
	port := strconv.Itoa(mustPort(t, freeAddr(t, "127.0.0.1")))
	var rs []*replica
	for i, ip := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		rs = append(rs, startReplica(t, i, ip, port, certDir, etcd))
	}
	for _, r := range rs {
		waitCA(t, r, certDir)
	}
	c := newClusterClient(t, certDir)
	for _, r := range rs {
		// The shared CA verifies every replica, and every replica trusts
		// the shared admin certificate.
		waitReady(t, c, r)
	}
	var tr map[string]any
	poll(t, 20*time.Second, func() (bool, string) {
		// The default service account is created by the leader after start.
		var code int
		code, tr = c.do("POST", rs[0].base+"/api/v1/namespaces/default/serviceaccounts/default/token", map[string]any{"spec": map[string]any{}})
		return code == 201, fmt.Sprintf("TokenRequest: %d %v", code, tr)
	})
	for _, r := range rs {
		req, _ := http.NewRequest("GET", r.base+"/api", nil)
		req.Header.Set("Authorization", "Bearer "+jstr(tr, "status", "token"))
		tcfg := c.hc.Transport.(*http.Transport).TLSClientConfig.Clone()
		tcfg.Certificates = nil
		resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: tcfg, ForceAttemptHTTP2: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: a token signed by %s: %d", r.name, rs[0].name, resp.StatusCode)
		}
	}
}

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"platd/config"
	"platd/server"
)

// replicaTimings are lease timings short enough for a test: a hand-over
// after a clean stop is immediate (the lease is released), after a lost
// lease at most a second (a lease lasts whole seconds).
var replicaTimings = config.Replicas{LeaseDuration: time.Second, RenewDeadline: 700 * time.Millisecond, RetryPeriod: 20 * time.Millisecond,
	IdentityRenewInterval: 50 * time.Millisecond, EndpointTTL: 2 * time.Second}

// replicaAddr is the address replica i advertises: documentation
// addresses, as an Endpoints address may not be a loopback one.
func replicaAddr(i int) string { return fmt.Sprintf("192.0.2.%d", i+1) }

// replicaStarter serves n replicas sharing one store, each with its own
// host name and advertised address, all controllers on unless mods say.
type replicaStarter func(t *testing.T, n int, mods ...option) []*env

// replicaStores are the ways replicas share a store: one bbolt store
// handed to every server (in one process only), and one etcd each server
// opens itself, as real replicas do.
var replicaStores = []struct {
	name  string
	start replicaStarter
}{{"shared-bbolt", startSharedReplicas}, {"etcd", startEtcdReplicas}}

// forEachStore runs test once per way of sharing a store, in parallel.
func forEachStore(t *testing.T, test func(t *testing.T, start replicaStarter)) {
	t.Parallel()
	for _, rs := range replicaStores {
		t.Run(rs.name, func(t *testing.T) {
			t.Parallel()
			test(t, rs.start)
		})
	}
}

// replicaOptions are replica i's options before mods.
func replicaOptions(i int, mods []option) []option {
	return append([]option{withControllers("*"), func(o *config.Options) {
		o.Replicas = replicaTimings
		o.Replicas.Hostname = fmt.Sprintf("replica-%d", i)
		o.AdvertiseAddress = replicaAddr(i)
	}}, mods...)
}

func startSharedReplicas(t *testing.T, n int, mods ...option) []*env {
	t.Helper()
	db := openTestStore(t)
	var out []*env
	for i := range n {
		out = append(out, startOnStore(t, db, replicaOptions(i, mods)...))
	}
	return out
}

func startEtcdReplicas(t *testing.T, n int, mods ...option) []*env {
	t.Helper()
	endpoint, prefix := embeddedEtcd(t)
	var out []*env
	for i := range n {
		m := append(replicaOptions(i, mods), func(o *config.Options) {
			o.StorageBackend = config.StorageBackendETCD3
			o.Etcd.Servers, o.Etcd.Prefix = []string{endpoint}, prefix
		})
		out = append(out, start(t, m...))
	}
	return out
}

// leaderOf waits until the controller manager's lease names a running
// replica, and returns its index.
func leaderOf(t *testing.T, rs []*env, running func(int) bool) int {
	t.Helper()
	b := rs[0].opts.Brand
	p := groupPath(b.Group("coordination"), "v1", b.SystemNamespace, "leases") + "/" + b.ControllerManager
	who := -1
	eventually(t, "a leader among the running replicas", func() bool {
		for i, e := range rs {
			if !running(i) {
				continue
			}
			r := e.do("GET", p, nil)
			if r.code != 200 {
				return false
			}
			holder, _ := path(r.obj(t), "spec.holderIdentity").(string)
			host, _, _ := strings.Cut(holder, "_")
			for j := range rs {
				if running(j) && host == fmt.Sprintf("replica-%d", j) {
					who = j
					return true
				}
			}
			return false
		}
		return false
	})
	return who
}

// apiEndpoints returns the addresses of the API's Endpoints and
// EndpointSlice as served by e.
func apiEndpoints(t *testing.T, e *env) (eps, slice []string) {
	b := e.opts.Brand
	ep := e.do("GET", "/api/v1/namespaces/default/endpoints/"+b.APIServiceName, nil)
	sl := e.do("GET", groupPath(b.Group("discovery"), "v1", "default", "endpointslices")+"/"+b.APIServiceName, nil)
	if ep.code != 200 || sl.code != 200 {
		return nil, nil
	}
	for _, s := range anyList(path(ep.obj(t), "subsets")) {
		for _, a := range anyList(path(s.(map[string]any), "addresses")) {
			eps = append(eps, a.(map[string]any)["ip"].(string))
		}
	}
	for _, x := range anyList(path(sl.obj(t), "endpoints")) {
		slice = append(slice, anyList(x.(map[string]any)["addresses"])[0].(string))
	}
	return eps, slice
}

func anyList(v any) []any { l, _ := v.([]any); return l }

// Three replicas: one leads; the API's endpoints list all three; when the
// leader stops, another takes over, the controllers resume there (a
// namespace's deletion finishes, a new namespace gets its default service
// account) and the endpoints drop the stopped replica.
func TestReplicasElectOneLeaderAndHandOver(t *testing.T) {
	forEachStore(t, testReplicasElectOneLeaderAndHandOver)
}

func testReplicasElectOneLeaderAndHandOver(t *testing.T, startReplicas replicaStarter) {
	rs := startReplicas(t, 3)
	stopped := map[int]bool{}
	running := func(i int) bool { return !stopped[i] }
	first := leaderOf(t, rs, running)
	other := (first + 1) % 3

	all := []string{replicaAddr(0), replicaAddr(1), replicaAddr(2)}
	eventually(t, "endpoints of all replicas", func() bool {
		eps, slice := apiEndpoints(t, rs[other])
		return reflect.DeepEqual(eps, all) && reflect.DeepEqual(slice, all)
	})
	// Each replica renews an identity lease labeled as upstream's.
	b := rs[0].opts.Brand
	leases := rs[other].do("GET", groupPath(b.Group("coordination"), "v1", b.SystemNamespace, "leases")+
		"?labelSelector=apiserver."+b.LongDomain+"/identity%3D"+b.FieldManager, nil).mustCode(t, 200).obj(t)
	var hosts []string
	for _, l := range anyList(leases["items"]) {
		m := l.(map[string]any)
		if name, _ := path(m, "metadata.name").(string); !strings.HasPrefix(name, "apiserver-") {
			t.Errorf("identity lease name %q", name)
		}
		hosts = append(hosts, path(m, "metadata.labels").(map[string]any)[b.Label("hostname")].(string))
	}
	slices.Sort(hosts)
	if !reflect.DeepEqual(hosts, []string{"replica-0", "replica-1", "replica-2"}) {
		t.Fatalf("identity leases of hosts %v", hosts)
	}

	// The leader's namespace controller finishes a deletion made through
	// another replica; its service-account controller fills a namespace.
	rs[other].do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "before"}}).mustCode(t, 201)
	eventually(t, "the default service account in before", func() bool {
		return rs[other].do("GET", "/api/v1/namespaces/before/serviceaccounts/default", nil).code == 200
	})
	rs[other].do("DELETE", "/api/v1/namespaces/before", nil).mustCode(t, 200)
	eventually(t, "namespace before gone", func() bool {
		return rs[other].do("GET", "/api/v1/namespaces/before", nil).code == 404
	})

	rs[first].stop()
	stopped[first] = true
	second := leaderOf(t, rs, running)
	if second == first {
		t.Fatal("the stopped replica still holds the lease")
	}
	lease := rs[second].do("GET", groupPath(b.Group("coordination"), "v1", b.SystemNamespace, "leases")+"/"+b.ControllerManager, nil).mustCode(t, 200).obj(t)
	if path(lease, "spec.leaseTransitions") != 1.0 || path(lease, "spec.leaseDurationSeconds") != 1.0 {
		t.Errorf("lease after the hand-over: %v", lease["spec"])
	}
	var left []string
	for i := range rs {
		if running(i) {
			left = append(left, replicaAddr(i))
		}
	}
	eventually(t, "endpoints without the stopped replica", func() bool {
		eps, slice := apiEndpoints(t, rs[second])
		return reflect.DeepEqual(eps, left) && reflect.DeepEqual(slice, left)
	})
	for _, i := range []int{second, 3 - first - second} {
		e := rs[i]
		ns := fmt.Sprintf("after-%d", i)
		e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCode(t, 201)
		eventually(t, "the default service account in "+ns, func() bool {
			return e.do("GET", "/api/v1/namespaces/"+ns+"/serviceaccounts/default", nil).code == 200
		})
		e.do("DELETE", "/api/v1/namespaces/"+ns, nil).mustCode(t, 200)
		eventually(t, "namespace "+ns+" gone", func() bool {
			return e.do("GET", "/api/v1/namespaces/"+ns, nil).code == 404
		})
	}
}

// A write through one replica is read through the others at once, and a
// watch on one sees every write made through another, in order, once.
func TestReplicasReadAndWatchEachOthersWrites(t *testing.T) {
	forEachStore(t, testReplicasReadAndWatchEachOthersWrites)
}

func testReplicasReadAndWatchEachOthersWrites(t *testing.T, startReplicas replicaStarter) {
	rs := startReplicas(t, 3, withControllers(quietControllers...))
	base := "/api/v1/namespaces/default/configmaps"
	list := rs[1].do("GET", base, nil).mustCode(t, 200).obj(t)
	w := rs[1].watch(base + "?watch=1&resourceVersion=" + path(list, "metadata.resourceVersion").(string))

	const n = 40
	var written []string
	for i := range n {
		name := fmt.Sprintf("cm-%d", i%10)
		var r *resp
		if i < 10 {
			r = rs[0].do("POST", base, cm(name, map[string]string{"i": fmt.Sprint(i)}, nil)).mustCode(t, 201)
		} else {
			r = rs[0].do("PATCH", base+"/"+name, fmt.Sprintf(`{"data":{"i":"%d"}}`, i), "Content-Type", "application/merge-patch+json").mustCode(t, 200)
		}
		rv := rvOf(r.obj(t))
		written = append(written, rv)
		for _, other := range rs[1:] {
			got := other.do("GET", base+"/"+name, nil).mustCode(t, 200)
			if !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(r.body)) {
				t.Fatalf("write %d read through another replica:\n%s\nwritten:\n%s", i, got.body, r.body)
			}
		}
	}
	for i, rv := range written {
		typ := "MODIFIED"
		if i < 10 {
			typ = "ADDED"
		}
		ev := w.expect(typ, fmt.Sprintf("cm-%d", i%10))
		if rvOf(ev.Object) != rv || path(ev.Object, "data.i") != fmt.Sprint(i) {
			t.Fatalf("event %d: rv %s data %v, want rv %s", i, rvOf(ev.Object), ev.Object["data"], rv)
		}
	}
	// Nothing after the last write: no duplicate.
	probe := rs[0].do("POST", base, cm("probe", nil, nil)).mustCode(t, 201).obj(t)
	if ev := w.expect("ADDED", "probe"); rvOf(ev.Object) != rvOf(probe) {
		t.Fatalf("after the writes: %v", ev.Object)
	}
}

// Cluster IPs and node ports are reserved in the shared store: parallel
// creates through three replicas never get the same one.
func TestReplicasAllocateEachIPAndPortOnce(t *testing.T) {
	forEachStore(t, testReplicasAllocateEachIPAndPortOnce)
}

func testReplicasAllocateEachIPAndPortOnce(t *testing.T, startReplicas replicaStarter) {
	rs := startReplicas(t, 3, withControllers(quietControllers...), func(o *config.Options) {
		// A small range makes collisions likely if reservations were
		// per replica.
		o.ServiceClusterIPRange = "10.96.0.0/26"
	})
	const n = 32
	type result struct {
		code int
		body []byte
		err  error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := rs[i%len(rs)]
			body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("svc-%d", i)},
				"spec": map[string]any{"type": "NodePort", "ports": []any{map[string]any{"port": 80}}}})
			rq, _ := http.NewRequest("POST", e.srv.URL()+"/api/v1/namespaces/default/services", bytes.NewReader(body))
			rq.Header.Set("Authorization", "Bearer "+adminToken)
			rq.Header.Set("Content-Type", "application/json")
			res, err := e.client.Do(rq)
			if err != nil {
				results[i].err = err
				return
			}
			defer res.Body.Close()
			results[i].body, results[i].err = io.ReadAll(res.Body)
			results[i].code = res.StatusCode
		}()
	}
	wg.Wait()
	ips, ports := map[string]int{}, map[float64]int{}
	for i, r := range results {
		if r.err != nil || r.code != 201 {
			t.Fatalf("create %d: %v %d %s", i, r.err, r.code, r.body)
		}
		var svc map[string]any
		if err := json.Unmarshal(r.body, &svc); err != nil {
			t.Fatal(err)
		}
		ip, _ := path(svc, "spec.clusterIP").(string)
		port, _ := anyList(path(svc, "spec.ports"))[0].(map[string]any)["nodePort"].(float64)
		if prev, dup := ips[ip]; dup || ip == "" {
			t.Errorf("service %d got cluster IP %q, as service %d", i, ip, prev)
		}
		if prev, dup := ports[port]; dup || port == 0 {
			t.Errorf("service %d got node port %v, as service %d", i, port, prev)
		}
		ips[ip], ports[port] = i, i
	}
	// Every replica lists the same services with the same addresses.
	for _, e := range rs {
		got := map[string]bool{}
		for _, s := range anyList(e.do("GET", "/api/v1/namespaces/default/services", nil).mustCode(t, 200).obj(t)["items"]) {
			got[path(s.(map[string]any), "spec.clusterIP").(string)] = true
		}
		for ip := range ips {
			if !got[ip] {
				t.Errorf("%s does not list cluster IP %s", e.srv.URL(), ip)
			}
		}
	}
}

// A CRD written through one replica is served by the others once they
// have seen it. Its deletion through a follower is the leader's work: the
// custom resources go, and a cleanup still waiting for a finalizer when
// the leader stops is finished by the next leader.
func TestReplicasServeAndCleanUpCustomResources(t *testing.T) {
	forEachStore(t, testReplicasServeAndCleanUpCustomResources)
}

func testReplicasServeAndCleanUpCustomResources(t *testing.T, startReplicas replicaStarter) {
	rs := startReplicas(t, 3, withControllers(quietControllers...))
	stopped := map[int]bool{}
	running := func(i int) bool { return !stopped[i] }
	leader := leaderOf(t, rs, running)
	a, b := rs[(leader+1)%3], rs[(leader+2)%3]
	crds := groupPath(a.opts.Brand.Group("apiextensions"), "v1", "", "customresourcedefinitions")
	widgets := groupPath("example.com", "v1", "default", "widgets")

	a.do("POST", crds, widgetCRD()).mustCode(t, 201)
	for _, e := range rs {
		eventually(t, "widgets served", func() bool { return e.do("GET", widgets, nil).code == 200 })
	}
	w := b.do("POST", widgets, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "finalizers": []any{"example.com/hold"}}, "spec": map[string]any{}}).mustCode(t, 201).obj(t)
	if path(w, "spec.size") != 1.0 {
		t.Fatalf("defaulted through another replica: %v", w)
	}
	b.do("DELETE", crds+"/widgets.example.com", nil).mustCode(t, 200)
	eventually(t, "the leader deleting the widget", func() bool {
		r := a.do("GET", widgets+"/w", nil)
		return r.code == 200 && path(r.obj(t), "metadata.deletionTimestamp") != nil
	})

	rs[leader].stop()
	stopped[leader] = true
	if l := leaderOf(t, rs, running); l == leader {
		t.Fatal("the stopped replica still leads")
	}
	a.do("PATCH", widgets+"/w", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	for _, e := range []*env{a, b} {
		eventually(t, "the CRD gone", func() bool { return e.do("GET", crds+"/widgets.example.com", nil).code == 404 })
		eventually(t, "widgets no longer served", func() bool { return e.do("GET", widgets, nil).code == 404 })
	}
}

// A server that owns its bbolt file elects nothing: no lease is written
// and its controllers run from the start.
func TestOwnStoreElectsNothing(t *testing.T) {
	t.Parallel()
	e := start(t, withControllers("*"))
	b := e.opts.Brand
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "solo"}}).mustCode(t, 201)
	eventually(t, "the default service account in solo", func() bool {
		return e.do("GET", "/api/v1/namespaces/solo/serviceaccounts/default", nil).code == 200
	})
	leases := e.do("GET", groupPath(b.Group("coordination"), "v1", b.SystemNamespace, "leases"), nil).mustCode(t, 200).obj(t)
	if items := anyList(leases["items"]); len(items) != 0 {
		t.Fatalf("leases of a single server: %v", items)
	}
	eps, _ := apiEndpoints(t, e)
	if len(eps) > 1 {
		t.Fatalf("endpoints of a single server: %v", eps)
	}
}

// Timings that would let two replicas lead at once stop the server.
func TestReplicasRefuseUnsafeTimings(t *testing.T) {
	t.Parallel()
	o := testOptions(t, t.TempDir(), replicaOptions(0, []option{func(o *config.Options) {
		o.Replicas.RenewDeadline = o.Replicas.LeaseDuration
	}})...)
	_, err := server.NewOnStore(context.Background(), o, quietLog(), openTestStore(t))
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "the renew deadline 1s must be below the lease duration 1s") {
		t.Fatalf("got %v", err)
	}
}

//go:build linux

package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platd/bolt"
	"platd/server/rest"
)

// Load shape of the service crash test: a few writers creating and
// deleting services long enough for a few dozen durable transactions.
const (
	svcCrashWriters  = 4
	svcCrashLoadFor  = time.Second
	svcCrashMinAcks  = 40
	svcCrashMaxLoad  = 20 * time.Second
	svcCrashInterval = 10 * time.Millisecond
)

// TestServiceClaimsSurviveCrash kills platd with SIGKILL while services
// are created and deleted, restarts it, and checks in the database that
// the recorded claims are exactly the values the stored services hold:
// none leaked by a service that is gone, none missing for one that stayed,
// and no value held twice.
func TestServiceClaimsSurviveCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Ranges large enough for every service a fast machine creates in
	// the load's time.
	ranges := []string{"--service-cluster-ip-range", "10.96.0.0/16", "--service-node-port-range", "20000-32767"}
	p := startPlatd(t, dir, ranges...)
	stop := make(chan struct{})
	var acks atomic.Int64
	var wg sync.WaitGroup
	for w := range svcCrashWriters {
		c := p.newClient()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.CloseIdleConnections()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				body, _ := json.Marshal(svc(name, map[string]any{"type": "NodePort", "ports": ports(tcpPort(80))}))
				code, _, err := doWith(c, p.url, http.MethodPost, servicesPath, body)
				if err != nil {
					return // cut by the kill
				}
				if code != http.StatusCreated {
					t.Errorf("create %s: %d", name, code)
					return
				}
				acks.Add(1)
				// Every fourth service stays: the ranges never fill up,
				// however fast the machine.
				if i%4 != 0 {
					if _, _, err := doWith(c, p.url, http.MethodDelete, servicesPath+"/"+name, nil); err != nil {
						return
					}
				}
			}
		}()
	}
	var stopOnce sync.Once
	stopLoad := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	t.Cleanup(stopLoad)
	start := time.Now()
	for time.Since(start) < svcCrashLoadFor || acks.Load() < svcCrashMinAcks {
		if time.Since(start) > svcCrashMaxLoad {
			t.Fatalf("only %d services created in %v", acks.Load(), svcCrashMaxLoad)
		}
		time.Sleep(svcCrashInterval)
	}
	p.kill()
	stopLoad()

	// The restarted server serves and allocates on.
	p2 := startPlatd(t, dir, ranges...)
	body, _ := json.Marshal(svc("after", map[string]any{"type": "NodePort", "ports": ports(tcpPort(80))}))
	if code, b, err := p2.do(http.MethodPost, servicesPath, body); err != nil || code != http.StatusCreated {
		t.Fatalf("create after restart: %d %v %s", code, err, b)
	}
	p2.terminate()

	db, err := bolt.Open(filepath.Join(dir, "platd.db"), bolt.Options{Stamp: rest.Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svcs, err := db.List("/services/", bolt.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	hold := func(claim, owner string) {
		if prev, dup := want[claim]; dup {
			t.Errorf("%s held by %s and %s", claim, prev, owner)
		}
		want[claim] = owner
	}
	for _, kv := range svcs.Items {
		var s struct {
			Spec struct {
				ClusterIPs []string `json:"clusterIPs"`
				Ports      []struct {
					NodePort int `json:"nodePort"`
				} `json:"ports"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(kv.Value, &s); err != nil {
			t.Fatal(err)
		}
		for _, ip := range s.Spec.ClusterIPs {
			hold("/claims/serviceips/"+ip, kv.Key)
		}
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				hold("/claims/servicenodeports/"+strconv.Itoa(p.NodePort), kv.Key)
			}
		}
	}
	claims, err := db.List("/claims/", bolt.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range claims.Items {
		got = append(got, kv.Key)
		var rec struct {
			Owner string `json:"owner"`
		}
		if err := json.Unmarshal(kv.Value, &rec); err != nil || rec.Owner != want[kv.Key] {
			t.Errorf("%s records owner %q, held by %q", kv.Key, rec.Owner, want[kv.Key])
		}
	}
	var wantKeys []string
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	sort.Strings(wantKeys)
	if fmt.Sprint(got) != fmt.Sprint(wantKeys) {
		t.Errorf("claims after the crash:\n got  %v\n want %v", got, wantKeys)
	}
	t.Logf("%d services created before the kill; %d stored, %d claims", acks.Load(), len(svcs.Items), len(got))
}

//go:build linux

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/etcd/etcdtest"
)

// etcdWatchTimeout bounds the events of the etcd process test's watch.
const etcdWatchTimeout = 20 * time.Second

// The binary with --storage-backend=etcd3 on an embedded etcd: the health
// checks name etcd, the data directory holds key material but no bbolt
// file, a client's create, read, list, watch, update, patch and delete
// work and are stored under the prefix as plain JSON, the object counts
// are polled into the metrics, and a restart serves the same state.
func TestEtcdBackendProcess(t *testing.T) {
	t.Parallel()
	endpoint, prefix := embeddedEtcd(t)
	dir := t.TempDir()
	flags := append(etcdFlags(endpoint, prefix), "--etcd-count-metric-poll-period", "20ms")
	p := startPlatd(t, dir, flags...)

	get := func(path string) []byte {
		t.Helper()
		code, body, err := p.do(http.MethodGet, path, nil)
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET %s: %d %v %s", path, code, err, body)
		}
		return body
	}
	ready := string(get("/readyz?verbose"))
	for _, want := range []string{"[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n", "readyz check passed"} {
		if !strings.Contains(ready, want) {
			t.Errorf("readyz lacks %q:\n%s", want, ready)
		}
	}
	live := string(get("/livez?verbose"))
	if !strings.Contains(live, "[+]etcd ok\n") || strings.Contains(live, "etcd-readiness") || strings.Contains(live, "[+]storage ok") {
		t.Errorf("livez:\n%s", live)
	}
	if _, err := os.Stat(filepath.Join(dir, "platd.db")); !os.IsNotExist(err) {
		t.Errorf("a bbolt file in the data directory of an etcd platd: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pki", "ca.crt")); err != nil {
		t.Errorf("no key material in the data directory: %v", err)
	}

	const base = "/api/v1/namespaces/default/configmaps"
	list := struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}{}
	if err := json.Unmarshal(get(base), &list); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), etcdWatchTimeout)
	defer cancel()
	wr, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+base+"?watch=1&fieldSelector=metadata.name%3Dcm1&resourceVersion="+list.Metadata.ResourceVersion, nil)
	wres, err := p.client.Do(wr)
	if err != nil || wres.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", wres, err)
	}
	defer wres.Body.Close()

	write := func(method, path string, body string, want int, header ...string) crashObject {
		t.Helper()
		code, b, err := p.do(method, path, []byte(body), header...)
		if err != nil || code != want {
			t.Fatalf("%s %s: %d %v %s", method, path, code, err, b)
		}
		var o crashObject
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	created := write(http.MethodPost, base, `{"metadata":{"name":"cm1","labels":{"app":"e"}},"data":{"v":"1"}}`, http.StatusCreated)
	var got crashObject
	if err := json.Unmarshal(get(base+"/cm1"), &got); err != nil || got.Metadata.ResourceVersion != created.Metadata.ResourceVersion || got.Data["v"] != "1" {
		t.Errorf("read back %+v %v, created %+v", got, err, created)
	}
	updated := write(http.MethodPut, base+"/cm1", `{"metadata":{"name":"cm1","resourceVersion":"`+created.Metadata.ResourceVersion+`"},"data":{"v":"2"}}`, http.StatusOK)
	write(http.MethodPut, base+"/cm1", `{"metadata":{"name":"cm1","resourceVersion":"`+created.Metadata.ResourceVersion+`"},"data":{"v":"3"}}`, http.StatusConflict)
	patched := write(http.MethodPatch, base+"/cm1", `{"data":{"v":"3"}}`, http.StatusOK, "Content-Type", "application/merge-patch+json")
	if !(created.rv(t) < updated.rv(t) && updated.rv(t) < patched.rv(t)) || patched.Data["v"] != "3" {
		t.Errorf("revisions %s %s %s, patched %v", created.Metadata.ResourceVersion, updated.Metadata.ResourceVersion, patched.Metadata.ResourceVersion, patched.Data)
	}

	// The value in etcd is the stored JSON, under the prefix.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: etcdtest.ReadyTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	kv, err := cli.Get(ctx, prefix+"/configmaps/default/cm1")
	if err != nil || len(kv.Kvs) != 1 {
		t.Fatalf("etcd get: %v %v", kv, err)
	}
	if v := kv.Kvs[0].Value; !bytes.HasPrefix(v, []byte(`{"metadata":{"name":"cm1"`)) || !bytes.Contains(v, []byte(`"data":{"v":"3"}`)) || uint64(kv.Kvs[0].ModRevision) != patched.rv(t) {
		t.Errorf("etcd holds %s at %d, patched at %s", v, kv.Kvs[0].ModRevision, patched.Metadata.ResourceVersion)
	}

	// The counts are polled: every namespace's configmaps, the
	// controllers' too (which may still be adding theirs).
	configmaps := regexp.MustCompile(`(?m)^apiserver_storage_objects\{resource="configmaps"\} (\d+)$`)
	deadline := time.Now().Add(etcdWatchTimeout)
	for {
		var all struct {
			Items []crashObject `json:"items"`
		}
		if err := json.Unmarshal(get("/api/v1/configmaps"), &all); err != nil {
			t.Fatal(err)
		}
		m := configmaps.FindSubmatch(get("/metrics"))
		if m != nil && string(m[1]) == strconv.Itoa(len(all.Items)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("apiserver_storage_objects of configmaps %q, %d listed, for %v", m, len(all.Items), etcdWatchTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}

	if code, b, err := p.do(http.MethodDelete, base+"/cm1", nil); err != nil || code != http.StatusOK || !bytes.Contains(b, []byte(`"status":"Success"`)) {
		t.Fatalf("delete: %d %v %s", code, err, b)
	}
	sc := bufio.NewScanner(wres.Body)
	for _, want := range []struct {
		typ string
		rv  string
		v   string
	}{{"ADDED", created.Metadata.ResourceVersion, "1"}, {"MODIFIED", updated.Metadata.ResourceVersion, "2"}, {"MODIFIED", patched.Metadata.ResourceVersion, "3"}, {"DELETED", "", "3"}} {
		if !sc.Scan() {
			t.Fatalf("watch ended before %s: %v", want.typ, sc.Err())
		}
		var ev crashEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != want.typ || (want.rv != "" && ev.Object.Metadata.ResourceVersion != want.rv) || ev.Object.Data["v"] != want.v {
			t.Errorf("watch event %s rv %s v %s, want %s rv %s v %s", ev.Type, ev.Object.Metadata.ResourceVersion, ev.Object.Data["v"], want.typ, want.rv, want.v)
		}
	}
	if kv, err := cli.Get(ctx, prefix+"/configmaps/default/cm1"); err != nil || len(kv.Kvs) != 0 {
		t.Errorf("etcd after the delete: %v %v", kv, err)
	}

	// A restart serves what etcd holds.
	write(http.MethodPost, base, `{"metadata":{"name":"kept"},"data":{"v":"7"}}`, http.StatusCreated)
	p.terminate()
	p2 := startPlatd(t, dir, flags...)
	code, body, err := p2.do(http.MethodGet, base+"/kept", nil)
	if err != nil || code != http.StatusOK || !bytes.Contains(body, []byte(`"v":"7"`)) {
		t.Errorf("after the restart: %d %v %s", code, err, body)
	}
	if code, _, _ := p2.do(http.MethodGet, base+"/cm1", nil); code != http.StatusNotFound {
		t.Errorf("the deleted object after the restart: %d", code)
	}
	p2.terminate()
}

//go:build linux

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Load shape of the crash test.
const (
	// crashWriters is the number of concurrent writers; enough to make
	// group commit batch several writes per fsync.
	crashWriters = 8
	// crashLoadFor is how long the load runs before the kill: long enough
	// for hundreds of durable writes, short enough to keep the test fast.
	crashLoadFor = 1500 * time.Millisecond
	// crashMinAcks is the fewest acknowledged writes that make the test
	// meaningful; a slower machine just loads longer.
	crashMinAcks = 100
	// crashMaxLoad bounds the load phase on a very slow machine.
	crashMaxLoad = 20 * time.Second
	// crashRequestTimeout bounds one write of the load.
	crashRequestTimeout = 10 * time.Second
	// crashWatchTimeout bounds the replay of the watch after the restart.
	crashWatchTimeout = 20 * time.Second
	// crashPoll is how often the load phase checks its progress.
	crashPoll = 10 * time.Millisecond
	// crashMaxEvent is the longest watch line accepted; the objects are
	// a few hundred bytes.
	crashMaxEvent = 1 << 20
)

// crashNS is the namespace the crash test writes into.
const crashNS = "crash"

// ackedWrite is one write the server acknowledged before it was killed.
type ackedWrite struct {
	name string
	rv   uint64
	// v is the value of data.v the write stored; updates count it up.
	v int
}

// crashObject is the part of a ConfigMap the crash test reads back.
type crashObject struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

func (o crashObject) rv(t *testing.T) uint64 {
	t.Helper()
	rv, err := strconv.ParseUint(o.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatalf("object %s has resourceVersion %q: %v", o.Metadata.Name, o.Metadata.ResourceVersion, err)
	}
	return rv
}

func (o crashObject) v(t *testing.T) int {
	t.Helper()
	v, err := strconv.Atoi(o.Data["v"])
	if err != nil {
		t.Fatalf("object %s has data.v %q: %v", o.Metadata.Name, o.Data["v"], err)
	}
	return v
}

// crashBody is the JSON of a ConfigMap of the crash test; rv is empty on
// create and the expected resourceVersion on update. The 200-digit payload
// gives each write a realistic size without slowing the load.
func crashBody(name, rv string, v int) []byte {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": crashNS, "resourceVersion": rv},
		"data":     map[string]string{"v": strconv.Itoa(v), "payload": fmt.Sprintf("%0200d", v)},
	})
	return b
}

// crashWriter creates ConfigMaps and updates its own earlier ones until
// stop is closed or a write fails (the process was killed). It returns the
// writes the server acknowledged with their resourceVersions.
func crashWriter(t *testing.T, c *http.Client, base string, id int, stop <-chan struct{}, acks *atomic.Int64) []ackedWrite {
	var done []ackedWrite
	last := map[string]ackedWrite{}
	var names []string
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	write := func(method, p string, body []byte, want int, name string, v int) bool {
		ctx, cancel := context.WithTimeout(context.Background(), crashRequestTimeout)
		defer cancel()
		r, _ := http.NewRequestWithContext(ctx, method, base+p, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		res, err := c.Do(r)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var o crashObject
		if err := json.NewDecoder(res.Body).Decode(&o); err != nil || res.StatusCode != want {
			// A response cut by the kill is not an acknowledgement; any
			// other refusal is a bug the assertions below will not see.
			if err == nil {
				t.Errorf("%s %s: status %d, want %d", method, p, res.StatusCode, want)
			}
			return false
		}
		// t.Fatal must not be called here: this runs on its own goroutine.
		rv, err := strconv.ParseUint(o.Metadata.ResourceVersion, 10, 64)
		if err != nil || o.Metadata.Name != name || o.Data["v"] != strconv.Itoa(v) {
			t.Errorf("%s %s answered with %s rv=%q v=%q", method, p, o.Metadata.Name, o.Metadata.ResourceVersion, o.Data["v"])
			return false
		}
		a := ackedWrite{name: name, rv: rv, v: v}
		done = append(done, a)
		last[name] = a
		acks.Add(1)
		return true
	}
	collection := "/api/v1/namespaces/" + crashNS + "/configmaps"
	for i := 0; ; i++ {
		select {
		case <-stop:
			return done
		default:
		}
		if len(names) > 0 && rng.IntN(3) == 0 {
			name := names[rng.IntN(len(names))]
			prev := last[name]
			if !write(http.MethodPut, collection+"/"+name, crashBody(name, strconv.FormatUint(prev.rv, 10), prev.v+1), http.StatusOK, name, prev.v+1) {
				return done
			}
			continue
		}
		name := fmt.Sprintf("w%d-%05d", id, i)
		if !write(http.MethodPost, collection, crashBody(name, "", 0), http.StatusCreated, name, 0) {
			return done
		}
		names = append(names, name)
	}
}

// TestCrashRecovery kills platd with SIGKILL in the middle of a durable
// write load and checks, after a restart on the same data directory, that
// no acknowledged write was lost, that revisions keep growing, and that a
// watch from before the crash replays every acknowledged write in order.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	crashRecovery(t)
}

// TestCrashRecoveryEtcd is the crash test with the objects in etcd: the
// writes platd acknowledged are in etcd when it is killed.
func TestCrashRecoveryEtcd(t *testing.T) {
	t.Parallel()
	crashRecovery(t, etcdFlags(embeddedEtcd(t))...)
}

// crashRecovery is the crash test of a platd started with flags.
func crashRecovery(t *testing.T, flags ...string) {
	dir := t.TempDir()
	p := startPlatd(t, dir, flags...)
	ns := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + crashNS + `"}}`)
	if code, body, err := p.do(http.MethodPost, "/api/v1/namespaces", ns); err != nil || code != http.StatusCreated {
		t.Fatalf("create namespace: %d %v %s", code, err, body)
	}

	// Load, then kill mid-load.
	stop := make(chan struct{})
	var acks atomic.Int64
	results := make([][]ackedWrite, crashWriters)
	var wg sync.WaitGroup
	for w := range crashWriters {
		c := p.newClient() // one connection per writer
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.CloseIdleConnections()
			results[w] = crashWriter(t, c, p.url, w, stop, &acks)
		}()
	}
	// However the test ends, the writers stop before it does: they report
	// through t.
	var stopOnce sync.Once
	stopLoad := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	t.Cleanup(stopLoad)
	loadStart := time.Now()
	tick := time.NewTicker(crashPoll)
	defer tick.Stop()
	for time.Since(loadStart) < crashLoadFor || acks.Load() < crashMinAcks {
		if time.Since(loadStart) > crashMaxLoad {
			t.Fatalf("only %d writes acknowledged in %v", acks.Load(), crashMaxLoad)
		}
		<-tick.C
	}
	p.kill()
	stopLoad()
	if t.Failed() {
		return
	}

	var all []ackedWrite
	latest := map[string]ackedWrite{}
	for _, ws := range results {
		for _, a := range ws {
			all = append(all, a)
			if a.rv > latest[a.name].rv {
				latest[a.name] = a
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].rv < all[j].rv })
	for i := 1; i < len(all); i++ {
		if all[i].rv == all[i-1].rv {
			t.Fatalf("two acknowledged writes share resourceVersion %d: %v and %v", all[i].rv, all[i-1], all[i])
		}
	}
	firstRV, maxRV := all[0].rv, all[len(all)-1].rv
	t.Logf("%d acknowledged writes (%d objects) in %v, resourceVersions %d..%d", len(all), len(latest), time.Since(loadStart).Round(time.Millisecond), firstRV, maxRV)

	// Restart on the same data directory.
	p2 := startPlatd(t, dir, flags...)

	// Every acknowledged write is there with at least its state.
	code, body, err := p2.do(http.MethodGet, "/api/v1/namespaces/"+crashNS+"/configmaps", nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("list after restart: %d %v %s", code, err, body)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []crashObject `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	stored := map[string]crashObject{}
	for _, o := range list.Items {
		stored[o.Metadata.Name] = o
	}
	for name, a := range latest {
		o, ok := stored[name]
		if !ok {
			t.Errorf("acknowledged %s (rv %d) is missing after the crash", name, a.rv)
			continue
		}
		if o.rv(t) < a.rv || o.v(t) < a.v {
			t.Errorf("%s after the crash: rv %d v %d; acknowledged rv %d v %d", name, o.rv(t), o.v(t), a.rv, a.v)
		}
	}
	listRV, err := strconv.ParseUint(list.Metadata.ResourceVersion, 10, 64)
	if err != nil || listRV < maxRV {
		t.Errorf("list resourceVersion after restart %q, want >= %d", list.Metadata.ResourceVersion, maxRV)
	}

	// The revision only grows: a write after the restart is newer than
	// everything acknowledged and everything the list saw.
	code, body, err = p2.do(http.MethodPost, "/api/v1/namespaces/"+crashNS+"/configmaps", crashBody("after-restart", "", 0))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create after restart: %d %v %s", code, err, body)
	}
	var marker crashObject
	if err := json.Unmarshal(body, &marker); err != nil {
		t.Fatal(err)
	}
	markerRV := marker.rv(t)
	if markerRV <= maxRV || markerRV <= listRV {
		t.Errorf("resourceVersion after restart %d, want > %d (acknowledged) and > %d (list)", markerRV, maxRV, listRV)
	}

	// A watch from the first acknowledged revision replays the gap up to
	// the write made after the restart.
	want := map[uint64]ackedWrite{}
	for _, a := range all[1:] {
		want[a.rv] = a
	}
	events := crashWatch(t, p2, firstRV, "after-restart")
	var prev uint64
	for _, ev := range events {
		rv := ev.Object.rv(t)
		if rv <= prev || rv <= firstRV {
			t.Errorf("watch event %s %s rv %d after rv %d (from %d): not increasing", ev.Type, ev.Object.Metadata.Name, rv, prev, firstRV)
		}
		prev = rv
		a, ok := want[rv]
		if !ok {
			continue // committed but not acknowledged before the kill
		}
		delete(want, rv)
		if ev.Type != "ADDED" && ev.Type != "MODIFIED" {
			t.Errorf("event at rv %d is %s, want ADDED or MODIFIED", rv, ev.Type)
		}
		if ev.Object.Metadata.Name != a.name || ev.Object.v(t) != a.v {
			t.Errorf("event at rv %d is %s v=%d, acknowledged %s v=%d", rv, ev.Object.Metadata.Name, ev.Object.v(t), a.name, a.v)
		}
	}
	if len(want) > 0 {
		missing := make([]uint64, 0, len(want))
		for rv := range want {
			missing = append(missing, rv)
		}
		sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
		t.Errorf("watch from %d missed %d acknowledged writes, first ones: %v", firstRV, len(missing), missing[:min(len(missing), 10)])
	}
	p2.terminate()
}

// crashEvent is one decoded watch event of the crash test.
type crashEvent struct {
	Type   string      `json:"type"`
	Object crashObject `json:"object"`
}

// crashWatch watches the crash namespace's ConfigMaps from rv and returns
// the events up to and including the one for the object named last.
func crashWatch(t *testing.T, p *platdProc, rv uint64, last string) []crashEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), crashWatchTimeout)
	defer cancel()
	u := fmt.Sprintf("%s/api/v1/namespaces/%s/configmaps?watch=1&resourceVersion=%d", p.url, crashNS, rv)
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	res, err := p.client.Do(r)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("watch from %d: status %d", rv, res.StatusCode)
	}
	var events []crashEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), crashMaxEvent)
	for sc.Scan() {
		var ev crashEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("undecodable watch line %q: %v", sc.Text(), err)
		}
		if ev.Type == "ERROR" || ev.Type == "BOOKMARK" {
			t.Fatalf("unexpected %s event: %s", ev.Type, sc.Text())
		}
		events = append(events, ev)
		if ev.Object.Metadata.Name == last {
			return events
		}
	}
	t.Fatalf("watch from %d ended after %d events without %s: %v", rv, len(events), last, sc.Err())
	return nil
}

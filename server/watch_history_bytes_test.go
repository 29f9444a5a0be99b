package server_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"platd/bolt"
	"platd/config"
)

// The probe of a burst of large updates: with --watch-history-max-bytes
// the history stays within its bound at every step (as the store and
// /metrics report it), a watch open during the burst gets every update,
// and a watch, an Exact list or a continue token from a revision the bound
// dropped gets 410 Expired exactly as after a compaction, while the
// retained revisions replay exactly.
func TestWatchHistoryByteBound(t *testing.T) {
	t.Parallel()
	const bound = 1 << 20
	e := start(t, func(o *config.Options) { o.WatchHistoryMaxBytes = bound })
	db, ok := e.srv.Store().(*bolt.DB)
	if !ok {
		t.Skipf("store %T is not the bolt engine", e.srv.Store())
	}
	base := "/api/v1/namespaces/default/configmaps"
	e.do("POST", base, cm("a-small", nil, nil)).mustCreated(t)
	e.do("POST", base, cm("b-small", nil, nil)).mustCreated(t)
	page := e.do("GET", base+"?limit=1", nil).mustCode(t, 200).obj(t)
	tok, _ := path(page, "metadata.continue").(string)
	if tok == "" {
		t.Fatalf("no continue token: %v", page["metadata"])
	}
	pad := strings.Repeat("x", 128<<10)
	obj := e.do("POST", base, cm("big", map[string]string{"k": pad + "0"}, nil)).mustCreated(t)
	first := rvOf(obj)
	live := e.watch(base + "?watch=1&resourceVersion=" + first)

	const updates = 24
	for i := 1; i <= updates; i++ {
		obj["data"] = map[string]any{"k": pad + strconv.Itoa(i)}
		obj = e.do("PUT", base+"/big", obj).mustCode(t, 200).obj(t)
		if st := db.HistoryStats(); st.Bytes > bound || st.MaxBytes != bound {
			t.Fatalf("after update %d the history holds %d bytes (bound %d)", i, st.Bytes, st.MaxBytes)
		}
	}
	for i := 1; i <= updates; i++ {
		ev := live.expect("MODIFIED", "big")
		if k, _ := path(ev.Object, "data.k").(string); !strings.HasSuffix(k, "x"+strconv.Itoa(i)) || len(k) != len(pad)+len(strconv.Itoa(i)) {
			t.Fatalf("live watch: update %d carries a value of %d bytes ending %q", i, len(k), k[max(0, len(k)-4):])
		}
	}

	st := db.HistoryStats()
	comp := db.CompactedRevision()
	firstRev, _ := strconv.ParseInt(first, 10, 64)
	if st.Trimmed == 0 || comp <= firstRev || st.Events == 0 {
		t.Fatalf("stats %+v, compacted %d: the burst from %d was not trimmed", st, comp, firstRev)
	}
	fams := scrape(t, e)
	for name, want := range map[string]float64{
		"apiserver_storage_watch_history_bytes":                float64(st.Bytes),
		"apiserver_storage_watch_history_max_bytes":            bound,
		"apiserver_storage_watch_history_events":               float64(st.Events),
		"apiserver_storage_watch_history_trimmed_events_total": float64(st.Trimmed),
	} {
		if got := value(fams, name, map[string]string{}); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}

	// From a dropped revision: 410 Expired, as for a compacted one.
	w := e.watch(base + "?watch=1&resourceVersion=" + first)
	ev := w.expect("ERROR", "")
	if path(ev.Object, "reason") != "Expired" || path(ev.Object, "code") != float64(410) ||
		path(ev.Object, "message") != fmt.Sprintf("too old resource version: %s (%d)", first, comp) {
		t.Errorf("watch from a dropped revision: %v", ev.Object)
	}
	w.waitClosed()
	exact := e.do("GET", base+"?resourceVersion="+first+"&resourceVersionMatch=Exact", nil).mustCode(t, 410).obj(t)
	if exact["reason"] != "Expired" || exact["message"] != "The resourceVersion for the provided list is too old." {
		t.Errorf("exact list at a dropped revision: %v", exact)
	}
	cont := e.do("GET", base+"?limit=1&continue="+tok, nil).mustCode(t, 410).obj(t)
	if cont["reason"] != "Expired" || !strings.HasPrefix(cont["message"].(string), "The provided continue parameter is too old to display a consistent list result.") {
		t.Errorf("continue token from a dropped revision: %v", cont)
	}

	// From the oldest retained revision: every later update, exactly.
	from := strconv.FormatInt(comp, 10)
	list := e.do("GET", base+"?resourceVersion="+from+"&resourceVersionMatch=Exact", nil).mustCode(t, 200).obj(t)
	if got := strings.Join(names(t, list), ","); got != "a-small,b-small,big" || rvOf(list) != from {
		t.Errorf("exact list at the oldest retained revision %s: %s at %s", from, got, rvOf(list))
	}
	replay := e.watch(base + "?watch=1&resourceVersion=" + from)
	n := int(db.Revision() - comp)
	for i := updates - n + 1; i <= updates; i++ {
		ev := replay.expect("MODIFIED", "big")
		if k, _ := path(ev.Object, "data.k").(string); !strings.HasSuffix(k, "x"+strconv.Itoa(i)) {
			t.Fatalf("replay from %s: expected update %d", from, i)
		}
	}
}

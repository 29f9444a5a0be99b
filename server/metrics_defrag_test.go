package server_test

import (
	"context"
	"os"
	"testing"

	"platd/bolt"
)

// After an online rewrite of the database file, /metrics reports the new
// file's size and counts the rewrite, and the server goes on serving.
func TestMetricsStorageDefrag(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	for _, n := range []string{"a", "b", "c"} {
		e.do("POST", base, cm(n, map[string]string{"k": n}, nil)).mustCode(t, 201)
	}
	db, ok := e.srv.Store().(*bolt.DB)
	if !ok {
		t.Skipf("store %T is not the bolt engine", e.srv.Store())
	}
	fams := scrape(t, e)
	runs := value(fams, "apiserver_storage_defrag_total", map[string]string{"result": "success"})
	if _, _, err := db.Defrag(context.Background()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	fams = scrape(t, e)
	if got := value(fams, "apiserver_storage_size_bytes", map[string]string{"storage_cluster_id": db.Path()}); got != float64(fi.Size()) {
		t.Errorf("apiserver_storage_size_bytes = %v, want the new file's %d", got, fi.Size())
	}
	if got := value(fams, "apiserver_storage_defrag_total", map[string]string{"result": "success"}); got != runs+1 {
		t.Errorf("apiserver_storage_defrag_total{result=success} = %v, want %v", got, runs+1)
	}
	if got := value(fams, "apiserver_storage_defrag_total", map[string]string{"result": "failure"}); got != 0 {
		t.Errorf("apiserver_storage_defrag_total{result=failure} = %v", got)
	}
	if m := sample(fams, "apiserver_storage_defrag_pause_seconds", map[string]string{}); m == nil ||
		float64(m.Histogram.GetSampleCount()) != runs+1 || m.Histogram.GetSampleSum() <= 0 {
		t.Errorf("apiserver_storage_defrag_pause_seconds: %v", m)
	}
	e.do("POST", base, cm("d", nil, nil)).mustCode(t, 201)
	e.do("GET", base+"/a", nil).mustCode(t, 200)
}

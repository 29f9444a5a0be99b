package server_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"platd/config"
	"platd/server"
)

// metaTag reads (and with del, removes) the brand recorded in the file.
func metaTag(t *testing.T, path string, del bool) string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tag string
	err = db.Update(func(tx *bbolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		tag = string(m.Get([]byte("tag")))
		if del {
			return m.Delete([]byte("tag"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

func TestBrandRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, withBrand("kubernetes")))
	e.stop()
	o := testOptions(t, dir)
	if got := metaTag(t, o.DBPath(), false); got != "kubernetes" {
		t.Fatalf("recorded brand %q, want kubernetes", got)
	}
	want := "invalid configuration: the data directory " + dir + " holds the objects of --brand kubernetes, and this start asks for --brand plat; " +
		"one data directory keeps one brand's spellings (system namespaces, groups, labels). " +
		"Start with --brand kubernetes, or give another --data-dir, or delete " + dir + " to start over with --brand plat"
	refused := func(step string) {
		t.Helper()
		s, err := server.New(context.Background(), o, quietLog())
		if err == nil {
			s.Serve(canceled())
			t.Fatalf("%s: a plat start of a kubernetes data directory was not refused", step)
		}
		if !errors.Is(err, config.ErrInvalid) || err.Error() != want {
			t.Fatalf("%s: error\n%v\nwant\n%s", step, err, want)
		}
	}
	refused("recorded")
	// A database written before the brand was recorded: its system
	// namespace tells.
	metaTag(t, o.DBPath(), true)
	refused("unrecorded")
	if got := metaTag(t, o.DBPath(), false); got != "" {
		t.Fatalf("a refused start recorded %q", got)
	}
	e = startWith(t, testOptions(t, dir, withBrand("kubernetes")))
	e.stop()
	if got := metaTag(t, o.DBPath(), false); got != "kubernetes" {
		t.Fatalf("migrated file records %q, want kubernetes", got)
	}
	// Reset as the README says: a new directory takes any brand.
	e = startWith(t, testOptions(t, t.TempDir()))
	e.stop()
	if got := metaTag(t, e.opts.DBPath(), false); got != "plat" || !strings.HasSuffix(e.opts.DBPath(), "platd.db") {
		t.Fatalf("new directory records %q", got)
	}
}

// canceled is a context that has ended, to stop a server at once.
func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestRefusedStartKeepsKubeconfig: the admin kubeconfig is written while a
// start is under way but put in place only when the start succeeds; a
// refused start leaves the last one as it was, and no temporary file.
func TestRefusedStartKeepsKubeconfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, withBrand("kubernetes")))
	e.stop()
	o := testOptions(t, dir)
	before, err := os.ReadFile(o.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if s, err := server.New(context.Background(), o, quietLog()); err == nil {
		s.Serve(canceled())
		t.Fatal("a plat start of a kubernetes data directory was not refused")
	}
	after, err := os.ReadFile(o.KubeconfigPath())
	if err != nil || string(after) != string(before) {
		t.Fatalf("a refused start changed the kubeconfig (err %v):\n%s\nwas\n%s", err, after, before)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(o.KubeconfigPath()), ".*.tmp-*"))
	if len(left) > 0 {
		t.Fatalf("a refused start left %v", left)
	}
}

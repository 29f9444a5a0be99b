package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"platd/bolt"
	"platd/bolt/storetest"
	"platd/config"
)

// runApp runs the command line and returns what it printed.
func runApp(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	app := newApp(func(context.Context, config.Options) error { return nil })
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	err = app.RunContext(context.Background(), append([]string{"platd"}, args...))
	return out.String(), errOut.String(), err
}

func TestDefragCommand(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runApp(t, "defrag", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "no database in "+dir) || !strings.Contains(err.Error(), "platd defrag works on the bbolt file only; for etcd use etcdctl defrag") {
		t.Errorf("empty directory: %v", err)
	}
	path := (&config.Options{DataDir: dir}).DBPath()
	db, err := bolt.Open(path, bolt.Options{Stamp: storetest.Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	value := []byte(`{"metadata":{"name":"a"},"data":"` + strings.Repeat("x", 2000) + `"}`)
	for i := range 2000 {
		key := fmt.Sprintf("/configmaps/default/c%d", i%20)
		if i < 20 {
			_, err = db.Create(ctx, key, value)
		} else {
			_, err = db.Update(ctx, key, 0, value)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(ctx, db.Revision()-10); err != nil {
		t.Fatal(err)
	}
	_, _, err = runApp(t, "defrag", "--data-dir", dir)
	if want := dir + " is in use by a running platd: stop it first"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("while open: %v, want %q", err, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := runApp(t, "defrag", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^(.*): ([0-9.]+) MiB -> ([0-9.]+) KiB in \S+\n$`).FindStringSubmatch(out)
	if m == nil || m[1] != path {
		t.Fatalf("output %q", out)
	}
	if err := bolt.CheckFile(path); err != nil {
		t.Error(err)
	}
	if _, _, err := runApp(t, "defrag", "--data-dir", dir, "extra"); err == nil || !strings.Contains(err.Error(), `unexpected argument "extra"`) {
		t.Errorf("extra argument: %v", err)
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB", 5 << 40: "5120.0 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDefragProgress(t *testing.T) {
	var b bytes.Buffer
	p := recordProgress(&b, 0, "copied")
	p(250, 1000)
	p(1000, 1000) // the end is not reported: the result line follows
	if got, want := b.String(), "copied 250 of 1000 records (25%)\n"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	b.Reset()
	recordProgress(&b, time.Hour, "copied")(1, 2)
	if b.Len() != 0 {
		t.Errorf("progress before the interval: %q", b.String())
	}
}

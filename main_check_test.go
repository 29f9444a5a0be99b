package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"platd/bolt"
	"platd/bolt/storetest"
	"platd/config"
)

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, _, err := runApp(t, "check", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "no database in "+dir) || !strings.Contains(err.Error(), "platd check works on the bbolt file only; for etcd use etcdctl endpoint health") {
		t.Errorf("empty directory: %v", err)
	}
	path := (&config.Options{DataDir: dir}).DBPath()
	db, err := bolt.Open(path, bolt.Options{Stamp: storetest.Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"a", "damaged", "c"} {
		if _, err := db.Create(ctx, "/configmaps/default/"+name, []byte(`{"metadata":{"name":"`+name+`"},"data":{"k":"Value-Of-`+name+`"}}`)); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = runApp(t, "check", "--data-dir", dir)
	if want := dir + " is in use by a running platd: stop it first"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("while open: %v, want %q", err, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := runApp(t, "check", "--data-dir", dir)
	if err != nil || !regexp.MustCompile(`^`+regexp.QuoteMeta(path)+`: no problems found in \S+\n$`).MatchString(out) {
		t.Fatalf("sound file: %q, %v", out, err)
	}

	// A flipped byte in a value damages its state record and its event.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("Value-Of-damaged"), []byte("value-Of-damaged"))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = runApp(t, "check", "--data-dir", dir)
	hex := regexp.MustCompile(`stored [0-9a-f]{8}, computed [0-9a-f]{8}`)
	if got, want := hex.ReplaceAllString(out, "stored X, computed Y"), "event 2: bolt: checksum mismatch: stored X, computed Y\n"+
		`state "/configmaps/default/damaged": bolt: checksum mismatch: stored X, computed Y`+"\n"; got != want {
		t.Errorf("damaged value: output\n%s\nwant\n%s", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), path+" is damaged: 2 problems listed above; restore the data directory from a backup") || exitCode(err) != 1 {
		t.Errorf("damaged value: %v (exit code %d)", err, exitCode(err))
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Error("the check changed the file")
	}

	// A file cut short is one problem, named.
	if err := os.WriteFile(path, data[:len(data)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = runApp(t, "check", "--data-dir", dir)
	if !strings.HasPrefix(out, "the file is truncated: it is ") || strings.Count(out, "\n") != 1 || exitCode(err) != 1 {
		t.Errorf("truncated: %q, %v", out, err)
	}
	if _, _, err := runApp(t, "check", "--data-dir", dir, "extra"); err == nil || !strings.Contains(err.Error(), `unexpected argument "extra"`) || exitCode(err) != 2 {
		t.Errorf("extra argument: %v", err)
	}
}

func TestCheckProgress(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := recordProgress(&b, 0, "checked")
	p(50_000, 200_000)
	p(200_000, 200_000) // the end is not reported: the result line follows
	if got, want := b.String(), "checked 50000 of 200000 records (25%)\n"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	b.Reset()
	recordProgress(&b, time.Hour, "checked")(1, 2)
	if b.Len() != 0 {
		t.Errorf("progress before the interval: %q", b.String())
	}
}

package bolt_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"platd/bolt"
	"platd/bolt/storetest"
)

// fileHasFreelist reads the newest meta page of a bbolt file and reports
// whether it records a free-page list. bbolt's meta page: a 16-byte page
// header, then magic, version, page size and flags (4 bytes each), the
// root bucket (16), the freelist page id (8), the high-water page id (8)
// and the transaction id (8), in the machine's byte order; a freelist id
// of all ones means none.
func fileHasFreelist(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	meta := func(off int) (freelist, txid uint64) {
		return binary.NativeEndian.Uint64(b[off+48:]), binary.NativeEndian.Uint64(b[off+64:])
	}
	pageSize := int(binary.NativeEndian.Uint32(b[24:]))
	f0, tx0 := meta(0)
	f1, tx1 := meta(pageSize)
	if tx1 > tx0 {
		f0 = f1
	}
	return f0 != ^uint64(0)
}

// A clean Close leaves the free-page list in the file, so the next Open
// reads it instead of walking every page; the open's first transaction
// marks the file as without one again, so that a crash from then on is
// followed by the walk, and both opens see every acknowledged write.
func TestCloseWritesFreelist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	opts := bolt.Options{Stamp: storetest.Stamp, Logger: slog.New(slog.DiscardHandler)}
	open := func(path string) *bolt.DB {
		t.Helper()
		db, err := bolt.Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	closeCheck := func(db *bolt.DB) {
		t.Helper()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := bolt.CheckFile(db.Path()); err != nil {
			t.Fatalf("CheckFile: %v", err)
		}
	}
	value := bytes.Repeat([]byte("v"), 3000)
	db := open(path)
	for i := range 200 {
		if _, err := db.Create(ctx, fmt.Sprintf("/things/k%03d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 200; i += 2 { // free pages to list
		if _, err := db.Delete(ctx, fmt.Sprintf("/things/k%03d", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(ctx, db.Revision()); err != nil {
		t.Fatal(err)
	}
	closeCheck(db)
	if !fileHasFreelist(t, path) {
		t.Fatal("no free-page list after Close")
	}

	db = open(path)
	if fileHasFreelist(t, path) {
		t.Fatal("free-page list still recorded after Open: a crash now would trust it")
	}
	if _, err := db.Create(ctx, "/things/after", value); err != nil {
		t.Fatal(err)
	}
	// The file as a crash now would leave it: the open after it walks
	// the pages and finds every write.
	crashed := filepath.Join(dir, "crashed.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crashed, b, 0o600); err != nil {
		t.Fatal(err)
	}
	closeCheck(db)
	if !fileHasFreelist(t, path) {
		t.Fatal("no free-page list after the second Close")
	}
	for _, p := range []string{path, crashed} {
		db := open(p)
		if n := db.Count("/things/"); n != 101 {
			t.Errorf("%s: %d keys, want 101", filepath.Base(p), n)
		}
		kv, err := db.Get("/things/after")
		if err != nil || !bytes.HasPrefix(kv.Value, value) {
			t.Errorf("%s: Get after: %v", filepath.Base(p), err)
		}
		// Freed pages are reused, not lost or handed out twice.
		for i := 0; i < 200; i += 2 {
			if _, err := db.Create(ctx, fmt.Sprintf("/things/k%03d", i), value); err != nil {
				t.Fatal(err)
			}
		}
		closeCheck(db)
	}
}

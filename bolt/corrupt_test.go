package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	damageKey      = "/configmaps/default/target"
	damageMarker   = "MARKER-VALUE-0123456789"
	damageOldValue = "OLD-MARKER-9876543210"
)

var (
	damageOnce sync.Once
	damageFile []byte
	damageErr  error
)

// damageSource is a closed engine file with enough objects for branch
// pages, a value found by its marker and an older value kept only in the
// history. It is built once and copied by each case.
func damageSource(t testing.TB) []byte {
	t.Helper()
	damageOnce.Do(func() {
		dir, err := os.MkdirTemp("", "damage")
		if err != nil {
			damageErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "e.db")
		db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			damageErr = err
			return
		}
		ctx := context.Background()
		pad := strings.Repeat("x", 200)
		for i := range 300 {
			if _, err := db.Create(ctx, fmt.Sprintf("/configmaps/default/cm-%03d", i), []byte(`{"data":"`+pad+`"}`)); err != nil {
				damageErr = err
			}
		}
		kv, err := db.Create(ctx, damageKey, []byte(`{"data":"`+damageOldValue+`"}`))
		if err == nil {
			_, err = db.Update(ctx, damageKey, kv.ModRevision, []byte(`{"data":"`+damageMarker+`"}`))
		}
		if err != nil {
			damageErr = err
		}
		if err := db.Close(); err != nil {
			damageErr = err
		}
		damageFile, err = os.ReadFile(path)
		if damageErr == nil {
			damageErr = err
		}
	})
	if damageErr != nil {
		t.Fatal(damageErr)
	}
	return bytes.Clone(damageFile)
}

var (
	crashedOnce sync.Once
	crashedFile []byte
	crashedErr  error
)

// crashedSource is damageSource as a crash leaves it: the file of a
// running engine, which records no free-page list, so that bbolt walks
// every page at open.
func crashedSource(t *testing.T) []byte {
	t.Helper()
	src := damageSource(t)
	crashedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "damage")
		if err != nil {
			crashedErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "e.db")
		if crashedErr = os.WriteFile(path, src, 0o600); crashedErr != nil {
			return
		}
		db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			crashedErr = err
			return
		}
		crashedFile, crashedErr = os.ReadFile(path)
		if err := db.Close(); crashedErr == nil {
			crashedErr = err
		}
	})
	if crashedErr != nil {
		t.Fatal(crashedErr)
	}
	listed := func(d []byte) bool { return newestOf(t, d).freelist != noFreelist }
	if !listed(src) || listed(crashedFile) {
		t.Fatalf("free-page list recorded: %v after a close, %v while open; want true, false", listed(src), listed(crashedFile))
	}
	return bytes.Clone(crashedFile)
}

// newestOf is the meta page Open reads of data.
func newestOf(t testing.TB, data []byte) boltMeta {
	t.Helper()
	m, _, _, err := newestMeta(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// pageOf returns the offset and size of a page of the state bucket's tree
// with flags f: the bucket's root for a branch page, its first leaf for a
// leaf page. Pages the tree no longer reaches (copy-on-write leaves the
// old ones in the file) are never picked: damage there is harmless, and
// which of them a file holds depends on how its commits were batched.
func pageOf(t *testing.T, data []byte, f uint16) (int, int) {
	t.Helper()
	m := newestOf(t, data)
	ps := int(m.pageSize)
	w := &pageWalker{}
	elems, err := w.elements(m.root, data[int(m.root)*ps:int(m.root+1)*ps], false, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := -1
	for _, e := range elems {
		if string(e.key) == string(bucketState) {
			id = int(ne.Uint64(e.value))
		}
	}
	if id <= 0 {
		t.Fatal("state bucket inline or missing")
	}
	flags := func(id int) uint16 { return ne.Uint16(data[id*ps+8:]) }
	for f == leafPageFlag && flags(id) == branchPageFlag {
		id = int(ne.Uint64(data[id*ps+pageHeaderSize+8:])) // the first child
	}
	if flags(id) != f || ne.Uint16(data[id*ps+10:]) <= 1 {
		t.Fatalf("state bucket has no page with flags %#x and two elements", f)
	}
	return id * ps, ps
}

// freelistRebuilt checks a store opened over a damaged free-page list:
// everything reads, and writes leave a sound file, whose pages bbolt
// allocated from the list it rebuilt, not from the damaged one.
func freelistRebuilt(t *testing.T, db *DB) {
	t.Helper()
	if kv, err := db.Get(damageKey); err != nil || !bytes.Contains(kv.Value, []byte(damageMarker)) {
		t.Errorf("get: %q, %v", kv.Value, err)
	}
	for i := range 50 {
		if _, err := db.Create(t.Context(), fmt.Sprintf("/configmaps/default/new-%03d", i), []byte(`{"data":"`+strings.Repeat("n", 300)+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(db.path); err != nil {
		t.Errorf("the file after writes: %v", err)
	}
}

// setFree sets entry i of the free-page list of data to id (0: leaves it)
// and returns the entry's old id. A file without a list (after a crash)
// skips the test: bbolt then rebuilds the list from the tree.
func setFree(t *testing.T, data []byte, i int, id uint64) uint64 {
	t.Helper()
	m := newestOf(t, data)
	if m.freelist == noFreelist {
		t.Skip("no free-page list in the file")
	}
	p := data[m.freelist*m.pageSize:]
	n, start := int(ne.Uint16(p[10:])), pageHeaderSize
	if n == freelistOverrun {
		n, start = int(ne.Uint64(p[pageHeaderSize:])), pageHeaderSize+8
	}
	if n <= i {
		t.Fatalf("free-page list of %d ids, want at least %d", n, i+1)
	}
	at := p[start+8*i:]
	old := ne.Uint64(at)
	if id != 0 {
		ne.PutUint64(at, id)
	}
	return old
}

func flipAll(t *testing.T, data []byte, marker string) []byte {
	t.Helper()
	n := 0
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(marker))
		if j < 0 {
			break
		}
		data[i+j+3] ^= 0x20
		i += j + len(marker)
		n++
	}
	if n == 0 {
		t.Fatalf("marker %q not in the file", marker)
	}
	return data
}

// TestDamagedFiles damages copies of a real engine file, one way each,
// and checks that Open refuses it with a clear error or serves the
// damaged object as corrupt, and that CheckFile reports it; neither ever
// panics or faults.
func TestDamagedFiles(t *testing.T) {
	t.Parallel()
	highWater := func(t *testing.T, data []byte) int {
		m := newestOf(t, data)
		return int(m.highWater * m.pageSize)
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, data []byte) []byte
		open   string                // part of Open's error; "" if it opens
		check  string                // part of CheckFile's error; "" if clean
		opened func(*testing.T, *DB) // what an opened file serves
	}{
		{name: "zero length", damage: func(*testing.T, []byte) []byte { return nil },
			open: "the file is empty (0 bytes)", check: "the file is empty"},
		{name: "truncated to half", damage: func(t *testing.T, d []byte) []byte { return d[:highWater(t, d)/2] },
			open: "the file is truncated", check: "the file is truncated"},
		{name: "truncated to a non-page size", damage: func(t *testing.T, d []byte) []byte { return d[:highWater(t, d)-1000] },
			open: "the file is truncated", check: "the file is truncated"},
		{name: "truncated inside the first page", damage: func(_ *testing.T, d []byte) []byte { return d[:100] },
			open: "the file is truncated: it is 100 bytes", check: "the file is truncated: it is 100 bytes"},
		{name: "both meta pages", damage: func(_ *testing.T, d []byte) []byte {
			ps := readBoltMeta(d, 0).pageSize
			d[pageHeaderSize+20] ^= 0xff
			d[ps+pageHeaderSize+20] ^= 0xff
			return d
		}, open: "both meta pages are damaged (first: checksum mismatch)", check: "both meta pages are damaged"},
		{name: "one meta page", damage: func(_ *testing.T, d []byte) []byte {
			d[pageHeaderSize+40] ^= 0xff // the other one stands in, as bbolt intends
			return d
		}, opened: func(t *testing.T, db *DB) {
			if _, err := db.Get(damageKey); err != nil {
				t.Error(err)
			}
		}},
		{name: "branch page child out of the file", damage: func(t *testing.T, d []byte) []byte {
			off, _ := pageOf(t, d, branchPageFlag)
			ne.PutUint64(d[off+pageHeaderSize+8:], 1<<40)
			return d
		}, open: "outside the file's pages", check: "outside the file's pages"},
		{name: "branch page child elsewhere", damage: func(t *testing.T, d []byte) []byte {
			off, _ := pageOf(t, d, branchPageFlag)
			child := d[off+pageHeaderSize+8 : off+pageHeaderSize+16]
			copy(d[off+2*pageHeaderSize+8:], child) // the second child is the first again
			return d
		}, open: "page ", check: "page "},
		{name: "branch page key offset", damage: func(t *testing.T, d []byte) []byte {
			off, _ := pageOf(t, d, branchPageFlag)
			ne.PutUint32(d[off+pageHeaderSize:], 1<<30)
			return d
		}, open: "key or value past the page", check: "key or value past the page"},
		{name: "leaf page element count", damage: func(t *testing.T, d []byte) []byte {
			off, _ := pageOf(t, d, leafPageFlag)
			ne.PutUint16(d[off+10:], 0xfff0)
			return d
		}, open: "elements overrun the page", check: "elements overrun the page"},
		{name: "page type", damage: func(t *testing.T, d []byte) []byte {
			off, _ := pageOf(t, d, branchPageFlag)
			ne.PutUint16(d[off+8:], 0x40)
			return d
		}, open: "unexpected page type", check: "unexpected page type"},
		{name: "history bucket sharing the state's pages", damage: func(t *testing.T, d []byte) []byte {
			m := newestOf(t, d)
			// The root bucket's leaf names the three buckets' root pages;
			// the history's is made the state's.
			off := m.root * m.pageSize
			w := &pageWalker{}
			elems, err := w.elements(m.root, d[off:off+m.pageSize], false, nil)
			if err != nil {
				t.Fatal(err)
			}
			roots := map[string][]byte{}
			for _, e := range elems {
				roots[string(e.key)] = e.value
			}
			state, hist := roots[string(bucketState)], roots[string(bucketHistory)]
			if ne.Uint64(state) == 0 || ne.Uint64(hist) == 0 {
				t.Fatal("state or history bucket inline")
			}
			copy(hist[:8], state[:8])
			return d
		}, open: "referenced twice", check: "page "},
		{name: "free-page list naming a page in use", damage: func(t *testing.T, d []byte) []byte {
			off, ps := pageOf(t, d, branchPageFlag)
			setFree(t, d, 0, uint64(off/ps))
			return d
		}, check: "in use by the page tree and listed as free", opened: freelistRebuilt},
		{name: "free-page list naming a page twice", damage: func(t *testing.T, d []byte) []byte {
			first := setFree(t, d, 0, 0)
			setFree(t, d, 1, first)
			return d
		}, check: "listed as free twice", opened: freelistRebuilt},
		{name: "first key of a leaf longer than its parent's key for it", damage: func(t *testing.T, d []byte) []byte {
			off, _ := pageOf(t, d, leafPageFlag)
			// The key runs 16 bytes into its value: still in order and in
			// its parent's range, but not the key the parent names.
			ksize := d[off+pageHeaderSize+8:]
			ne.PutUint32(ksize, ne.Uint32(ksize)+16)
			return d
		}, open: "first key differs from the key its parent names it by", check: "first key differs from the key its parent names it by"},
		{name: "root page emptied", damage: func(t *testing.T, d []byte) []byte {
			m := newestOf(t, d)
			ne.PutUint16(d[m.root*m.pageSize+10:], 0) // no elements: a sound, empty tree
			return d
		}, open: "the file holds no buckets, but transactions were committed to it", check: "the file holds no buckets"},
		{name: "bucket flag on the root page", damage: func(t *testing.T, d []byte) []byte {
			m := newestOf(t, d)
			off := m.root*m.pageSize + pageHeaderSize
			for i := range uint64(ne.Uint16(d[m.root*m.pageSize+10:])) {
				el := d[off+i*pageElemSize:]
				key := d[off+i*pageElemSize+uint64(ne.Uint32(el[4:])):][:ne.Uint32(el[8:])]
				if string(key) == string(bucketMeta) {
					ne.PutUint32(el, 0) // a plain value now
					return d
				}
			}
			t.Fatal("no meta bucket on the root page")
			return nil
		}, open: `"meta (not a bucket)"`, check: `"meta (not a bucket)"`},
		{name: "bucket name on the root page", damage: func(t *testing.T, d []byte) []byte {
			m := newestOf(t, d)
			off := m.root * m.pageSize
			elems, err := (&pageWalker{}).elements(m.root, d[off:off+m.pageSize], false, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range elems {
				if string(e.key) == string(bucketState) {
					e.key[1] ^= 0x01 // "state" becomes "suate", still in order
					return d
				}
			}
			t.Fatal("no state bucket on the root page")
			return nil
		}, open: `top-level buckets are ["history" "meta" "suate"], want ["history" "meta" "state"]`,
			check: `top-level buckets are ["history" "meta" "suate"]`},
		{name: "leaf value byte", damage: func(t *testing.T, d []byte) []byte { return flipAll(t, d, damageMarker) },
			check: `state "/configmaps/default/target": bolt: checksum mismatch`,
			opened: func(t *testing.T, db *DB) {
				var ce *CorruptError
				if _, err := db.Get(damageKey); !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) || ce.Key != damageKey {
					t.Errorf("get: %v", err)
				}
				if _, err := db.Get("/configmaps/default/cm-001"); err != nil {
					t.Error(err)
				}
			}},
		{name: "history record", damage: func(t *testing.T, d []byte) []byte { return flipAll(t, d, damageOldValue) },
			check: ": bolt: checksum mismatch",
			opened: func(t *testing.T, db *DB) {
				kv, err := db.Get(damageKey)
				if err != nil || !bytes.Contains(kv.Value, []byte(damageMarker)) {
					t.Errorf("get: %q, %v", kv.Value, err)
				}
				if c := db.CompactedRevision(); c != kv.ModRevision {
					t.Errorf("compacted %d, want the last damaged event %d", c, kv.ModRevision)
				}
			}},
	}
	// A clean close leaves a free-page list in the file, and Open checks
	// the page tree after bbolt opens; without one, as after a crash,
	// before (pages.go, openChecked).
	for _, crashed := range []bool{false, true} {
		for _, tc := range tests {
			name := tc.name
			if crashed {
				name += " after a crash"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				source := damageSource(t)
				if crashed {
					source = crashedSource(t)
				}
				path := filepath.Join(t.TempDir(), "e.db")
				if err := os.WriteFile(path, tc.damage(t, source), 0o600); err != nil {
					t.Fatal(err)
				}
				err := CheckFile(path)
				if tc.check == "" && err != nil || tc.check != "" && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.check)) {
					t.Errorf("check: %v\nwant %q", err, tc.check)
				}
				db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
				if tc.open != "" {
					if err == nil {
						db.Close()
					}
					if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.open) || !strings.Contains(err.Error(), path) {
						t.Fatalf("open: %v\nwant %q naming the file", err, tc.open)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				tc.opened(t, db)
			})
		}
	}
}

// TestDamagedFilesRandom flips random bytes of copies of a small engine
// file: CheckFile and Open return (an error or not), never panic or fault,
// and a file Open accepts stays sound through writes.
func TestDamagedFilesRandom(t *testing.T) {
	t.Parallel()
	src := damageSource(t)
	rng := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	m := newestOf(t, src)
	if m.freelist == noFreelist {
		t.Fatal("the source file records no free-page list")
	}
	for i := range 150 {
		d := bytes.Clone(src)
		if i%3 == 0 {
			// Every third case names another page in the free-page list,
			// which bbolt trusts when it allocates.
			setFree(t, d, 0, 2+rng.Uint64N(m.highWater-2))
		}
		for range 1 + rng.IntN(4) {
			// Most damage lands in the first pages, where the metas and the
			// tree's upper pages are.
			at := rng.IntN(min(len(d), 64<<10))
			d[at] ^= byte(1 + rng.IntN(255))
		}
		path := filepath.Join(dir, fmt.Sprintf("e%d.db", i))
		if err := os.WriteFile(path, d, 0o600); err != nil {
			t.Fatal(err)
		}
		_ = CheckFile(path)
		if db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)}); err == nil {
			// A file Open accepts takes writes and stays sound: damage it
			// let through must not make bbolt reuse a page still in use.
			for j := range 40 {
				_, _ = db.Create(t.Context(), fmt.Sprintf("/configmaps/default/after-%03d", j), []byte(`{"data":"`+strings.Repeat("y", 300)+`"}`))
			}
			_ = db.Close()
			if _, err := verifyFile(path, walkKeys); err != nil {
				t.Errorf("case %d: the file Open accepted is unsound after writes: %v", i, err)
			}
		}
		os.Remove(path)
	}
}

// FuzzDamagedFile applies the input's damage to a copy of a real engine
// file: each 3 bytes xor the byte at a 16-bit offset (in the first 64 KiB,
// where the meta pages and the tree's upper pages are) with the third.
// CheckFile and Open must return, never panic or fault, and a file Open
// accepts must stay sound through writes.
func FuzzDamagedFile(f *testing.F) {
	f.Add([]byte{0x00, 0x10, 0xff})
	f.Add([]byte{0x10, 0x14, 0x01, 0x00, 0x14, 0x01})
	f.Add([]byte{0x30, 0x0a, 0x80})
	f.Add([]byte{0x20, 0x08, 0x03})
	src := damageSource(f)
	f.Fuzz(func(t *testing.T, damage []byte) {
		d := bytes.Clone(src)
		for i := 0; i+3 <= len(damage); i += 3 {
			at := (int(damage[i])<<8 | int(damage[i+1])) % len(d)
			d[at] ^= damage[i+2]
		}
		fuzzDamaged(t, d)
	})
}

// FuzzDamagedFileAnywhere is FuzzDamagedFile with damage anywhere in the
// file, history and free-page list included: each 4 bytes xor the byte at
// a 24-bit offset with the fourth.
func FuzzDamagedFileAnywhere(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x10, 0xff})
	f.Add([]byte{0x01, 0x20, 0x18, 0x04})
	f.Add([]byte{0x02, 0x40, 0x10, 0x80, 0x03, 0x10, 0x0a, 0x01})
	src := damageSource(f)
	f.Fuzz(func(t *testing.T, damage []byte) {
		d := bytes.Clone(src)
		for i := 0; i+4 <= len(damage); i += 4 {
			at := (int(damage[i])<<16 | int(damage[i+1])<<8 | int(damage[i+2])) % len(d)
			d[at] ^= damage[i+3]
		}
		fuzzDamaged(t, d)
	})
}

// fuzzDamaged writes the damaged file d and runs CheckFile and Open on
// it: they must return, never panic or fault, and a file Open accepts
// must stay sound through writes.
func fuzzDamaged(t *testing.T, d []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fuzz.db") // an Open that panicked leaves its file locked
	if err := os.WriteFile(path, d, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_ = CheckFile(path)
		db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			done <- nil
			return
		}
		for j := range 20 {
			_, _ = db.Create(context.Background(), fmt.Sprintf("/configmaps/default/after-%02d", j), []byte(`{"data":"`+strings.Repeat("z", 300)+`"}`))
		}
		_ = db.Close()
		_, err = verifyFile(path, walkKeys)
		done <- err
	}()
	// A hang is a failure too; the lock waits of a panicked Open's file
	// are 2 s each at most.
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the file Open accepted is unsound after writes: %v", err)
		}
	case <-time.After(testWait):
		t.Fatalf("CheckFile or Open of the damaged file did not return within %v", testWait)
	}
}

// TestCheckProgress: Check reports its progress, last with every record
// read.
func TestCheckProgress(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "e.db")
	if err := os.WriteFile(path, damageSource(t), 0o600); err != nil {
		t.Fatal(err)
	}
	var done, total int64
	err := Check(path, CheckOptions{Progress: func(d, n int64) { done, total = d, n }})
	// 301 objects; 302 events (300 creates, a create and an update).
	if err != nil || done != 603 || total != 603 {
		t.Fatalf("check: %v; last progress %d of %d, want 603", err, done, total)
	}
}

// TestDefragFileRefusesDamagedPages: the offline rewrite refuses a file
// whose pages are damaged, leaving it as it is.
func TestDefragFileRefusesDamagedPages(t *testing.T) {
	t.Parallel()
	d := damageSource(t)
	off, _ := pageOf(t, d, branchPageFlag)
	ne.PutUint64(d[off+pageHeaderSize+8:], 1<<40)
	path := filepath.Join(t.TempDir(), "e.db")
	if err := os.WriteFile(path, d, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := DefragFile(path, nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "outside the file's pages") {
		t.Fatalf("defrag: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, d) {
		t.Fatal("the file changed")
	}
}

// TestDefragDamagedFreelist rewrites a file whose free-page list names a
// page the tree uses: the check reports the list with the way out, the
// rewrite drops it (it copies only the tree), and the new file is sound
// and holds everything.
func TestDefragDamagedFreelist(t *testing.T) {
	t.Parallel()
	d := damageSource(t)
	off, ps := pageOf(t, d, branchPageFlag)
	setFree(t, d, 0, uint64(off/ps))
	path := filepath.Join(t.TempDir(), "e.db")
	if err := os.WriteFile(path, d, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(path); err == nil || !strings.Contains(err.Error(), "only the free-page list is damaged: the page tree is sound, and a start of platd rebuilds the list from it") {
		t.Fatalf("check: %v", err)
	}
	if _, _, err := DefragFile(path, nil); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(path); err != nil {
		t.Fatalf("check after the rewrite: %v", err)
	}
	db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kv, err := db.Get(damageKey)
	if err != nil || !bytes.Contains(kv.Value, []byte(damageMarker)) {
		t.Errorf("get: %q, %v", kv.Value, err)
	}
	if res, err := db.List("/configmaps/default/", ListOptions{}); err != nil || len(res.Items) != 301 {
		t.Errorf("list: %d keys, %v; want 301", len(res.Items), err)
	}
}

package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable time for backup names and ages.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mb is one megabyte of log, the unit of --audit-log-maxsize.
var mbLine = append(bytes.Repeat([]byte("x"), 1<<20-1), '\n')

func TestLogFileRotatesBySize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := &fakeClock{time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC)}
	path := filepath.Join(dir, "audit.log")
	l, err := OpenLogFile(path, 2, 0, 0, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := l.Write(mbLine); err != nil {
			t.Fatal(err)
		}
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"audit.log"}) {
		t.Fatalf("rotated before the limit: %v", got)
	}
	if _, err := l.Write([]byte("next\n")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"audit-2026-01-02T03-04-05.678.log", "audit.log"}) {
		t.Fatalf("files: %v", got)
	}
	if got := readFile(t, path); got != "next\n" {
		t.Errorf("new file holds %q", got)
	}
	if got := len(readFile(t, filepath.Join(dir, "audit-2026-01-02T03-04-05.678.log"))); got != 2<<20 {
		t.Errorf("backup holds %d bytes", got)
	}
	// A single write larger than the limit is refused.
	l, err = OpenLogFile(path, 1, 0, 0, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Write(append(mbLine, 'x')); err == nil || err.Error() != "write length 1048577 exceeds maximum file size 1048576" {
		t.Errorf("oversized write: %v", err)
	}
}

func TestLogFileAppendsToExisting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "audit")
	for _, line := range []string{"one\n", "two\n"} {
		l, err := OpenLogFile(path, 0, 0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := readFile(t, path); got != "one\ntwo\n" {
		t.Errorf("file holds %q", got)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestLogFileKeepsMaxBackups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := &fakeClock{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	path := filepath.Join(dir, "audit.log")
	// Files of other names stay whatever their names look like.
	for _, other := range []string{"other-2020-01-01T00-00-00.000.log", "audit-notatime.log", "audit-2020-01-01T00-00-00.000.txt"} {
		if err := os.WriteFile(filepath.Join(dir, other), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := OpenLogFile(path, 1, 2, 0, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 5; i++ {
		if _, err := l.Write(mbLine); err != nil {
			t.Fatal(err)
		}
		clock.t = clock.t.Add(time.Minute)
	}
	want := []string{"audit-2020-01-01T00-00-00.000.txt", "audit-2026-01-02T00-03-00.000.log", "audit-2026-01-02T00-04-00.000.log",
		"audit-notatime.log", "audit.log", "other-2020-01-01T00-00-00.000.log"}
	if got := listDir(t, dir); !slices.Equal(got, want) {
		t.Errorf("files:\n got %v\nwant %v", got, want)
	}
}

func TestLogFileRemovesOldBackups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	path := filepath.Join(dir, "audit.log")
	l, err := OpenLogFile(path, 1, 0, 2, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	write := func() {
		t.Helper()
		if _, err := l.Write(mbLine); err != nil {
			t.Fatal(err)
		}
	}
	write()
	write() // rotates on Jan 1
	clock.t = clock.t.Add(36 * time.Hour)
	write() // rotates on Jan 2, noon: Jan 1 is 1.5 days old, kept
	if got := strings.Join(listDir(t, dir), " "); got != "audit-2026-01-01T00-00-00.000.log audit-2026-01-02T12-00-00.000.log audit.log" {
		t.Fatalf("files: %s", got)
	}
	clock.t = clock.t.Add(24 * time.Hour)
	write() // Jan 3, noon: Jan 1 is 2.5 days old, removed
	if got := strings.Join(listDir(t, dir), " "); got != "audit-2026-01-02T12-00-00.000.log audit-2026-01-03T12-00-00.000.log audit.log" {
		t.Fatalf("files: %s", got)
	}
}

// slowWriter blocks every write until released, like a stalled disk.
type slowWriter struct {
	entered chan struct{}
	once    sync.Once
	release chan struct{}
	buf     bytes.Buffer
}

func (s *slowWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.buf.Write(p)
}
func (*slowWriter) Flush() error { return nil }
func (*slowWriter) Close() error { return nil }

func TestBackendBoundsWhatWaits(t *testing.T) {
	t.Parallel()
	w := &slowWriter{entered: make(chan struct{}), release: make(chan struct{})}
	b := NewBackend(w, nil)
	line := append(bytes.Repeat([]byte("x"), 1023), '\n')
	// The writer holds one batch of at most MaxPending; as much again may
	// wait; the rest of the writes wait for room.
	total := 3 * MaxPending / len(line)
	var accepted atomic.Int64
	go func() {
		for range total {
			b.Write(line)
			accepted.Add(1)
		}
	}()
	<-w.entered
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		n := len(b.pending)
		b.mu.Unlock()
		if n >= MaxPending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d bytes wait", n)
		}
		time.Sleep(time.Millisecond)
	}
	if got := accepted.Load(); got >= int64(total) || got > int64(2*MaxPending/len(line)+1) {
		t.Fatalf("%d of %d writes went through a stalled writer", got, total)
	}
	close(w.release)
	for accepted.Load() < int64(total) {
		if time.Now().After(deadline) {
			t.Fatal("writes still wait after the writer recovered")
		}
		time.Sleep(time.Millisecond)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := w.buf.Len(); got != total*len(line) {
		t.Errorf("wrote %d bytes, want %d", got, total*len(line))
	}
	b.Write(line) // dropped after Close, not a panic
}

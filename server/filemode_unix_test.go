//go:build unix

package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// PostgreSQL's rule for secret files platd did not write: owned by platd's
// user, private; owned by root, at most readable by its group; any other
// owner refused.
func TestOwnerModeProblem(t *testing.T) {
	const euid = 1000
	cases := []struct {
		perm  fs.FileMode
		owner int
		ok    bool
	}{
		{0o600, euid, true},
		{0o400, euid, true},
		{0o640, euid, false},
		{0o604, euid, false},
		{0o640, 0, true}, // root:platd, the service group reads
		{0o440, 0, true}, // a Secret volume with fsGroup
		{0o600, 0, true},
		{0o644, 0, false}, // others read
		{0o660, 0, false}, // the group may write
		{0o650, 0, false}, // the group may execute
		{0o600, 1001, false},
		{0o400, 1001, false},
	}
	for _, c := range cases {
		why, fix := ownerModeProblem(c.perm, c.owner, euid, "/k")
		if (why == "") != c.ok || (why == "") != (fix == "") {
			t.Errorf("%04o owned by %d: %q %q, want ok=%v", c.perm, c.owner, why, fix, c.ok)
		}
	}
}

// A key of platd's user its group may read is refused unless it lies in
// a directory nobody but platd's user may enter.
func TestOperatorFileInClosedDir(t *testing.T) {
	for _, c := range []struct {
		dir, file fs.FileMode
		ok        bool
	}{
		{0o700, 0o600, true},
		{0o700, 0o640, true},
		{0o700, 0o660, false}, // the group may write
		{0o700, 0o644, false},
		{0o750, 0o640, false},
		{0o755, 0o640, false},
	} {
		dir := filepath.Join(t.TempDir(), "keys")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "k.key")
		if err := os.WriteFile(path, []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.file); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, c.dir); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if why, _ := flagFileProblem(fi, path); (why == "") != c.ok {
			t.Errorf("file %04o in directory %04o: %q, want ok=%v", c.file, c.dir, why, c.ok)
		}
	}
}

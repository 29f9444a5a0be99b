//go:build unix

package server

import (
	"io/fs"
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

//go:build unix

package server

import "io/fs"

// privateBits are the permission bits a private file or directory must
// not have: any access by group or others (as ssh requires of keys).
const privateBits fs.FileMode = 0o077

// openToOthers reports whether mode lets group or others at the file.
func openToOthers(mode fs.FileMode) bool { return mode.Perm()&privateBits != 0 }

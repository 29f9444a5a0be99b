//go:build !unix

package server

import "io/fs"

// openToOthers is false where permission bits do not say who may read a
// file (Windows uses ACLs, which platd does not inspect).
func openToOthers(fs.FileMode) bool { return false }

//go:build !linux

package bolt

// prefault leaves the pages of b to be faulted in as they are written.
func prefault(b []byte) {}

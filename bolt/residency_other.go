//go:build !linux

package bolt

// dropPages is a no-op where the residency of mapped pages is left to the
// operating system.
func dropPages(addr, n uintptr) error { return nil }

//go:build !unix

package security

// syncDir is a no-op where directories cannot be synced; the rename is
// still atomic.
func syncDir(string) error { return nil }

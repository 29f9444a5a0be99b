//go:build !unix

package bolt

// syncDir does nothing where a directory cannot be synced; the rename's
// durability is left to the file system.
func syncDir(string) error { return nil }

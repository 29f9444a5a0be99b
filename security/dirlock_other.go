//go:build !unix

package security

// LockDir is a no-op where directories cannot be locked: servers sharing
// a key directory must then be started one after the other.
func LockDir(dir string) (unlock func(), err error) { return func() {}, nil }

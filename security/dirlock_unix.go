//go:build unix

package security

import (
	"os"
	"syscall"
)

// LockDir holds an exclusive lock on dir until the returned function is
// called, so that servers started together on one key directory (replicas
// on one host) create its key material once instead of each writing its
// own over the others'. A file system without locks is used unlocked.
func LockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		d.Close()
		return func() {}, nil
	}
	return func() {
		_ = syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}, nil
}

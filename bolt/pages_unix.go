//go:build unix

package bolt

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often lockShared retries a lock held by another process.
const lockPoll = 50 * time.Millisecond

// lockShared takes a shared lock on f (released when f is closed), as a
// read-only bbolt open does: it waits up to timeout for a process holding
// the exclusive lock (a running server), then fails with ErrLocked.
func lockShared(f *os.File, timeout time.Duration) error {
	return lockFile(f, syscall.LOCK_SH, timeout)
}

// lockExclusive is lockShared for a writer: it also waits for readers.
func lockExclusive(f *os.File, timeout time.Duration) error {
	return lockFile(f, syscall.LOCK_EX, timeout)
}

func lockFile(f *os.File, how int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s", ErrLocked, f.Name())
		}
		time.Sleep(lockPoll)
	}
}

// mapFile maps the first size bytes of f read-only; release unmaps them.
func mapFile(f *os.File, size int64) (data []byte, release func(), err error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%w: file of %d bytes", ErrCorrupt, size)
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}

//go:build !unix

package bolt

import (
	"fmt"
	"io"
	"os"
	"time"
)

// lockShared does nothing here: bbolt's own lock, taken next, reports a
// file held by another process.
func lockShared(*os.File, time.Duration) error { return nil }

// lockExclusive does nothing here, as lockShared.
func lockExclusive(*os.File, time.Duration) error { return nil }

// mapFile reads the first size bytes of f.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return data, func() {}, nil
}

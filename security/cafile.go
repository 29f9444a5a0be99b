package security

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// caRecheckInterval bounds how often a CA bundle file is stat-ed: a
// rotated CA takes effect within a second, and a burst of requests costs
// no I/O.
const caRecheckInterval = time.Second

// CAFile is a CA bundle file re-read when its modification time or size
// changes. A new content without certificates is logged and the previous
// bundle stays in force. Safe for concurrent use.
type CAFile struct {
	path     string
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	pool    *x509.CertPool
	pem     []byte
	stamp   fileStamp
	checked time.Time
}

// LoadCAFile reads the bundle at path, which must hold a certificate now
// (else an error wrapping ErrNoCertificates).
func LoadCAFile(path string) (*CAFile, error) {
	f := &CAFile{path: path, interval: caRecheckInterval, now: time.Now}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := f.load(fileStamp{mod: fi.ModTime(), size: fi.Size()}); err != nil {
		return nil, err
	}
	return f, nil
}

// load reads the file; the caller holds mu or owns f exclusively.
func (f *CAFile) load(stamp fileStamp) error {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("%s: %w", f.path, ErrNoCertificates)
	}
	f.pool, f.pem, f.stamp = pool, data, stamp
	return nil
}

// Pool returns the current bundle as a pool; the same pointer until the
// file changes. The caller must not modify it.
func (f *CAFile) Pool() *x509.CertPool {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if now.Sub(f.checked) < f.interval {
		return f.pool
	}
	f.checked = now
	fi, err := os.Stat(f.path)
	if err != nil {
		return f.pool
	}
	stamp := fileStamp{mod: fi.ModTime(), size: fi.Size()}
	if stamp.same(f.stamp) {
		return f.pool
	}
	old := f.pem
	if err := f.load(stamp); err != nil {
		slog.Warn("CA bundle reload failed; the previous bundle stays in force", "file", f.path, "err", err)
		f.stamp = stamp
		return f.pool
	}
	if !bytes.Equal(old, f.pem) {
		slog.Info("CA bundle reloaded", "file", f.path)
	}
	return f.pool
}

// PEM returns the bundle's current content. The caller must not modify it.
func (f *CAFile) PEM() []byte {
	f.Pool()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pem
}

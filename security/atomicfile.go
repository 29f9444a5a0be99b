package security

import (
	"fmt"
	"os"
	"path/filepath"
)

// File modes of written key material: private keys and kubeconfigs (which
// embed a key) are readable by the owner only; certificates are public.
const (
	privateFileMode os.FileMode = 0o600
	publicFileMode  os.FileMode = 0o644
	keyDirMode      os.FileMode = 0o700
)

// writeFileAtomic replaces path with data so that a reader, or a restart
// after a crash, sees either the old content or the new, never a part: the
// bytes go to a temporary file in the same directory, are synced, and the
// file is renamed over path.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, keyDirMode); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

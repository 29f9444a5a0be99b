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
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := stageFile(path, data, mode)
	if err != nil {
		return err
	}
	return f.Commit()
}

// StagedFile is the first half of an atomic write: the new content,
// synced in a temporary file beside the path it will replace. Exactly one
// of Commit and Discard must be called.
type StagedFile struct{ tmp, path string }

func stageFile(path string, data []byte, mode os.FileMode) (_ *StagedFile, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, keyDirMode); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	return &StagedFile{tmp: tmp.Name(), path: path}, nil
}

// Commit renames the staged content over its path and syncs the directory.
func (f *StagedFile) Commit() error {
	if err := os.Rename(f.tmp, f.path); err != nil {
		os.Remove(f.tmp)
		return err
	}
	return syncDir(filepath.Dir(f.path))
}

// Discard removes the staged content; the path keeps what it had.
func (f *StagedFile) Discard() { os.Remove(f.tmp) }

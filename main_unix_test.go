//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A token file others may read stops platd with exit 2 and the chmod to
// run, and leaves no data directory (permission bits say nothing on
// Windows).
func TestOpenTokenFileRefusedAtStart(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "open-tokens.csv")
	if err := os.WriteFile(tokens, []byte("ok,bob,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokens, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	err := serveApp(context.Background(), "serve", "--data-dir", dir, "--secure-port", "0", "--token-auth-file", tokens)
	want := "invalid configuration: --token-auth-file " + tokens + " has mode 0644: group or others may read or change it, and it holds secrets; make it private to platd's user: chmod 600 " + tokens
	if code := exitCode(err); code != 2 || err == nil || err.Error() != want {
		t.Errorf("exit %d, error %v; want exit 2 and %q", code, err, want)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Error("the data directory was created")
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"platd/config"
)

// --watch-history-max-bytes: its default, the flag, the environment and
// the --config file, and a value that is not a number.
func TestWatchHistoryMaxBytesFlag(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir)
	if err != nil || o.WatchHistoryMaxBytes != config.DefaultWatchHistoryMaxBytes {
		t.Errorf("default: %d %v", o.WatchHistoryMaxBytes, err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--watch-history-max-bytes", "-1")
	if err != nil || o.WatchHistoryMaxBytes != -1 {
		t.Errorf("flag: %d %v", o.WatchHistoryMaxBytes, err)
	}
	file := filepath.Join(t.TempDir(), "platd.yaml")
	if err := os.WriteFile(file, []byte("watch-history-max-bytes: 1048576\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file)
	if err != nil || o.WatchHistoryMaxBytes != 1<<20 {
		t.Errorf("file: %d %v", o.WatchHistoryMaxBytes, err)
	}
	t.Setenv("PLATD_WATCH_HISTORY_MAX_BYTES", "2097152")
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file)
	if err != nil || o.WatchHistoryMaxBytes != 2<<20 {
		t.Errorf("environment over file: %d %v", o.WatchHistoryMaxBytes, err)
	}
	_, err = parse(t, "serve", "--data-dir", dir, "--watch-history-max-bytes", "64Mi")
	if err == nil || !strings.Contains(err.Error(), `--watch-history-max-bytes "64Mi": want an integer`) {
		t.Errorf("not a number: %v", err)
	}
}

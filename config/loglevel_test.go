package config

import (
	"errors"
	"log/slog"
	"testing"
)

func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "WARN": slog.LevelWarn, "warning": slog.LevelWarn, " error ": slog.LevelError} {
		if got, err := ParseLogLevel(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	_, err := ParseLogLevel("verbose")
	if !errors.Is(err, ErrInvalid) || err.Error() != `invalid configuration: --log-level "verbose": must be one of debug, info, warn, error` {
		t.Errorf("bad level: %v", err)
	}
}

package config

import (
	"fmt"
	"log/slog"
	"strings"
)

// LogLevels are the values of --log-level, most verbose first.
var LogLevels = []string{"debug", "info", "warn", "error"}

// ParseLogLevel reads a --log-level value.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%w: --log-level %q: must be one of %s", ErrInvalid, s, strings.Join(LogLevels, ", "))
}

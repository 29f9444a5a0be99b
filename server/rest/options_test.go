package rest

import (
	"net/url"
	"strings"
	"testing"

	"platd/config"
	"platd/server/registry"
)

// The WatchList gate decides whether a watch may ask for initial events.
func TestSendInitialEventsGate(t *testing.T) {
	br, _ := config.LookupBrand("plat")
	q := url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}}
	const want = "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
	for _, disabled := range []bool{false, true} {
		h := New(Config{Registry: registry.New(), Brand: br, WatchListDisabled: disabled})
		_, err := h.parseListOptions(q, true)
		switch {
		case !disabled && err != nil:
			t.Errorf("gate on: %v", err)
		case disabled && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("gate off: error %v, want %q", err, want)
		}
	}
}

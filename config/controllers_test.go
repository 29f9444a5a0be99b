package config

import (
	"strings"
	"testing"
)

func TestControllers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		list      []string
		on, off   []string
		wantError string
	}{
		{list: nil, on: ControllerNames()},
		{list: []string{"*"}, on: ControllerNames()},
		{list: []string{"*", "-" + ControllerRootCA}, on: []string{ControllerNamespace}, off: []string{ControllerRootCA}},
		{list: []string{ControllerNamespace}, on: []string{ControllerNamespace}, off: []string{ControllerRootCA}},
		{list: []string{"*", "-nope"}, wantError: `--controllers: unknown controller "-nope"`},
	} {
		o := Options{DataDir: "d", BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, HistoryRetention: 1, Controllers: c.list}
		err := o.Validate()
		if c.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantError) {
				t.Errorf("%v: error %v, want %q", c.list, err, c.wantError)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.list, err)
		}
		for _, n := range c.on {
			if !o.ControllerEnabled(n) {
				t.Errorf("%v: %s off", c.list, n)
			}
		}
		for _, n := range c.off {
			if o.ControllerEnabled(n) {
				t.Errorf("%v: %s on", c.list, n)
			}
		}
	}
}

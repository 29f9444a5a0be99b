package main

import "testing"

func TestEnableBootstrapTokenAuthFlag(t *testing.T) {
	dir := t.TempDir()
	for args, want := range map[string]bool{"": false, "--enable-bootstrap-token-auth": true, "--enable-bootstrap-token-auth=false": false} {
		argv := []string{"serve", "--data-dir", dir}
		if args != "" {
			argv = append(argv, args)
		}
		o, err := parse(t, argv...)
		if err != nil || o.EnableBootstrapTokenAuth != want {
			t.Errorf("%q: EnableBootstrapTokenAuth=%v (%v), want %v", args, o.EnableBootstrapTokenAuth, err, want)
		}
	}
}

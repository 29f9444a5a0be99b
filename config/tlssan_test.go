package config

import (
	"slices"
	"testing"
)

func TestValidateTLSSANs(t *testing.T) {
	ok := []string{"a.example", "api.example.com", "*.example.com", "localhost", "10.0.0.9", "::1", "x-1.Example.COM"}
	if errs := validateTLSSANs(ok); len(errs) != 0 {
		t.Errorf("valid names refused: %q", errs)
	}
	for _, bad := range []string{"a..b", "", "-a.example", "a-.example", "a_b.example", "*", "a.*.example", "http://a.example", "a.example:6443"} {
		want := []string{`--tls-san "` + bad + `": want a DNS name such as api.example.com (or *.example.com) or an IP address`}
		if got := validateTLSSANs([]string{bad}); !slices.Equal(got, want) {
			t.Errorf("%q: %q", bad, got)
		}
	}
}

func FuzzValidateTLSSANs(f *testing.F) {
	for _, s := range []string{"a.example", "*.x", "1.2.3.4", "a..b", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(validateTLSSANs([]string{s})) > 1 {
			t.Errorf("%q: more than one error", s)
		}
	})
}

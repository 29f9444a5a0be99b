package rest

import (
	"strings"
	"testing"
)

func TestProxiedName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"web": "web", "web:80": "web", "https:web:443": "web", "http:web:": "web", ":web:8080": "web"} {
		if got, ok := proxiedName(in); !ok || got != want {
			t.Errorf("%q: %q %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", ":80", "ftp:web:21", "a:b:c:d", "https::443"} {
		if got, ok := proxiedName(bad); ok {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

func FuzzProxiedName(f *testing.F) {
	for _, s := range []string{"web", "web:80", "https:web:443", "::", "a:b:c:d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if name, ok := proxiedName(s); ok && (name == "" || strings.Contains(name, ":") || !strings.Contains(s, name)) {
			t.Fatalf("%q gave name %q", s, name)
		}
	})
}

package builtin

import (
	"net"
	"strings"
	"testing"
)

func TestParseIPSloppy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"10.0.0.1", "10.0.0.1"},
		{"010.001.0.01", "10.1.0.1"},
		{"2001:db8::1", "2001:db8::1"},
		{"::ffff:10.0.0.1", "10.0.0.1"},
		{"256.0.0.1", ""},
		{"1.2.3", ""},
		{"1.2.3.4.5", ""},
		{"1.2.3.-4", ""},
		{"1.2.3.+4", ""},
		{"", ""},
		{"a.b.c.d", ""},
	}
	for _, tt := range tests {
		got := ""
		if ip := parseIPSloppy(tt.in); ip != nil {
			got = ip.String()
		}
		if got != tt.want {
			t.Errorf("parseIPSloppy(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseCIDRSloppy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"010.0.0.0/08", "10.0.0.0/8"},
		{"2001:db8::/32", "2001:db8::/32"},
		{"0.0.0.0/0", "0.0.0.0/0"},
		{"10.0.0.0/33", ""},
		{"2001:db8::/129", ""},
		{"10.0.0.0", ""},
		{"10.0.0.0/", ""},
		{"10.0.0.0/-1", ""},
		{"10.0.0.0/+8", ""},
	}
	for _, tt := range tests {
		got := ""
		if n, ok := parseCIDRSloppy(tt.in); ok {
			got = n.String()
		}
		if got != tt.want {
			t.Errorf("parseCIDRSloppy(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParseSloppy checks that the lenient parsers never fail where the
// strict ones succeed and agree with them on what they return.
func FuzzParseSloppy(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "010.0.0.1", "::1", "1.2.3.4/24", "2001:db8::/64", "1.2.3.4/033", "", "/", "1..2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ip := parseIPSloppy(s)
		if std := net.ParseIP(s); std != nil && !std.Equal(ip) {
			t.Errorf("parseIPSloppy(%q) = %v, net.ParseIP = %v", s, ip, std)
		}
		n, ok := parseCIDRSloppy(s)
		if _, std, err := net.ParseCIDR(s); err == nil {
			if !ok || n.String() != std.String() {
				t.Errorf("parseCIDRSloppy(%q) = %v %v, net.ParseCIDR = %v", s, n, ok, std)
			}
		}
	})
}

func TestIsDomainPrefixedPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"example.com/ingress", 0},
		{"example.com/a/b~c", 0},
		{"", 1},
		{"/a", 1},
		{"a/", 1},
		{"EXAMPLE/a", 1},
		{"example.com/a b", 1},
	}
	for _, tt := range tests {
		if got := isDomainPrefixedPath("p", tt.in); len(got) != tt.want {
			t.Errorf("isDomainPrefixedPath(%q) = %v", tt.in, got)
		}
	}
}

func TestIsValidPortName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"http", nil},
		{"h2c-9", nil},
		{strings.Repeat("a", 16), []string{"must be no more than 15 characters"}},
		{"-", []string{"must contain at least one letter (a-z)", "must not begin or end with a hyphen"}},
		{"", []string{
			"must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
			"must contain at least one letter (a-z)",
		}},
	}
	for _, tt := range tests {
		if got := isValidPortName(tt.in); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("isValidPortName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

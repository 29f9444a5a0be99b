package config

import (
	"strings"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string]PortRange{
		"30000-32767": {30000, 2768},
		"30000+100":   {30000, 101},
		"8080":        {8080, 1},
		" 1-65535 ":   {1, 65535},
	} {
		got, err := ParsePortRange(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a-b", "0-10", "10-5", "1-65536", "30000+40000", "-1", "1--2", "01-5", "1-2-3"} {
		if r, err := ParsePortRange(bad); err == nil {
			t.Errorf("%q accepted as %v", bad, r)
		}
	}
}

func TestParseServiceCIDR(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.0/24": "10.0.0.0/24", "10.96.0.5/12": "10.96.0.0/12", "fd00::/108": "fd00::/108"} {
		got, err := ParseServiceCIDR(in)
		if err != nil || got.String() != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for in, msg := range map[string]string{
		"10.0.0.0/8":              "10.0.0.0/8 is too large; for 32-bit addresses, the mask must be >= 12",
		"10.0.0.0/31":             "too small",
		"10.0.0.1":                "is not a CIDR",
		"fd00::/64":               "the mask must be >= 108",
		"nonsense/24x":            "is not a CIDR",
		"::ffff:10.0.0.0/120":     "IPv4-mapped",
		"10.0.0.0/24,fd00::/108":  `"10.0.0.0/24,fd00::/108": dual-stack service ranges are not supported by platd; give one CIDR, such as 10.0.0.0/24`,
		"fd00::/108, 10.0.0.0/24": "dual-stack service ranges are not supported by platd",
		"10.0.0.0/24,":            "dual-stack service ranges are not supported by platd",
	} {
		if _, err := ParseServiceCIDR(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", in, err, msg)
		}
	}
}

func TestServiceRangeFlags(t *testing.T) {
	o := Options{DataDir: "d", BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, HistoryRetention: 1,
		ServiceClusterIPRange: "10.0.0.0/33", ServiceNodePortRange: "5-1"}
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), "--service-cluster-ip-range: ") || !strings.Contains(err.Error(), "--service-node-port-range: ") {
		t.Fatalf("bad ranges: %v", err)
	}
	o.ServiceClusterIPRange, o.ServiceNodePortRange = "", ""
	if err := o.Validate(); err != nil || o.ServiceCIDR.String() != DefaultServiceClusterIPRange || o.NodePorts != (PortRange{30000, 2768}) {
		t.Fatalf("defaults: %v %v %v", err, o.ServiceCIDR, o.NodePorts)
	}
}

func FuzzParseRanges(f *testing.F) {
	for _, s := range []string{"30000-32767", "1+5", "80", "10.0.0.0/24", "fd00::/120", "-", "+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := ParsePortRange(s); err == nil && (r.Base < 1 || r.Size < 1 || r.Base+r.Size-1 > 65535) {
			t.Fatalf("%q parsed to %v", s, r)
		}
		if p, err := ParseServiceCIDR(s); err == nil && (!p.IsValid() || p.Addr().Is4In6() || p.Addr().BitLen()-p.Bits() > maxServiceCIDRHostBits || p.Addr().BitLen()-p.Bits() < 2) {
			t.Fatalf("%q parsed to %v", s, p)
		}
	})
}

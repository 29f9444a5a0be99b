package server

import (
	"net/netip"
	"testing"
)

func TestAdvertiseAddress(t *testing.T) {
	t.Parallel()
	if a, err := advertiseAddress("192.0.2.5", "127.0.0.1", false); err != nil || a != netip.MustParseAddr("192.0.2.5") {
		t.Errorf("configured: %v %v", a, err)
	}
	if _, err := advertiseAddress("nope", "127.0.0.1", false); err == nil {
		t.Error("a bad configured address was taken")
	}
	if a, err := advertiseAddress("", "198.51.100.7", false); err != nil || a != netip.MustParseAddr("198.51.100.7") {
		t.Errorf("bind address: %v %v", a, err)
	}
	// Loopback and unspecified bind addresses fall back to an interface's,
	// which is never loopback.
	for _, bind := range []string{"127.0.0.1", "0.0.0.0", "::"} {
		a, err := advertiseAddress("", bind, false)
		if err == nil && !usable(a) {
			t.Errorf("bind %s: advertised %v", bind, a)
		}
		if err != nil && err != errNoAdvertiseAddress {
			t.Errorf("bind %s: %v", bind, err)
		}
	}
	for _, a := range []string{"127.0.0.1", "::1", "0.0.0.0", "169.254.1.1", "fe80::1", "224.0.0.1"} {
		if usable(netip.MustParseAddr(a)) {
			t.Errorf("%s is usable", a)
		}
	}
}

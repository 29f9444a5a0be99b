package pool

import (
	"errors"
	"net/netip"
	"testing"
)

func TestIPRange(t *testing.T) {
	for _, tc := range []struct {
		cidr        string
		size        uint64
		first, last string
	}{
		{"10.0.0.0/24", 254, "10.0.0.1", "10.0.0.254"},
		{"10.0.0.7/24", 254, "10.0.0.1", "10.0.0.254"},
		{"192.168.0.0/30", 2, "192.168.0.1", "192.168.0.2"},
		{"10.96.0.0/12", 1<<20 - 2, "10.96.0.1", "10.111.255.254"},
		{"fd00::/120", 255, "fd00::1", "fd00::ff"},
		{"fd00::/64", 65535, "fd00::1", "fd00::ffff"},
	} {
		r, err := NewIPRange(netip.MustParsePrefix(tc.cidr))
		if err != nil {
			t.Fatalf("%s: %v", tc.cidr, err)
		}
		if r.Size() != tc.size || r.At(0).String() != tc.first || r.At(r.Size()-1).String() != tc.last {
			t.Errorf("%s: size %d first %s last %s", tc.cidr, r.Size(), r.At(0), r.At(r.Size()-1))
		}
		if off, ok := r.Offset(netip.MustParseAddr(tc.last)); !ok || off != tc.size-1 {
			t.Errorf("%s: offset of %s = %d %v", tc.cidr, tc.last, off, ok)
		}
	}
	r, _ := NewIPRange(netip.MustParsePrefix("10.0.0.0/24"))
	for _, out := range []string{"10.0.0.0", "10.0.0.255", "10.0.1.1", "fd00::1"} {
		if _, ok := r.Offset(netip.MustParseAddr(out)); ok {
			t.Errorf("%s is in %s", out, r)
		}
	}
	for _, bad := range []string{"10.0.0.0/31", "10.0.0.0/32", "fd00::/127"} {
		if _, err := NewIPRange(netip.MustParsePrefix(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestPortRange(t *testing.T) {
	r := PortRange{Base: 30000, Size: 2768}
	if r.String() != "30000-32767" || !r.Contains(30000) || !r.Contains(32767) || r.Contains(32768) || r.Contains(29999) {
		t.Errorf("range %s", r)
	}
}

func TestPick(t *testing.T) {
	held := map[uint64]bool{}
	taken := func(i uint64) bool { return held[i] }
	const size = 300
	// The first picks come from above the static band (size/16 = 18).
	for range 100 {
		i, err := Pick(size, taken)
		if err != nil {
			t.Fatal(err)
		}
		if held[i] || i >= size {
			t.Fatalf("picked %d twice or out of range", i)
		}
		if i < 18 {
			t.Fatalf("picked %d in the static band while others were free", i)
		}
		held[i] = true
	}
	for len(held) < size {
		i, err := Pick(size, taken)
		if err != nil || held[i] {
			t.Fatalf("pick %d: %v", i, err)
		}
		held[i] = true
	}
	if _, err := Pick(size, taken); !errors.Is(err, ErrFull) {
		t.Fatalf("full range: %v", err)
	}
	if i, err := Pick(3, func(i uint64) bool { return i != 2 }); err != nil || i != 2 {
		t.Fatalf("small range pick %d %v", i, err)
	}
	if _, err := Pick(0, taken); !errors.Is(err, ErrFull) {
		t.Fatal("empty range")
	}
}

func FuzzIPRange(f *testing.F) {
	f.Add([]byte{10, 0, 0, 0}, uint8(24), uint64(7))
	f.Add([]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint8(48), uint64(65534))
	f.Fuzz(func(t *testing.T, raw []byte, bits uint8, i uint64) {
		a, ok := netip.AddrFromSlice(raw)
		if !ok {
			return
		}
		p, err := a.Prefix(int(bits))
		if err != nil {
			return
		}
		r, err := NewIPRange(p)
		if err != nil {
			return
		}
		i %= r.Size()
		at := r.At(i)
		if off, ok := r.Offset(at); !ok || off != i || !p.Contains(at) {
			t.Fatalf("%s: At(%d) = %s, Offset = %d %v", p, i, at, off, ok)
		}
	})
}

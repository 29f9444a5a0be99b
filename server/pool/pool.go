// Package pool describes ranges of values handed out one per object (a
// service's cluster IP, a node port) and picks free values in them. It keeps
// no state: who holds a value is the caller's to say, through a membership
// test, so the record of allocations can live in the same storage
// transaction as the objects holding them.
package pool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
)

// ErrFull is returned when no value of a range is free.
var ErrFull = errors.New("range is full")

// maxIPv6Size caps the offsets of an IPv6 range, as upstream does: larger
// ranges gain nothing but scan time.
const maxIPv6Size = 1 << 16

// Static band bounds: dynamic allocation prefers values above the first
// band of a range, so values picked by hand in it rarely collide (upstream's
// static subrange). The band is size/16, at least minBand and at most maxBand.
const (
	minBand = 16
	maxBand = 256
)

// IPRange is the usable addresses of a CIDR: the network address is never
// handed out, nor the broadcast address of an IPv4 network.
type IPRange struct {
	prefix netip.Prefix
	first  netip.Addr
	size   uint64
}

// NewIPRange describes the addresses of p.
func NewIPRange(p netip.Prefix) (*IPRange, error) {
	if !p.IsValid() {
		return nil, fmt.Errorf("invalid CIDR %q", p)
	}
	if p.Addr().Is4In6() {
		return nil, fmt.Errorf("CIDR %s is an IPv4-mapped IPv6 range: write the IPv4 range", p)
	}
	p = p.Masked()
	hostBits := p.Addr().BitLen() - p.Bits()
	var size uint64
	switch {
	case p.Addr().Is4():
		total := uint64(1) << hostBits
		if total < 4 {
			return nil, fmt.Errorf("CIDR %s is too small: at least 2 usable addresses are needed", p)
		}
		size = total - 2
	default:
		if hostBits < 2 {
			return nil, fmt.Errorf("CIDR %s is too small: at least 2 usable addresses are needed", p)
		}
		// The network address is skipped; an IPv6 network has no
		// broadcast address.
		size = maxIPv6Size - 1
		if hostBits < 16 {
			size = (uint64(1) << hostBits) - 1
		}
	}
	return &IPRange{prefix: p, first: p.Addr().Next(), size: size}, nil
}

// Size is the number of usable addresses.
func (r *IPRange) Size() uint64 { return r.size }

// String is the CIDR.
func (r *IPRange) String() string { return r.prefix.String() }

// Prefix is the CIDR.
func (r *IPRange) Prefix() netip.Prefix { return r.prefix }

// Is6 reports whether the range holds IPv6 addresses.
func (r *IPRange) Is6() bool { return r.prefix.Addr().Is6() }

// At returns the address at offset i (i < Size()).
func (r *IPRange) At(i uint64) netip.Addr {
	hi, lo := split(r.first)
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo+i)
	a := netip.AddrFrom16(b)
	if r.first.Is4() {
		a = a.Unmap()
	}
	return a
}

// Offset returns the offset of a, and false when a is not a usable address
// of the range.
func (r *IPRange) Offset(a netip.Addr) (uint64, bool) {
	a = a.Unmap()
	if a.Is4() != r.first.Is4() || !r.prefix.Contains(a) {
		return 0, false
	}
	// The first address starts an aligned block and usable offsets stay
	// inside it and under 2^32: they never carry into the high half.
	ahi, alo := split(a)
	fhi, flo := split(r.first)
	if ahi != fhi || alo < flo || alo-flo >= r.size {
		return 0, false
	}
	return alo - flo, true
}

// split returns the high and low 64 bits of an address in its 16-byte
// form.
func split(a netip.Addr) (hi, lo uint64) {
	b := a.As16()
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// PortRange is the ports Base..Base+Size-1.
type PortRange struct {
	Base, Size int
}

// String is "first-last", as messages name it.
func (r PortRange) String() string {
	return strconv.Itoa(r.Base) + "-" + strconv.Itoa(r.Base+r.Size-1)
}

// Contains reports whether port is in the range.
func (r PortRange) Contains(port int64) bool {
	return port >= int64(r.Base) && port < int64(r.Base)+int64(r.Size)
}

// Pick returns a free offset of a range of size values, given taken, which
// reports whether an offset is held. Values above the static band are tried
// first, from a random start, then the band itself.
func Pick(size uint64, taken func(offset uint64) bool) (uint64, error) {
	if size == 0 {
		return 0, ErrFull
	}
	band := min(max(size/16, minBand), maxBand)
	if band >= size {
		band = 0
	}
	if i, ok := scan(band, size, taken); ok {
		return i, nil
	}
	if i, ok := scan(0, band, taken); ok {
		return i, nil
	}
	return 0, ErrFull
}

// scan looks at every offset of [lo, hi) once, from a random one on.
func scan(lo, hi uint64, taken func(uint64) bool) (uint64, bool) {
	n := hi - lo
	if n == 0 {
		return 0, false
	}
	start := rand.Uint64N(n)
	for k := uint64(0); k < n; k++ {
		i := lo + (start+k)%n
		if !taken(i) {
			return i, true
		}
	}
	return 0, false
}

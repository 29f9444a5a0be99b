package cel

import (
	"fmt"
	"net/netip"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The CEL types of ip(...) and cidr(...) values.
var (
	ipType   = cel.ObjectType("net.IP")
	cidrType = cel.ObjectType("net.CIDR")
)

type ipVal struct{ a netip.Addr }
type cidrVal struct{ p netip.Prefix }

func (v ipVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf("").AssignableTo(t) {
		return v.a.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'IP' to '%v'", t)
}
func (v ipVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case ipType:
		return v
	case types.StringType:
		return types.String(v.a.String())
	case types.TypeType:
		return ipType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", ipType, t)
}
func (v ipVal) Equal(o ref.Val) ref.Val { w, ok := o.(ipVal); return types.Bool(ok && v.a == w.a) }
func (v ipVal) Type() ref.Type          { return ipType }
func (v ipVal) Value() any              { return v.a }

func (v cidrVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf("").AssignableTo(t) {
		return v.p.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'CIDR' to '%v'", t)
}
func (v cidrVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case cidrType:
		return v
	case types.StringType:
		return types.String(v.p.String())
	case types.TypeType:
		return cidrType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", cidrType, t)
}
func (v cidrVal) Equal(o ref.Val) ref.Val { w, ok := o.(cidrVal); return types.Bool(ok && v.p == w.p) }
func (v cidrVal) Type() ref.Type          { return cidrType }
func (v cidrVal) Value() any              { return v.p }

// parseIP reads an IP address; zones and IPv4-mapped IPv6 addresses are
// refused, as upstream.
func parseIP(raw string) (netip.Addr, error) {
	a, err := netip.ParseAddr(raw)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("IP Address %q parse error during conversion from string: %v", raw, err)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("IP address %q with zone value is not allowed", raw)
	}
	if a.Is4In6() {
		return netip.Addr{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return a, nil
}

func parseCIDR(raw string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(raw)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return p, nil
}

func strArg(v ref.Val, f func(string) ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	return f(string(s))
}

func netLib() cel.EnvOption {
	ipFn := func(name, id string, res *cel.Type, f func(netip.Addr) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{ipType}, res, cel.UnaryBinding(func(v ref.Val) ref.Val {
			a, ok := v.(ipVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(a.a)
		})))
	}
	ipBool := func(name, id string, f func(netip.Addr) bool) cel.EnvOption {
		return ipFn(name, id, cel.BoolType, func(a netip.Addr) ref.Val { return types.Bool(f(a)) })
	}
	cidrOf := func(v ref.Val) (netip.Prefix, bool) { c, ok := v.(cidrVal); return c.p, ok }
	return cel.Lib(libOf(
		cel.Function("ip",
			cel.Overload("string_to_ip", []*cel.Type{cel.StringType}, ipType, cel.UnaryBinding(func(v ref.Val) ref.Val {
				return strArg(v, func(s string) ref.Val {
					a, err := parseIP(s)
					if err != nil {
						return types.WrapErr(err)
					}
					return ipVal{a}
				})
			})),
			cel.MemberOverload("cidr_ip", []*cel.Type{cidrType}, ipType, cel.UnaryBinding(func(v ref.Val) ref.Val {
				p, ok := cidrOf(v)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				return ipVal{p.Addr()}
			}))),
		cel.Function("isIP", cel.Overload("is_ip", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			return strArg(v, func(s string) ref.Val { _, err := parseIP(s); return types.Bool(err == nil) })
		}))),
		cel.Function("ip.isCanonical", cel.Overload("ip_is_canonical", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			return strArg(v, func(s string) ref.Val {
				a, err := parseIP(s)
				if err != nil {
					return types.WrapErr(err)
				}
				return types.Bool(a.String() == s)
			})
		}))),
		ipFn("family", "ip_family", cel.IntType, func(a netip.Addr) ref.Val {
			if a.Is4() {
				return types.Int(4)
			}
			return types.Int(6)
		}),
		ipBool("isUnspecified", "ip_is_unspecified", netip.Addr.IsUnspecified),
		ipBool("isLoopback", "ip_is_loopback", netip.Addr.IsLoopback),
		ipBool("isLinkLocalMulticast", "ip_is_link_local_multicast", netip.Addr.IsLinkLocalMulticast),
		ipBool("isLinkLocalUnicast", "ip_is_link_local_unicast", netip.Addr.IsLinkLocalUnicast),
		ipBool("isGlobalUnicast", "ip_is_global_unicast", netip.Addr.IsGlobalUnicast),
		cel.Function("string",
			cel.Overload("ip_to_string", []*cel.Type{ipType}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val {
				return v.ConvertToType(types.StringType)
			})),
			cel.Overload("cidr_to_string", []*cel.Type{cidrType}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val {
				return v.ConvertToType(types.StringType)
			}))),
		cel.Function("cidr", cel.Overload("string_to_cidr", []*cel.Type{cel.StringType}, cidrType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			return strArg(v, func(s string) ref.Val {
				p, err := parseCIDR(s)
				if err != nil {
					// Upstream words the parse failure twice over here.
					return types.NewErr("network address parse error during conversion from string: %v", err)
				}
				return cidrVal{p}
			})
		}))),
		cel.Function("isCIDR", cel.Overload("is_cidr", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			return strArg(v, func(s string) ref.Val { _, err := parseCIDR(s); return types.Bool(err == nil) })
		}))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, cel.BinaryBinding(func(c, v ref.Val) ref.Val {
				p, ok := cidrOf(c)
				if !ok {
					return types.MaybeNoSuchOverloadErr(c)
				}
				return strArg(v, func(s string) ref.Val {
					a, err := parseIP(s)
					if err != nil {
						return types.WrapErr(err)
					}
					return types.Bool(p.Contains(a))
				})
			})),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{cidrType, ipType}, cel.BoolType, cel.BinaryBinding(func(c, v ref.Val) ref.Val {
				p, ok := cidrOf(c)
				a, ok2 := v.(ipVal)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(c)
				}
				return types.Bool(p.Contains(a.a))
			}))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, cel.BinaryBinding(func(c, v ref.Val) ref.Val {
				p, ok := cidrOf(c)
				if !ok {
					return types.MaybeNoSuchOverloadErr(c)
				}
				return strArg(v, func(s string) ref.Val {
					q, err := parseCIDR(s)
					if err != nil {
						return types.WrapErr(err)
					}
					return types.Bool(p.Bits() <= q.Bits() && p.Contains(q.Addr()))
				})
			})),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{cidrType, cidrType}, cel.BoolType, cel.BinaryBinding(func(c, v ref.Val) ref.Val {
				p, ok := cidrOf(c)
				q, ok2 := cidrOf(v)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(c)
				}
				return types.Bool(p.Bits() <= q.Bits() && p.Contains(q.Addr()))
			}))),
		cel.Function("masked", cel.MemberOverload("cidr_masked", []*cel.Type{cidrType}, cidrType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			p, ok := cidrOf(v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return cidrVal{p.Masked()}
		}))),
		cel.Function("prefixLength", cel.MemberOverload("cidr_prefix_length", []*cel.Type{cidrType}, cel.IntType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			p, ok := cidrOf(v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.Int(p.Bits())
		}))),
	))
}

// Size is the address length in bytes (the cost of comparing it).
func (v ipVal) Size() ref.Val { return types.Int((v.a.BitLen() + 7) / 8) }

// Size is the address length in bytes.
func (v cidrVal) Size() ref.Val { return types.Int((v.p.Addr().BitLen() + 7) / 8) }

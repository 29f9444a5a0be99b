package cel

import (
	"fmt"
	"math/big"
	"reflect"
	"strconv"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"platd/server/schema"
)

// quantityType is the CEL type of quantity(...) values.
var quantityType = cel.ObjectType("kubernetes.Quantity")

// quantityVal is a resource quantity held exactly.
type quantityVal struct {
	r    *big.Rat
	text string // canonical spelling
}

var siExp = map[string]int64{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
var binExp = map[string]uint{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

// parseQuantity reads a quantity spelling; the error is upstream's text.
func parseQuantity(s string) (quantityVal, error) {
	c, err := schema.CanonicalQuantity(s)
	if err != nil {
		return quantityVal{}, err
	}
	i := 0
	if i < len(c) && (c[i] == '-' || c[i] == '+') {
		i++
	}
	for i < len(c) && c[i] >= '0' && c[i] <= '9' {
		i++
	}
	mant, ok := new(big.Int).SetString(c[:i], 10)
	if !ok {
		return quantityVal{}, fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	}
	r := new(big.Rat).SetInt(mant)
	suffix := c[i:]
	switch {
	case binExp[suffix] > 0:
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), binExp[suffix])))
	case suffix != "" && (suffix[0] == 'e' || suffix[0] == 'E'):
		e, err := strconv.ParseInt(suffix[1:], 10, 32)
		if err != nil {
			return quantityVal{}, fmt.Errorf("unable to parse quantity's suffix")
		}
		scaleRat(r, e)
	default:
		e, ok := siExp[suffix]
		if !ok {
			return quantityVal{}, fmt.Errorf("unable to parse quantity's suffix")
		}
		scaleRat(r, e)
	}
	return quantityVal{r: r, text: c}, nil
}

func scaleRat(r *big.Rat, e int64) {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(e)), nil)
	if e >= 0 {
		r.Mul(r, new(big.Rat).SetInt(p))
	} else {
		r.Quo(r, new(big.Rat).SetInt(p))
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// quantityOf builds a value from an exact amount, spelled canonically in
// decimal SI (rounded up to 1n, as quantities are).
func quantityOf(r *big.Rat) quantityVal {
	nanos := new(big.Rat).Mul(r, new(big.Rat).SetInt64(1_000_000_000))
	n := new(big.Int).Quo(nanos.Num(), nanos.Denom())
	if new(big.Rat).SetInt(n).Cmp(nanos) != 0 && nanos.Sign() > 0 {
		n.Add(n, big.NewInt(1))
	}
	text, err := schema.CanonicalQuantity(n.String() + "n")
	if err != nil {
		text = r.FloatString(9)
	}
	return quantityVal{r: r, text: text}
}

func (q quantityVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf("").AssignableTo(t) {
		return q.text, nil
	}
	return nil, fmt.Errorf("type conversion error from 'Quantity' to '%v'", t)
}

func (q quantityVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case quantityType:
		return q
	case types.TypeType:
		return quantityType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", quantityType, t)
}

func (q quantityVal) Equal(o ref.Val) ref.Val {
	p, ok := o.(quantityVal)
	return types.Bool(ok && q.r.Cmp(p.r) == 0)
}
func (q quantityVal) Type() ref.Type { return quantityType }
func (q quantityVal) Value() any     { return q.text }

func (q quantityVal) asInt64() (int64, bool) {
	if !q.r.IsInt() || !q.r.Num().IsInt64() {
		return 0, false
	}
	return q.r.Num().Int64(), true
}

func quantityLib() cel.EnvOption {
	qa := func(v ref.Val) (quantityVal, bool) { q, ok := v.(quantityVal); return q, ok }
	unary := func(id string, res *cel.Type, f func(quantityVal) ref.Val) cel.FunctionOpt {
		return cel.MemberOverload(id, []*cel.Type{quantityType}, res, cel.UnaryBinding(func(v ref.Val) ref.Val {
			q, ok := qa(v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(q)
		}))
	}
	binary := func(id string, arg, res *cel.Type, f func(quantityVal, ref.Val) ref.Val) cel.FunctionOpt {
		return cel.MemberOverload(id, []*cel.Type{quantityType, arg}, res, cel.BinaryBinding(func(a, b ref.Val) ref.Val {
			q, ok := qa(a)
			if !ok {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return f(q, b)
		}))
	}
	other := func(f func(quantityVal, quantityVal) ref.Val) func(quantityVal, ref.Val) ref.Val {
		return func(q quantityVal, b ref.Val) ref.Val {
			p, ok := qa(b)
			if !ok {
				return types.MaybeNoSuchOverloadErr(b)
			}
			return f(q, p)
		}
	}
	withInt := func(f func(quantityVal, quantityVal) ref.Val) func(quantityVal, ref.Val) ref.Val {
		return func(q quantityVal, b ref.Val) ref.Val {
			n, ok := b.(types.Int)
			if !ok {
				return types.MaybeNoSuchOverloadErr(b)
			}
			return f(q, quantityVal{r: new(big.Rat).SetInt64(int64(n))})
		}
	}
	add := func(q, p quantityVal) ref.Val { return quantityOf(new(big.Rat).Add(q.r, p.r)) }
	sub := func(q, p quantityVal) ref.Val { return quantityOf(new(big.Rat).Sub(q.r, p.r)) }
	return cel.Lib(libOf(
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				s, ok := v.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				q, err := parseQuantity(string(s))
				if err != nil {
					return types.WrapErr(err)
				}
				return q
			}))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				s, ok := v.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				_, err := parseQuantity(string(s))
				return types.Bool(err == nil)
			}))),
		cel.Function("sign", unary("quantity_sign", cel.IntType, func(q quantityVal) ref.Val { return types.Int(q.r.Sign()) })),
		cel.Function("isInteger", unary("quantity_is_integer", cel.BoolType, func(q quantityVal) ref.Val {
			_, ok := q.asInt64()
			return types.Bool(ok)
		})),
		cel.Function("asInteger", unary("quantity_get_int", cel.IntType, func(q quantityVal) ref.Val {
			n, ok := q.asInt64()
			if !ok {
				return types.NewErr("cannot convert value to integer")
			}
			return types.Int(n)
		})),
		cel.Function("asApproximateFloat", unary("quantity_get_float", cel.DoubleType, func(q quantityVal) ref.Val {
			f, _ := q.r.Float64()
			return types.Double(f)
		})),
		cel.Function("isLessThan", binary("quantity_less", quantityType, cel.BoolType, other(func(q, p quantityVal) ref.Val {
			return types.Bool(q.r.Cmp(p.r) < 0)
		}))),
		cel.Function("isGreaterThan", binary("quantity_greater", quantityType, cel.BoolType, other(func(q, p quantityVal) ref.Val {
			return types.Bool(q.r.Cmp(p.r) > 0)
		}))),
		cel.Function("compareTo", binary("quantity_compare", quantityType, cel.IntType, other(func(q, p quantityVal) ref.Val {
			return types.Int(q.r.Cmp(p.r))
		}))),
		cel.Function("add",
			binary("quantity_add", quantityType, quantityType, other(add)),
			binary("quantity_add_int", cel.IntType, quantityType, withInt(add))),
		cel.Function("sub",
			binary("quantity_sub", quantityType, quantityType, other(sub)),
			binary("quantity_sub_int", cel.IntType, quantityType, withInt(sub))),
	))
}

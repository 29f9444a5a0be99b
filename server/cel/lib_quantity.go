package cel

import (
	"fmt"
	"math/big"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"platd/server/schema"
)

// quantityType is the CEL type of quantity(...) values.
var quantityType = cel.ObjectType("kubernetes.Quantity")

// quantityVal is a resource quantity held exactly. Its spelling is the
// canonical one of what quantity(...) read, and decimal SI for the result
// of arithmetic.
type quantityVal struct{ q schema.Amount }

// parseQuantity reads a quantity spelling; the error is upstream's text.
func parseQuantity(s string) (quantityVal, error) {
	q, err := schema.ParseAmount(s)
	if err != nil {
		return quantityVal{}, err
	}
	return quantityVal{q: q}, nil
}

// quantityOf is an amount of nanos spelled in decimal SI; nanos is kept.
func quantityOf(nanos *big.Int) quantityVal { return quantityVal{q: schema.NanoAmount(nanos)} }

// nanosPerUnit is 10^9, the nanos of 1; read only.
var nanosPerUnit = big.NewInt(1_000_000_000)

func (q quantityVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf("").AssignableTo(t) {
		return q.q.String(), nil
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
	return types.Bool(ok && q.q.Cmp(p.q) == 0)
}
func (q quantityVal) Type() ref.Type { return quantityType }
func (q quantityVal) Value() any     { return q.q.String() }

// asInt64 is the amount when it is an integer that fits 64 bits.
func (q quantityVal) asInt64() (int64, bool) {
	whole, rem := new(big.Int).QuoRem(q.q.Nanos(), nanosPerUnit, new(big.Int))
	if rem.Sign() != 0 || !whole.IsInt64() {
		return 0, false
	}
	return whole.Int64(), true
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
			return f(q, quantityOf(new(big.Int).Mul(big.NewInt(int64(n)), nanosPerUnit)))
		}
	}
	add := func(q, p quantityVal) ref.Val { return quantityOf(new(big.Int).Add(q.q.Nanos(), p.q.Nanos())) }
	sub := func(q, p quantityVal) ref.Val { return quantityOf(new(big.Int).Sub(q.q.Nanos(), p.q.Nanos())) }
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
		cel.Function("sign", unary("quantity_sign", cel.IntType, func(q quantityVal) ref.Val { return types.Int(q.q.Sign()) })),
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
			f, _ := new(big.Rat).SetFrac(q.q.Nanos(), nanosPerUnit).Float64()
			return types.Double(f)
		})),
		cel.Function("isLessThan", binary("quantity_less", quantityType, cel.BoolType, other(func(q, p quantityVal) ref.Val {
			return types.Bool(q.q.Cmp(p.q) < 0)
		}))),
		cel.Function("isGreaterThan", binary("quantity_greater", quantityType, cel.BoolType, other(func(q, p quantityVal) ref.Val {
			return types.Bool(q.q.Cmp(p.q) > 0)
		}))),
		cel.Function("compareTo", binary("quantity_compare", quantityType, cel.IntType, other(func(q, p quantityVal) ref.Val {
			return types.Int(q.q.Cmp(p.q))
		}))),
		cel.Function("add",
			binary("quantity_add", quantityType, quantityType, other(add)),
			binary("quantity_add_int", cel.IntType, quantityType, withInt(add))),
		cel.Function("sub",
			binary("quantity_sub", quantityType, quantityType, other(sub)),
			binary("quantity_sub_int", cel.IntType, quantityType, withInt(sub))),
	))
}

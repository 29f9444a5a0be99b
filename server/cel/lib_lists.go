package cel

import (
	"regexp"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// The lists, regex and URL libraries: upstream's function names,
// signatures and overload ids (the cost estimator keys on the names).

var (
	comparableTypes = []*cel.Type{cel.IntType, cel.UintType, cel.DoubleType, cel.BoolType,
		cel.DurationType, cel.TimestampType, cel.StringType, cel.BytesType}
	summableTypes = []*cel.Type{cel.IntType, cel.UintType, cel.DoubleType, cel.DurationType}
)

// shortName is a type's name in overload ids.
func shortName(t *cel.Type) string {
	switch t {
	case cel.DurationType:
		return "duration"
	case cel.TimestampType:
		return "timestamp"
	}
	return t.String()
}

func listsLib() cel.EnvOption {
	var opts []cel.EnvOption
	var sorted, sum, minO, maxO []cel.FunctionOpt
	for _, t := range comparableTypes {
		lt := cel.ListType(t)
		n := shortName(t)
		sorted = append(sorted, cel.MemberOverload("list_"+n+"_is_sorted_bool", []*cel.Type{lt}, cel.BoolType, cel.UnaryBinding(isSorted)))
		minO = append(minO, cel.MemberOverload("list_"+n+"_min_"+n, []*cel.Type{lt}, t, cel.UnaryBinding(listExtreme(-1, "min"))))
		maxO = append(maxO, cel.MemberOverload("list_"+n+"_max_"+n, []*cel.Type{lt}, t, cel.UnaryBinding(listExtreme(1, "max"))))
	}
	for _, t := range summableTypes {
		n := shortName(t)
		zero := zeroOf(t)
		sum = append(sum, cel.MemberOverload("list_"+n+"_sum_"+n, []*cel.Type{cel.ListType(t)}, t,
			cel.UnaryBinding(func(v ref.Val) ref.Val { return listSum(v, zero) })))
	}
	a := cel.TypeParamType("A")
	la := cel.ListType(a)
	opts = append(opts,
		cel.Function("isSorted", sorted...),
		cel.Function("sum", sum...),
		cel.Function("min", minO...),
		cel.Function("max", maxO...),
		cel.Function("indexOf", cel.MemberOverload("list_a_index_of_int", []*cel.Type{la, a}, cel.IntType,
			cel.BinaryBinding(func(l, v ref.Val) ref.Val { return listIndex(l, v, false) }))),
		cel.Function("lastIndexOf", cel.MemberOverload("list_a_last_index_of_int", []*cel.Type{la, a}, cel.IntType,
			cel.BinaryBinding(func(l, v ref.Val) ref.Val { return listIndex(l, v, true) }))),
	)
	return cel.Lib(libOf(opts...))
}

func zeroOf(t *cel.Type) ref.Val {
	switch t {
	case cel.UintType:
		return types.Uint(0)
	case cel.DoubleType:
		return types.Double(0)
	case cel.DurationType:
		return types.Duration{}
	}
	return types.Int(0)
}

func asLister(v ref.Val) (traits.Lister, bool) {
	l, ok := v.(traits.Lister)
	return l, ok
}

func isSorted(v ref.Val) ref.Val {
	l, ok := asLister(v)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	items := listItems(l)
	for i := 1; i < len(items); i++ {
		c, ok := items[i-1].(traits.Comparer)
		if !ok {
			return types.MaybeNoSuchOverloadErr(items[i-1])
		}
		r := c.Compare(items[i])
		if types.IsError(r) {
			return r
		}
		if r == types.IntOne {
			return types.False
		}
	}
	return types.True
}

func listExtreme(sign types.Int, name string) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		l, ok := asLister(v)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		items := listItems(l)
		if len(items) == 0 {
			return types.NewErr("%s called on empty list", name)
		}
		best := items[0]
		for _, e := range items[1:] {
			c, ok := e.(traits.Comparer)
			if !ok {
				return types.MaybeNoSuchOverloadErr(e)
			}
			r := c.Compare(best)
			if types.IsError(r) {
				return r
			}
			if r == sign {
				best = e
			}
		}
		return best
	}
}

func listSum(v ref.Val, zero ref.Val) ref.Val {
	l, ok := asLister(v)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	acc := zero
	for _, e := range listItems(l) {
		a, ok := acc.(traits.Adder)
		if !ok {
			return types.MaybeNoSuchOverloadErr(acc)
		}
		acc = a.Add(e)
		if types.IsError(acc) {
			return acc
		}
	}
	return acc
}

func listIndex(v, x ref.Val, last bool) ref.Val {
	l, ok := asLister(v)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	items := listItems(l)
	if last {
		for i := len(items) - 1; i >= 0; i-- {
			if items[i].Equal(x) == types.True {
				return types.Int(i)
			}
		}
		return types.Int(-1)
	}
	for i, e := range items {
		if e.Equal(x) == types.True {
			return types.Int(i)
		}
	}
	return types.Int(-1)
}

func regexLib() cel.EnvOption {
	return cel.Lib(libOf(
		cel.Function("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType,
			cel.BinaryBinding(regexFind))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType),
				cel.BinaryBinding(func(s, re ref.Val) ref.Val { return regexFindAll(s, re, types.Int(-1)) })),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType),
				cel.FunctionBinding(func(a ...ref.Val) ref.Val { return regexFindAll(a[0], a[1], a[2]) }))),
	))
}

func compileRegex(v ref.Val) (*regexp.Regexp, ref.Val) {
	s, ok := v.(types.String)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(v)
	}
	re, err := regexp.Compile(string(s))
	if err != nil {
		return nil, types.NewErr("Illegal regex: %v", err.Error())
	}
	return re, nil
}

func regexFind(s, reV ref.Val) ref.Val {
	str, ok := s.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(s)
	}
	re, errV := compileRegex(reV)
	if errV != nil {
		return errV
	}
	return types.String(re.FindString(string(str)))
}

func regexFindAll(s, reV, limit ref.Val) ref.Val {
	str, ok := s.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(s)
	}
	n, ok := limit.(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(limit)
	}
	re, errV := compileRegex(reV)
	if errV != nil {
		return errV
	}
	if n > types.Int(len(str)) || n < 0 {
		n = -1
	}
	return types.NewStringList(types.DefaultTypeAdapter, re.FindAllString(string(str), int(n)))
}

// lib bundles function declarations as one cel.Library.
type lib struct{ opts []cel.EnvOption }

func libOf(opts ...cel.EnvOption) cel.Library      { return &lib{opts: opts} }
func (l *lib) CompileOptions() []cel.EnvOption     { return l.opts }
func (l *lib) ProgramOptions() []cel.ProgramOption { return nil }

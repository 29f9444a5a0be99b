package cel

import (
	"math"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// costEstimator prices the Kubernetes library functions, statically
// (checker.CostEstimator: sizes come from the schema's maxLength,
// maxItems and maxProperties, or upstream's request-size bounds) and at
// run time (interpreter.ActualCostEstimator). The figures are upstream's:
// a change here changes which rules a CRD may declare.
type costEstimator struct {
	root *declType // nil for runtime-only use
}

// EstimateSize walks the schema along the node's path (self or oldSelf,
// then fields, @items, @keys, @values).
func (c *costEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if c.root == nil || len(path) == 0 {
		return nil
	}
	cur := c.root
	for _, name := range path[1:] {
		switch name {
		case "@items", "@values":
			if cur.elem == nil {
				return nil
			}
			cur = cur.elem
		case "@keys":
			if cur.kind != kindMap {
				return nil
			}
			// Upstream's key type carries no size bound, which its
			// estimator reads as 0.
			return &checker.SizeEstimate{Min: 0, Max: 0}
		default:
			f, ok := cur.fields[name]
			if !ok {
				return nil
			}
			cur = f.typ
		}
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(cur.maxElements)}
}

func (c *costEstimator) sizeOf(n checker.AstNode) checker.SizeEstimate {
	if s := n.ComputedSize(); s != nil {
		return *s
	}
	if s := c.EstimateSize(n); s != nil {
		return *s
	}
	return checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
}

// itemsNode stands for a list's elements when pricing per element.
type itemsNode struct {
	path []string
	t    *types.Type
}

func (i *itemsNode) Path() []string                      { return i.path }
func (i *itemsNode) Type() *types.Type                   { return i.t }
func (i *itemsNode) Expr() ast.Expr                      { return nil }
func (i *itemsNode) ComputedSize() *checker.SizeEstimate { return nil }

func (c *costEstimator) elementNode(list checker.AstNode) checker.AstNode {
	params := list.Type().Parameters()
	if len(params) == 0 {
		return nil
	}
	if p := list.Path(); p != nil {
		path := append(append([]string(nil), p...), "@items")
		return &itemsNode{path: path, t: params[0]}
	}
	return &itemsNode{t: params[0]}
}

var nominal = checker.CostEstimate{Min: 1, Max: 1}

// formattedScalarSize is the longest string(x) of each scalar kind.
var formattedScalarSize = map[string]uint64{
	"int64_to_string":     20, // -9223372036854775808
	"uint64_to_string":    20,
	"double_to_string":    32,
	"bool_to_string":      5,
	"timestamp_to_string": 64,
	"duration_to_string":  32,
}

func (c *costEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	traversal := func(n checker.AstNode, factor float64) *checker.CallEstimate {
		return &checker.CallEstimate{CostEstimate: c.sizeOf(n).MultiplyByCostFactor(factor)}
	}
	switch function {
	case "string":
		// Scalars format to a bounded length; without a bound any
		// concatenation with them ("'got ' + string(self.x)", upstream's
		// documented messageExpression) would be refused as unbounded.
		if max, ok := formattedScalarSize[overloadID]; ok {
			return &checker.CallEstimate{CostEstimate: nominal, ResultSize: &checker.SizeEstimate{Min: 1, Max: max}}
		}
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		if target != nil {
			el := c.elementNode(*target)
			if el == nil {
				// indexOf/lastIndexOf on a string
				return traversal(*target, common.StringTraversalCostFactor)
			}
			elCost := nominal
			if k := el.Type().Kind(); k == types.StringKind || k == types.BytesKind {
				elCost = elCost.Add(c.sizeOf(el).MultiplyByCostFactor(common.StringTraversalCostFactor))
			}
			return &checker.CallEstimate{CostEstimate: c.sizeOf(*target).MultiplyByCost(elCost)}
		}
	case "url":
		if len(args) == 1 {
			sz := c.sizeOf(args[0])
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
		}
	case "lowerAscii", "upperAscii", "substring", "trim":
		if target != nil {
			sz := c.sizeOf(*target)
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
		}
	case "replace":
		if target != nil && len(args) >= 2 {
			return c.replaceCost(*target, args[0], args[1])
		}
	case "split":
		if target != nil {
			sz := c.sizeOf(*target)
			max := sz.Max
			if len(args) > 1 {
				if e := args[1].Expr(); e != nil && e.Kind() == ast.LiteralKind {
					if v, ok := e.AsLiteral().ConvertToType(types.UintType).Value().(uint64); ok {
						max = v
					}
				}
			}
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * common.StringTraversalCostFactor),
				ResultSize: &checker.SizeEstimate{Min: 0, Max: max}}
		}
	case "join":
		if target != nil {
			var sz checker.SizeEstimate
			listSize := c.sizeOf(*target)
			if el := c.elementNode(*target); el != nil {
				sz = listSize.Multiply(c.sizeOf(el))
			}
			if len(args) > 0 {
				sep := c.sizeOf(args[0])
				var minSep, maxSep uint64
				if listSize.Min > 0 {
					minSep = listSize.Min - 1
				}
				if listSize.Max > 0 {
					maxSep = listSize.Max - 1
				}
				sz = sz.Add(sep.Multiply(checker.SizeEstimate{Min: minSep, Max: maxSep}))
			}
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
		}
	case "find", "findAll":
		if target != nil && len(args) >= 1 {
			sz := c.sizeOf(*target)
			// One more than the length, so an empty string against a costly
			// regex is not free.
			strCost := sz.Add(checker.SizeEstimate{Min: 1, Max: 1}).MultiplyByCostFactor(common.StringTraversalCostFactor)
			regexCost := c.sizeOf(args[0]).MultiplyByCostFactor(common.RegexStringLengthCostFactor)
			return &checker.CallEstimate{CostEstimate: strCost.Multiply(regexCost), ResultSize: &checker.SizeEstimate{Min: 0, Max: sz.Max}}
		}
	case "cidr", "isIP", "isCIDR":
		if target != nil {
			return traversal(args[0], common.StringTraversalCostFactor)
		}
	case "ip":
		if target != nil && len(args) >= 1 {
			if overloadID == "cidr_ip" {
				return &checker.CallEstimate{CostEstimate: nominal}
			}
			return traversal(args[0], common.StringTraversalCostFactor)
		} else if target != nil {
			return &checker.CallEstimate{CostEstimate: nominal}
		}
	case "ip.isCanonical":
		if target != nil && len(args) >= 1 {
			return traversal(args[0], 2*common.StringTraversalCostFactor)
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
		"format.named", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return &checker.CallEstimate{CostEstimate: nominal}
	case "validate":
		if target != nil && len(args) >= 1 {
			// The format is not known statically: price the longest regex.
			return &checker.CallEstimate{CostEstimate: c.sizeOf(args[0]).MultiplyByCostFactor(common.StringTraversalCostFactor).
				MultiplyByCostFactor(maxFormatRegexSize * common.RegexStringLengthCostFactor)}
		}
	case "_==_":
		if len(args) == 2 && args[0].Type().IsExactType(args[1].Type()) {
			switch args[0].Type().TypeName() {
			case quantityType.TypeName(), ipType.TypeName(), cidrType.TypeName():
				return &checker.CallEstimate{CostEstimate: nominal}
			case formatType.TypeName():
				return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 64}.MultiplyByCostFactor(common.StringTraversalCostFactor)}
			case urlType.TypeName():
				size := checker.SizeEstimate{Min: 1, Max: 1}
				if r := args[1].ComputedSize(); r != nil {
					size = r.Union(*r)
				}
				return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: size.Max}.MultiplyByCostFactor(common.StringTraversalCostFactor)}
			}
		}
	case "containsIP", "containsCIDR":
		if target != nil && len(args) >= 1 {
			// Comparing two byte strings of 4 (IPv4) to 16 (IPv6) bytes.
			sz := checker.SizeEstimate{Min: 4, Max: 16}
			cost := sz.Add(sz).MultiplyByCostFactor(common.StringTraversalCostFactor)
			if function == "containsCIDR" {
				cost = cost.Add(sz.MultiplyByCostFactor(common.StringTraversalCostFactor)).Add(nominal)
			}
			if overloadID == "cidr_contains_ip_string" || overloadID == "cidr_contains_cidr_string" {
				cost = cost.Add(checker.CostEstimate(c.sizeOf(args[0])).MultiplyByCostFactor(common.StringTraversalCostFactor))
			}
			return &checker.CallEstimate{CostEstimate: cost}
		}
	case "quantity", "isQuantity":
		if target != nil {
			return traversal(args[0], common.StringTraversalCostFactor)
		}
	case "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub":
		return &checker.CallEstimate{CostEstimate: nominal}
	}
	return nil
}

func (c *costEstimator) replaceCost(target, from, with checker.AstNode) *checker.CallEstimate {
	sz := c.sizeOf(target)
	fromSz := c.sizeOf(from)
	withSz := c.sizeOf(with)
	var count, kept checker.SizeEstimate
	switch {
	case fromSz.Min == 0:
		// An empty needle surrounds every character.
		count.Max = sz.Max
		if sz.Max < math.MaxUint64 {
			count.Max = sz.Max + 1
		}
		kept.Max = sz.Max
	case withSz.Max <= fromSz.Min:
		kept.Max = sz.Max
	default:
		count.Max = uint64(math.Ceil(float64(sz.Max) / float64(fromSz.Min)))
	}
	switch {
	case fromSz.Max == 0:
		count.Min = sz.Min
		if sz.Min < math.MaxUint64 {
			count.Min = sz.Min + 1
		}
		kept.Min = sz.Min
	case fromSz.Max <= withSz.Min:
		kept.Min = sz.Min
	default:
		count.Min = uint64(math.Ceil(float64(sz.Min) / float64(fromSz.Max)))
	}
	size := count.Multiply(withSz).Add(kept)
	return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * common.StringTraversalCostFactor), ResultSize: &size}
}

// CallCost is the runtime price of the library functions.
func (c *costEstimator) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	cost := func(v uint64) *uint64 { return &v }
	str := func(v ref.Val, factor float64) *uint64 {
		return cost(uint64(math.Ceil(float64(actualSize(v)) * factor)))
	}
	switch function {
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		var n uint64
		if len(args) > 0 {
			n = traversalCost(args[0])
		}
		return &n
	case "url", "lowerAscii", "upperAscii", "substring", "trim":
		if len(args) >= 1 {
			return str(args[0], common.StringTraversalCostFactor)
		}
	case "replace", "split":
		if len(args) >= 1 {
			return str(args[0], 2*common.StringTraversalCostFactor)
		}
	case "join":
		if len(args) >= 1 {
			return str(result, 2*common.StringTraversalCostFactor)
		}
	case "find", "findAll":
		if len(args) >= 2 {
			strCost := uint64(math.Ceil((1.0 + float64(actualSize(args[0]))) * common.StringTraversalCostFactor))
			regexCost := uint64(math.Ceil(float64(actualSize(args[1])) * common.RegexStringLengthCostFactor))
			return cost(strCost * regexCost)
		}
	case "cidr", "isIP", "isCIDR":
		if len(args) >= 1 {
			return str(args[0], common.StringTraversalCostFactor)
		}
	case "ip":
		if len(args) >= 1 {
			if overloadID == "cidr_ip" {
				return cost(1)
			}
			return str(args[0], common.StringTraversalCostFactor)
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return str(args[0], 2*common.StringTraversalCostFactor)
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
		"format.named", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return cost(1)
	case "validate":
		if len(args) >= 2 {
			if f, ok := args[0].(formatVal); ok {
				strCost := uint64(math.Ceil((1.0 + float64(actualSize(args[1]))) * common.StringTraversalCostFactor))
				return cost(strCost * uint64(math.Ceil(float64(f.regexSize)*common.RegexStringLengthCostFactor)))
			}
		}
	case "_==_":
		if len(args) == 2 {
			switch args[0].(type) {
			case quantityVal, ipVal, cidrVal, formatVal, urlVal:
				return cost(1)
			}
		}
	case "containsIP", "containsCIDR":
		if len(args) >= 2 {
			cidrSize := actualSize(args[0])
			n := uint64(math.Ceil(float64(cidrSize+cidrSize) * common.StringTraversalCostFactor))
			if function == "containsCIDR" {
				n += uint64(math.Ceil(float64(cidrSize)*common.StringTraversalCostFactor)) + 1
			}
			if overloadID == "cidr_contains_ip_string" || overloadID == "cidr_contains_cidr_string" {
				n += uint64(math.Ceil(float64(actualSize(args[1])) * common.StringTraversalCostFactor))
			}
			return &n
		}
	case "quantity", "isQuantity":
		if len(args) >= 1 {
			return str(args[0], common.StringTraversalCostFactor)
		}
	case "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub":
		return cost(1)
	}
	return nil
}

func actualSize(v ref.Val) uint64 {
	if s, ok := v.(traits.Sizer); ok {
		if n, ok := s.Size().(types.Int); ok {
			return uint64(n)
		}
	}
	return 1
}

// traversalCost prices walking a value as a tree.
func traversalCost(v ref.Val) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(float64(len(string(x))) * common.StringTraversalCostFactor)
	case types.Bytes:
		return uint64(float64(len([]byte(x))) * common.StringTraversalCostFactor)
	case traits.Lister:
		var n uint64
		for it := x.Iterator(); it.HasNext() == types.True; {
			n += traversalCost(it.Next())
		}
		return n
	case traits.Mapper:
		var n uint64
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			n += traversalCost(k) + traversalCost(x.Get(k))
		}
		return n
	}
	return 1
}

package jsonpath

// The parse tree. Each action of a template is a listNode whose nodes are
// applied in order, each to the values the one before produced.

type node interface{ isNode() }

// listNode is a sequence of nodes: an action, a filter operand, or a union
// member.
type listNode struct{ nodes []node }

func (l *listNode) add(n node) { l.nodes = append(l.nodes, n) }

// textNode is literal text: outside actions, or a quoted string inside one.
type textNode struct{ text string }

// fieldNode selects a member of an object.
type fieldNode struct{ name string }

// identifierNode is a keyword: range or end.
type identifierNode struct{ name string }

// param is one of an array node's start, end and step.
type param struct {
	value int
	known bool // written in the template
	// derived marks the end of a plain index [n], set to n+1.
	derived bool
}

// arrayNode selects elements of an array: [n], [a:b], [a:b:c], [*].
type arrayNode struct{ params [3]param }

// filterNode keeps the elements of an array for which left op right holds,
// or for which left finds something when op is "exists".
type filterNode struct {
	left, right *listNode
	op          string
}

type intNode struct{ value int }

type floatNode struct{ value float64 }

type boolNode struct{ value bool }

// wildcardNode selects every member or element.
type wildcardNode struct{}

// recursiveNode selects a value and, depth first, every container below it.
type recursiveNode struct{}

// unionNode concatenates what each of its lists selects.
type unionNode struct{ lists []*listNode }

func (*listNode) isNode()       {}
func (*textNode) isNode()       {}
func (*fieldNode) isNode()      {}
func (*identifierNode) isNode() {}
func (*arrayNode) isNode()      {}
func (*filterNode) isNode()     {}
func (*intNode) isNode()        {}
func (*floatNode) isNode()      {}
func (*boolNode) isNode()       {}
func (*wildcardNode) isNode()   {}
func (*recursiveNode) isNode()  {}
func (*unionNode) isNode()      {}

package selector

// Operator relates a key (label selectors) or field (field selectors) to its
// values. The string values are the upstream operator names; they appear in
// error texts and in Requirement.String.
type Operator string

// The operators of both selector languages. Field selectors use only
// Equals and NotEquals.
const (
	DoesNotExist Operator = "!"
	Equals       Operator = "="
	DoubleEquals Operator = "=="
	In           Operator = "in"
	NotEquals    Operator = "!="
	NotIn        Operator = "notin"
	Exists       Operator = "exists"
	GreaterThan  Operator = "gt"
	LessThan     Operator = "lt"
)

// binaryOperatorList is the list the label parser names when it expects an
// operator after a key, in the upstream order.
const binaryOperatorList = "in, notin, =, ==, !=, gt, lt"

package cel

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/google/cel-go/cel"

	"platd/server/apierr"
	"platd/server/jsonschema"
)

// Validator holds the compiled x-kubernetes-validations rules of one
// schema. It is immutable after Compile and safe for concurrent use.
type Validator struct {
	root *node
}

// node is one schema node that has rules at or below it.
type node struct {
	typeName string // the schema's type, the bad value of rule errors
	decl     *declType
	rules    []*compiledRule
	props    map[string]*node
	items    *node
	values   *node
	// Correlation of old values (transition rules).
	listType  string
	mapKeys   []string
	mapAtomic bool
}

type compiledRule struct {
	rule            jsonschema.ValidationRule
	prog            cel.Program
	msgProg         cel.Program
	usesOldSelf     bool
	optionalOldSelf bool
	fieldPath       string // normalized, relative to the node
}

// ruleValue prints a rule as upstream's compile errors show it (Go
// syntax of the internal ValidationRule type).
type ruleValue jsonschema.ValidationRule

// GoString renders the rule like %#v of upstream's type.
func (r ruleValue) GoString() string {
	reason := "(*apiextensions.FieldValueErrorReason)(nil)"
	if r.Reason != nil {
		reason = fmt.Sprintf("(*apiextensions.FieldValueErrorReason)(%p)", r.Reason)
	}
	oos := "(*bool)(nil)"
	if r.OptionalOldSelf != nil {
		oos = fmt.Sprintf("(*bool)(%p)", r.OptionalOldSelf)
	}
	return fmt.Sprintf("apiextensions.ValidationRule{Rule:%q, Message:%q, MessageExpression:%q, Reason:%s, FieldPath:%q, OptionalOldSelf:%s}",
		r.Rule, r.Message, r.MessageExpression, reason, r.FieldPath, oos)
}

// supportedReasons are the reason values a rule may carry.
var supportedReasons = []string{"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"}

// ruleCost is one expression's share of the schema's total.
type ruleCost struct {
	path string
	cost uint64
}

type compiler struct {
	total         uint64
	mostExpensive []ruleCost
	errs          apierr.FieldErrors // rule shape errors
	celErrs       apierr.FieldErrors // compile and cost errors
}

func (c *compiler) observe(path string, cost uint64) {
	if math.MaxUint64-c.total < cost {
		c.total = math.MaxUint64
	} else {
		c.total += cost
	}
	if cost < StaticEstimatedCRDCostLimit/100 {
		return
	}
	c.mostExpensive = append(c.mostExpensive, ruleCost{path, cost})
	sort.SliceStable(c.mostExpensive, func(i, j int) bool { return c.mostExpensive[i].cost > c.mostExpensive[j].cost })
	if len(c.mostExpensive) > 4 {
		c.mostExpensive = c.mostExpensive[:4]
	}
}

// Compile compiles every x-kubernetes-validations rule of the schema
// rooted at root (a custom resource's openAPIV3Schema: rules at the root
// see apiVersion, kind and metadata.name/generateName). path is the field
// path of root in the CRD, as errors name it (for example
// "spec.validation.openAPIV3Schema" or
// "spec.versions[0].schema.openAPIV3Schema"). The errors are the CRD's:
// malformed rules, compile errors, reasons, fieldPaths and cost refusals,
// with upstream's texts; with errors the Validator is nil. A schema with
// no rules yields a Validator that accepts everything. Call it on a
// structurally valid schema: upstream skips rule compilation where the
// schema itself is wrong.
func Compile(root *jsonschema.Props, path string) (*Validator, apierr.FieldErrors) {
	if root == nil {
		return &Validator{}, nil
	}
	c := &compiler{}
	one := uint64(1)
	n, _ := c.walk(root, path, true, &one, "")
	if c.total > StaticEstimatedCRDCostLimit {
		for _, e := range c.mostExpensive {
			c.celErrs = append(c.celErrs, apierr.Forbidden(e.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
		}
		c.celErrs = append(c.celErrs, apierr.Forbidden(path, costErrorMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", c.total, StaticEstimatedCRDCostLimit)))
	}
	errs := append(c.errs, c.celErrs...)
	if len(errs) > 0 {
		return nil, errs
	}
	return &Validator{root: n}, nil
}

// childCardinality is how many times a child of s can occur per s: the
// bound of a map or list, nil when unbounded.
func childCardinality(parent *uint64, s *jsonschema.Props) *uint64 {
	if parent == nil {
		return nil
	}
	var max *int64
	switch s.Type {
	case "object":
		if s.AdditionalProperties == nil {
			return parent
		}
		max = s.MaxProperties
	case "array":
		max = s.MaxItems
	default:
		return parent
	}
	if max == nil {
		return nil
	}
	m := uint64(zeroIfNegative(*max))
	r := multiplyNoOverflow(*parent, m)
	return &r
}

func multiplyNoOverflow(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// walk compiles the rules of s and below; it reports whether rule shape
// errors were found at or below s (which skip compilation above them, as
// upstream).
func (c *compiler) walk(s *jsonschema.Props, path string, isRoot bool, card *uint64, uncorrelatable string) (*node, bool) {
	n := &node{typeName: s.Type, listType: s.ListType(), mapKeys: s.XListMapKeys, mapAtomic: s.MapType() == "atomic"}
	bad := false
	childUncorr := uncorrelatable
	if childUncorr == "" && s.MapType() == "atomic" {
		childUncorr = path
	}
	childCard := childCardinality(card, s)
	keep := false
	if vs := s.ValueSchema(); vs != nil {
		// Upstream forbids oldSelf below an atomic map's properties only.
		child, b := c.walk(vs, path+".additionalProperties", false, childCard, uncorrelatable)
		bad = bad || b
		if child != nil {
			n.values, keep = child, true
		}
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := s.Properties[k]
		child, b := c.walk(&p, path+".properties["+k+"]", false, childCard, childUncorr)
		bad = bad || b
		if child != nil {
			if n.props == nil {
				n.props = map[string]*node{}
			}
			n.props[k], keep = child, true
		}
	}
	if it := s.ItemSchema(); it != nil {
		itemUncorr := uncorrelatable
		if itemUncorr == "" && s.ListType() != "map" {
			itemUncorr = path
		}
		child, b := c.walk(it, path+".items", false, childCard, itemUncorr)
		bad = bad || b
		if child != nil {
			n.items, keep = child, true
		}
	}
	if len(s.XValidations) == 0 {
		if !keep {
			return nil, bad
		}
		return n, bad
	}
	if c.checkRules(s, path) {
		bad = true
	}
	if bad {
		return n, true
	}
	c.compileRules(n, s, path, isRoot, card, uncorrelatable)
	return n, false
}

func hasNewlines(s string) bool { return strings.ContainsAny(s, "\n\r") }

// checkRules reports malformed rules at s (the schema errors upstream
// finds before compiling).
func (c *compiler) checkRules(s *jsonschema.Props, path string) bool {
	before := len(c.errs)
	for i, r := range s.XValidations {
		p := fmt.Sprintf("%s.x-kubernetes-validations[%d]", path, i)
		rule := strings.TrimSpace(r.Rule)
		msg := strings.TrimSpace(r.Message)
		msgExpr := strings.TrimSpace(r.MessageExpression)
		switch {
		case rule == "":
			c.errs = append(c.errs, apierr.Required(p+".rule", "rule is not specified"))
		case r.Message != "" && msg == "":
			c.errs = append(c.errs, apierr.Invalid(p+".message", r.Message, "message must be non-empty if specified"))
		case hasNewlines(msg):
			c.errs = append(c.errs, apierr.Invalid(p+".message", r.Message, "message must not contain line breaks"))
		case hasNewlines(rule) && msg == "":
			c.errs = append(c.errs, apierr.Required(p+".message", "message must be specified if rule contains line breaks"))
		}
		if r.MessageExpression != "" && msgExpr == "" {
			c.errs = append(c.errs, apierr.Required(p+".messageExpression", "messageExpression must be non-empty if specified"))
		}
		if r.Reason != nil && !contains(supportedReasons, *r.Reason) {
			c.errs = append(c.errs, apierr.NotSupported(p+".reason", *r.Reason, supportedReasons))
		}
		if r.FieldPath != "" && strings.TrimSpace(r.FieldPath) == "" {
			c.errs = append(c.errs, apierr.Invalid(p+".fieldPath", r.FieldPath, "fieldPath must be non-empty if specified"))
		}
		if hasNewlines(r.FieldPath) {
			c.errs = append(c.errs, apierr.Invalid(p+".fieldPath", r.FieldPath, "fieldPath must not contain line breaks"))
		}
		if r.FieldPath != "" {
			if _, err := validFieldPath(r.FieldPath, s); err != nil {
				c.errs = append(c.errs, apierr.Invalid(p+".fieldPath", r.FieldPath, "fieldPath must be a valid path"))
			}
		}
	}
	return len(c.errs) > before
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// costErrorMessage words a cost refusal as upstream.
func costErrorMessage(what string, cost, limit uint64) string {
	f := float64(cost) / float64(limit)
	var factor string
	switch {
	case f > 100.0:
		// Likely quadratic or worse: the exact figure says nothing more.
		factor = "more than 100x"
	case f < 1.5:
		factor = fmt.Sprintf("%fx", f)
	default:
		factor = fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", what, factor)
}

// selfTypeName is the name of self's object type; it changes with every
// compile so rules cannot depend on it.
func selfTypeName() string { return fmt.Sprintf("selfType%d", time.Now().Nanosecond()) }

func (c *compiler) compileRules(n *node, s *jsonschema.Props, path string, isRoot bool, card *uint64, uncorrelatable string) {
	vpath := path + ".x-kubernetes-validations"
	d := schemaDeclType(s, isRoot || s.XEmbeddedResource)
	if d == nil {
		c.celErrs = append(c.celErrs, &apierr.FieldError{Type: apierr.FieldInternal, Field: vpath,
			Detail: "internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations"})
		return
	}
	d.assignNames(selfTypeName())
	n.decl = d
	plain, optional, err := ruleEnvs(d)
	if err != nil {
		c.celErrs = append(c.celErrs, &apierr.FieldError{Type: apierr.FieldInternal, Field: vpath, Detail: err.Error()})
		return
	}
	est := &costEstimator{root: d}
	// How often a rule here can run in one object: the product of the
	// enclosing lists' and maps' bounds, or else what fits in a request.
	maxCard := uint64(maxRequestSizeBytes / (d.minSize + 1))
	for i, r := range s.XValidations {
		p := fmt.Sprintf("%s[%d]", vpath, i)
		env := plain
		optOld := r.OptionalOldSelf != nil && *r.OptionalOldSelf
		if optOld {
			env = optional
		}
		cr := &compiledRule{rule: r, optionalOldSelf: optOld}
		ast, ruleErr, maxCost := compileExpr(env, est, r.Rule, cel.BoolType, &cr.prog)
		if ruleErr == "" {
			cr.usesOldSelf = usesOldSelf(ast)
		}
		cost := multiplyNoOverflow(maxCost, maxCard)
		if card != nil {
			cost = multiplyNoOverflow(maxCost, *card)
		}
		if ruleErr == "" {
			if cost > StaticEstimatedCostLimit {
				c.celErrs = append(c.celErrs, apierr.Forbidden(p+".rule", costErrorMessage("estimated rule cost", cost, StaticEstimatedCostLimit)))
			}
			c.observe(p+".rule", cost)
		}
		if ruleErr != "" {
			c.celErrs = append(c.celErrs, apierr.Invalid(p+".rule", ruleValue(r), ruleErr))
		} else if r.MessageExpression != "" {
			_, msgErr, msgCost := compileExpr(env, est, r.MessageExpression, cel.StringType, &cr.msgProg)
			if msgErr != "" {
				switch {
				case strings.HasPrefix(msgErr, "program instantiation failed"):
					msgErr = "messageExpression instantiation failed" + strings.TrimPrefix(msgErr, "program instantiation failed")
				case strings.HasPrefix(msgErr, "cost estimation failed"):
					msgErr = "cost estimation failed for messageExpression" + strings.TrimPrefix(msgErr, "cost estimation failed")
				default:
					msgErr = "messageExpression " + msgErr
				}
				c.celErrs = append(c.celErrs, apierr.Invalid(p+".messageExpression", ruleValue(r), msgErr))
			} else {
				if msgCost > StaticEstimatedCostLimit {
					c.celErrs = append(c.celErrs, apierr.Forbidden(p+".messageExpression", costErrorMessage("estimated messageExpression cost", msgCost, StaticEstimatedCostLimit)))
				}
				c.observe(p+".messageExpression", msgCost)
			}
		}
		if ruleErr == "" {
			if cr.usesOldSelf {
				if uncorrelatable != "" {
					c.celErrs = append(c.celErrs, apierr.Invalid(p+".rule", r.Rule,
						fmt.Sprintf("oldSelf cannot be used on the uncorrelatable portion of the schema within %s", uncorrelatable)))
				}
			} else if r.OptionalOldSelf != nil {
				c.celErrs = append(c.celErrs, apierr.Invalid(p+".optionalOldSelf", *r.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
			}
		}
		if r.FieldPath != "" {
			cr.fieldPath, _ = validFieldPath(r.FieldPath, s)
		}
		n.rules = append(n.rules, cr)
	}
}

// compileExpr compiles one expression that must yield want; it returns
// upstream's detail for a failure (worded for rules; the caller rewords
// them for messageExpression) and the estimated cost.
func compileExpr(env *cel.Env, est *costEstimator, expr string, want *cel.Type, prog *cel.Program) (*cel.Ast, string, uint64) {
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, "compilation failed: " + iss.String(), 0
	}
	if !ast.OutputType().IsExactType(want) {
		if want == cel.StringType {
			return nil, "must evaluate to a string", 0
		}
		return nil, "cel expression must evaluate to a bool", 0
	}
	p, err := env.Program(ast, programOptions(est)...)
	if err != nil {
		return nil, "program instantiation failed: " + err.Error(), 0
	}
	ce, err := env.EstimateCost(ast, est)
	if err != nil {
		return nil, "cost estimation failed: " + err.Error(), 0
	}
	*prog = p
	return ast, "", ce.Max
}

// usesOldSelf reports whether the checked expression references oldSelf.
func usesOldSelf(a *cel.Ast) bool {
	for _, ref := range a.NativeRep().ReferenceMap() {
		if ref.Name == oldScopedVarName {
			return true
		}
	}
	return false
}

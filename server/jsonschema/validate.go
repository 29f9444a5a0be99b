package jsonschema

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file checks a value against a schema the way the OpenAPI schema
// validator upstream serves custom resources with (kube-openapi's validate
// package): the same checks, in the same order, with the same messages.
// Its results are converted into field errors in errors.go.
//
// Upstream visits object members in Go map order, which is random; here
// members are visited in sorted order so that the error list is stable.

// walker holds how a validation reads the schema. Upstream validates
// custom resources with the schema converted one way and CRD defaults
// with it converted another.
type walker struct {
	// asWritten reads the schema as defaults are validated: every format
	// kept as written, and an x-kubernetes-int-or-string node untyped.
	// Custom resources are validated with the formats upstream does not
	// support dropped and int-or-string typed "integer,string".
	asWritten bool
}

// format is the node's format as this validation reads it.
func (w walker) format(p *Props) string {
	if w.asWritten {
		return p.Format
	}
	return supportedFormat(p)
}

// types is the node's list of accepted types as this validation reads it.
func (w walker) types(p *Props) []string {
	if p.XIntOrString && !w.asWritten {
		return []string{typeInteger, typeString}
	}
	if p.Type == "" {
		return nil
	}
	return []string{p.Type}
}

// in is where every value lives, as upstream's messages say it.
const in = "body"

// JSON type names.
const (
	typeObject  = "object"
	typeArray   = "array"
	typeString  = "string"
	typeInteger = "integer"
	typeNumber  = "number"
	typeBoolean = "boolean"
	typeNull    = "null"
)

// kind is the JSON kind of a decoded value.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindInt
	kindFloat
	kindString
	kindSlice
	kindMap
	kindOther
)

func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case int64, int, int32:
		return kindInt
	case float64:
		return kindFloat
	case string:
		return kindString
	case []any:
		return kindSlice
	case map[string]any:
		return kindMap
	}
	return kindOther
}

// normalize turns the integer types a caller may hand in into int64.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	}
	return v
}

// errCode classifies a failure; the conversion into field errors picks
// the field error type from it, as upstream does.
type errCode int

const (
	codeInvalidType errCode = iota
	codeRequired
	codeTooLong
	codeEnum
	codeMaxItems
	codeTooManyProperties
	codeOther     // any other value failure: an Invalid field error
	codeComposite // anyOf, oneOf, allOf, not, dependencies: no field of its own
)

// failure is one failed check before conversion into a field error.
type failure struct {
	code   errCode
	name   string // the path as upstream's validator spells it
	value  any
	valid  int64 // the limit of a TooLong, MaxItems or TooManyProperties
	values []any // the accepted values of an enum
	msg    string
}

// result collects failures and counts passed checks: the count picks the
// most relevant failures of an anyOf or oneOf, as upstream.
type result struct {
	errs  []*failure
	count int
}

// add appends a failure unless one with the same message is already there.
func (r *result) add(f *failure) {
	for _, e := range r.errs {
		if e.msg == f.msg {
			return
		}
	}
	r.errs = append(r.errs, f)
}

func (r *result) merge(others ...result) {
	for _, o := range others {
		for _, f := range o.errs {
			r.add(f)
		}
		r.count += o.count
	}
}

func (r result) valid() bool { return len(r.errs) == 0 }

func fail(f *failure) result { return result{errs: []*failure{f}} }

func hasType(types []string, t string) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// validateValue checks data against p at path. c correlates data with
// its old value on an update (nil: none): the failures of a value equal to
// its old value are dropped, so that a schema made stricter does not
// refuse an update that leaves the value alone (upstream's ratcheting).
func (w walker) validateValue(p *Props, path string, data any, c *correlation) result {
	res := w.validateNode(p, path, data, c)
	if !res.valid() && c.equal() {
		res.errs = nil
	}
	return res
}

// validateNode is validateValue without dropping the failures of an
// unchanged value.
func (w walker) validateNode(p *Props, path string, data any, c *correlation) result {
	var res result
	data = normalize(data)
	if data == nil {
		res.merge(w.checkType(p, path, data))
		res.merge(checkEnum(p, path, data))
		return res
	}
	k := kindOf(data)
	step := func(r result) {
		res.merge(r)
		res.count++
	}
	if len(w.types(p)) > 0 || w.format(p) != "" {
		step(w.checkType(p, path, data))
	}
	step(w.checkComposition(p, path, data))
	if k == kindString {
		step(checkString(p, path, data.(string)))
		if f := w.format(p); f != "" && knownFormat(f) {
			step(checkFormat(f, path, data.(string)))
		}
	}
	if k == kindInt || k == kindFloat {
		step(checkNumber(p, path, data))
	}
	if k == kindSlice {
		step(w.checkSlice(p, path, data.([]any), c))
	}
	step(checkEnum(p, path, data))
	if k == kindMap {
		step(w.checkObject(p, path, data.(map[string]any), c))
	}
	res.count++
	return res
}

func invalidType(path, typeName, value string) *failure {
	return &failure{code: codeInvalidType, name: path, value: value,
		msg: fmt.Sprintf("%s in %s must be of type %s: %q", path, in, typeName, value)}
}

// schemaInfo is the JSON type and implied format of a value.
func schemaInfo(data any) (string, string) {
	switch data.(type) {
	case bool:
		return typeBoolean, ""
	case string:
		return typeString, ""
	case int64:
		return typeInteger, "int64"
	case float64:
		return typeNumber, "float64"
	case []any:
		return typeArray, ""
	case map[string]any:
		return typeObject, ""
	}
	return "", ""
}

// checkType is upstream's type check, quirks included: a string or array
// passes a non-numeric type that carries a format.
func (w walker) checkType(p *Props, path string, data any) result {
	types := w.types(p)
	format := w.format(p)
	var res result
	if data == nil {
		if len(types) > 0 && !hasType(types, typeNull) && !p.Nullable {
			return fail(invalidType(path, strings.Join(types, ","), typeNull))
		}
		res.count++
		return res
	}
	k := kindOf(data)
	schType, dataFormat := schemaInfo(data)
	isFloatInt := schType == typeNumber && isJSONInteger(data.(float64)) && hasType(types, typeInteger)
	isIntFloat := schType == typeInteger && hasType(types, typeNumber)
	if k != kindString && k != kindSlice && format != "" &&
		!(hasType(types, schType) || dataFormat == format || isFloatInt || isIntFloat) {
		return fail(invalidType(path, format, dataFormat))
	}
	if !(hasType(types, typeNumber) || hasType(types, typeInteger)) && format != "" && (k == kindString || k == kindSlice) {
		res.count++
		return res
	}
	if !(hasType(types, schType) || isFloatInt || isIntFloat) {
		return fail(invalidType(path, strings.Join(types, ","), schType))
	}
	res.count++
	return res
}

// maxJSONInteger bounds the integers a float64 holds exactly.
const maxJSONInteger = float64(1<<53 - 1)

// isJSONInteger reports whether f is an integer within JSON's exact range,
// with upstream's relative tolerance of 1e-9 above the integer below f.
func isJSONInteger(f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < -maxJSONInteger || f > maxJSONInteger {
		return false
	}
	if f == math.Trunc(f) {
		return true
	}
	if f < 0 {
		// Upstream compares with the value's unsigned conversion, which
		// is far off for a negative number: only exact integers pass.
		return false
	}
	g := math.Trunc(f)
	if g == 0 {
		return false
	}
	return (f-g)/(f+g) < 1e-9
}

// checkString is maxLength, minLength and pattern; the first failure ends
// the check.
func checkString(p *Props, path, data string) result {
	n := int64(utf8.RuneCountInString(data))
	if p.MaxLength != nil && n > *p.MaxLength {
		return fail(&failure{code: codeTooLong, name: path, value: data, valid: *p.MaxLength,
			msg: fmt.Sprintf("%s in %s should be at most %d chars long", path, in, *p.MaxLength)})
	}
	if p.MinLength != nil && n < *p.MinLength {
		return fail(&failure{code: codeOther, name: path, value: data,
			msg: fmt.Sprintf("%s in %s should be at least %d chars long", path, in, *p.MinLength)})
	}
	if p.Pattern != "" {
		re, err := p.patternRegexp()
		if err != nil {
			return fail(&failure{code: codeOther, name: path, value: data,
				msg: fmt.Sprintf("%s in %s should match '%s, but pattern is invalid: %s'", path, in, p.Pattern, err.Error())})
		}
		if !re.MatchString(data) {
			return fail(&failure{code: codeOther, name: path, value: data,
				msg: fmt.Sprintf("%s in %s should match '%s'", path, in, p.Pattern)})
		}
	}
	return result{}
}

// patternCache holds compiled patterns: a CRD's few patterns are checked
// on every write of its resources. It stops growing at maxCachedPatterns
// so that schemas that churn cannot grow it without bound.
var patternCache = struct {
	sync.Mutex
	m map[string]compiledPattern
}{m: map[string]compiledPattern{}}

type compiledPattern struct {
	re  *regexp.Regexp
	err error
}

const maxCachedPatterns = 4096

// compilePattern compiles a pattern with Go's regexp syntax, as upstream.
func compilePattern(p string) (*regexp.Regexp, error) {
	patternCache.Lock()
	c, ok := patternCache.m[p]
	patternCache.Unlock()
	if ok {
		return c.re, c.err
	}
	re, err := regexp.Compile(p)
	patternCache.Lock()
	if len(patternCache.m) < maxCachedPatterns {
		patternCache.m[p] = compiledPattern{re, err}
	}
	patternCache.Unlock()
	return re, err
}

func checkFormat(format, path, data string) result {
	if validFormat(format, data) {
		return result{}
	}
	return fail(invalidType(path, format, data))
}

// toInt64 converts a limit as Go does on amd64, where out-of-range values
// become the smallest int64.
func toInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// checkNumber is multipleOf, minimum and maximum, reported in that order.
// An integer is compared with the limits converted to integers, as
// upstream.
func checkNumber(p *Props, path string, data any) result {
	var res result
	i, isInt := data.(int64)
	f, _ := data.(float64)
	if isInt {
		f = float64(i)
	}
	if p.MultipleOf != nil {
		m := *p.MultipleOf
		// An integer is checked against the factor truncated to an
		// integer; upstream divides by zero when that is 0 (a factor
		// below 1), where platd checks the factor as a number instead.
		if isInt && toInt64(m) != 0 {
			factor := toInt64(m)
			switch {
			case factor < 0:
				res.add(notPositive(path, factor))
			case i%factor != 0:
				res.add(notMultiple(path, factor, data))
			}
		} else {
			var mult float64
			switch {
			case m < 0:
				res.add(notPositive(path, m))
			default:
				if m < 1 {
					mult = 1 / m * f
				} else {
					mult = f / m
				}
				if !isJSONInteger(mult) {
					res.add(notMultiple(path, m, data))
				}
			}
		}
	}
	if p.Minimum != nil {
		min, excl := *p.Minimum, p.ExclusiveMinimum
		var below bool
		var limit any = min
		if isInt {
			lim := toInt64(min)
			limit = lim
			below = i < lim || excl && i == lim
		} else {
			below = f < min || excl && f == min
		}
		if below {
			word := "greater than or equal to"
			if excl {
				word = "greater than"
			}
			res.add(&failure{code: codeOther, name: path, value: data,
				msg: fmt.Sprintf("%s in %s should be %s %v", path, in, word, limit)})
		}
	}
	if p.Maximum != nil {
		max, excl := *p.Maximum, p.ExclusiveMaximum
		var above bool
		var limit any = max
		if isInt {
			lim := toInt64(max)
			limit = lim
			above = i > lim || excl && i == lim
		} else {
			above = f > max || excl && f == max
		}
		if above {
			word := "less than or equal to"
			if excl {
				word = "less than"
			}
			res.add(&failure{code: codeOther, name: path, value: data,
				msg: fmt.Sprintf("%s in %s should be %s %v", path, in, word, limit)})
		}
	}
	res.count++
	return res
}

func notPositive(path string, factor any) *failure {
	return &failure{code: codeOther, name: path, value: factor,
		msg: fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", path, factor)}
}

func notMultiple(path string, factor, data any) *failure {
	return &failure{code: codeOther, name: path, value: data,
		msg: fmt.Sprintf("%s in %s should be a multiple of %v", path, in, factor)}
}

// checkSlice validates the items first, then minItems, maxItems and
// uniqueItems.
func (w walker) checkSlice(p *Props, path string, data []any, c *correlation) result {
	var res result
	size := len(data)
	if item := p.ItemSchema(); item != nil {
		for i, v := range data {
			res.merge(w.validateValue(item, fmt.Sprintf("%s[%d]", path, i), v, c.index(i)))
		}
	}
	tuple := 0
	if p.Items != nil && len(p.Items.JSONSchemas) > 0 {
		tuple = len(p.Items.JSONSchemas)
		for i := 0; i < tuple && i < size; i++ {
			res.merge(w.validateValue(&p.Items.JSONSchemas[i], fmt.Sprintf("%s[%d]", path, i), data[i], c.index(i)))
		}
	}
	if p.AdditionalItems != nil && tuple < size {
		if tuple > 0 && !p.AdditionalItems.Allows {
			res.add(&failure{code: codeComposite, msg: "array doesn't allow for additional items"})
		}
		if s := p.AdditionalItems.Schema; s != nil {
			// Upstream's bound, which skips items when there are two or more
			// positional schemas; capped at the length it can overrun.
			for i := tuple; i < size-tuple+1 && i < size; i++ {
				res.merge(w.validateValue(s, fmt.Sprintf("%s[%d]", path, i), data[i], c.index(i)))
			}
		}
	}
	if p.MinItems != nil && int64(size) < *p.MinItems {
		res.add(&failure{code: codeOther, name: path, value: int64(size),
			msg: fmt.Sprintf("%s in %s should have at least %d items", path, in, *p.MinItems)})
	}
	if p.MaxItems != nil && int64(size) > *p.MaxItems {
		res.add(&failure{code: codeMaxItems, name: path, value: int64(size), valid: *p.MaxItems,
			msg: fmt.Sprintf("%s in %s should have at most %d items", path, in, *p.MaxItems)})
	}
	if p.UniqueItems && hasDuplicates(data) {
		res.add(&failure{code: codeOther, name: path,
			msg: fmt.Sprintf("%s in %s shouldn't contain duplicates", path, in)})
	}
	res.count++
	return res
}

func hasDuplicates(data []any) bool {
	for i := range data {
		for j := 0; j < i; j++ {
			if reflect.DeepEqual(data[i], data[j]) {
				return true
			}
		}
	}
	return false
}

// checkEnum accepts a value equal to an enum member after conversion to
// the member's Go type, as upstream (so 1.5 matches 1, and 65 matches "A").
func checkEnum(p *Props, path string, data any) result {
	if len(p.Enum) == 0 {
		return result{}
	}
	vals := p.enumValues()
	for _, v := range vals {
		if enumMatch(data, v) {
			return result{}
		}
	}
	return fail(&failure{code: codeEnum, name: path, value: data, values: vals,
		msg: fmt.Sprintf("%s in %s should be one of %v", path, in, vals)})
}

func enumMatch(data, member any) bool {
	if data == nil || member == nil {
		return false
	}
	switch m := member.(type) {
	case int64:
		switch d := data.(type) {
		case int64:
			return d == m
		case float64:
			return toInt64(d) == m
		}
		return false
	case float64:
		switch d := data.(type) {
		case int64:
			return float64(d) == m
		case float64:
			return d == m
		}
		return false
	case string:
		switch d := data.(type) {
		case string:
			return d == m
		case int64:
			s := "\uFFFD"
			if int64(rune(d)) == d {
				s = string(rune(d))
			}
			return s == m
		}
		return false
	}
	return reflect.DeepEqual(data, member)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinPath(path, name string) string { return path + "." + name }

// checkObject is min/maxProperties, additionalProperties, properties,
// required and patternProperties, in upstream's order.
func (w walker) checkObject(p *Props, path string, data map[string]any, c *correlation) result {
	var res result
	n := int64(len(data))
	if p.MinProperties != nil && n < *p.MinProperties {
		res.add(&failure{code: codeOther, name: path, value: n,
			msg: fmt.Sprintf("%s in %s should have at least %d properties", path, in, *p.MinProperties)})
	}
	if p.MaxProperties != nil && n > *p.MaxProperties {
		res.add(&failure{code: codeTooManyProperties, name: path, value: n, valid: *p.MaxProperties,
			msg: fmt.Sprintf("%s in %s should have at most %d properties", path, in, *p.MaxProperties)})
	}
	keys := sortedKeys(data)
	matches := map[string]patternMatch{}
	match := func(k string) patternMatch {
		m, ok := matches[k]
		if !ok {
			m = w.matchPatterns(p, path, k, data[k], c)
			matches[k] = m
		}
		return m
	}
	if p.AdditionalProperties != nil && !p.AdditionalProperties.Allows {
		for _, k := range keys {
			if _, ok := p.Properties[k]; ok || matchesPattern(p, k) {
				continue
			}
			res.add(&failure{code: codeOther, name: path, value: k,
				msg: fmt.Sprintf("%s.%s in %s is a forbidden property", path, k, in)})
		}
	} else {
		for _, k := range keys {
			_, regular := p.Properties[k]
			m := match(k)
			res.merge(m.results...)
			if !regular && len(m.pats) == 0 && p.ValueSchema() != nil {
				res.merge(w.validateValue(p.ValueSchema(), joinPath(path, k), data[k], c.key(path, k)))
			}
		}
	}
	names, subs := p.propertyList()
	for i, name := range names {
		v, ok := data[name]
		if !ok {
			continue
		}
		child := name
		if path != "" {
			child = joinPath(path, name)
		}
		res.merge(w.validateValue(subs[i], child, v, c.key(path, name)))
	}
	for _, k := range p.Required {
		if _, ok := data[k]; !ok {
			f := joinPath(path, k)
			res.add(&failure{code: codeRequired, name: f, msg: fmt.Sprintf("%s in %s is required", f, in)})
		}
	}
	for _, k := range keys {
		_, regular := p.Properties[k]
		m := match(k)
		res.merge(m.results...)
		if !regular {
			res.merge(m.results...)
		}
	}
	return res
}

func matchesPattern(p *Props, key string) bool {
	for pat := range p.PatternProperties {
		if re, err := compilePattern(pat); err == nil && re.MatchString(key) {
			return true
		}
	}
	return false
}

// patternMatch is a member's validation against the patternProperties its
// name matches. Upstream validates a member two or three times against
// them, merging each time; validating once and merging the results as
// often gives the same result without the cost growing with depth.
type patternMatch struct {
	pats    []string
	results []result
}

func (w walker) matchPatterns(p *Props, path, key string, v any, c *correlation) patternMatch {
	var m patternMatch
	for _, pat := range sortedKeys(p.PatternProperties) {
		re, err := compilePattern(pat)
		if err != nil || !re.MatchString(key) {
			continue
		}
		sub := p.PatternProperties[pat]
		m.pats = append(m.pats, pat)
		m.results = append(m.results, w.validateValue(&sub, joinPath(path, key), v, c.key(path, key)))
	}
	return m
}

// checkComposition is anyOf, oneOf, allOf, not and dependencies; every
// sub-schema applies at the same path, and, as upstream, without pairing
// values with old ones below it.
func (w walker) checkComposition(p *Props, path string, data any) result {
	var res result
	if len(p.AnyOf) > 0 {
		var best, first *result
		ok := false
		for i := range p.AnyOf {
			r := w.validateValue(&p.AnyOf[i], path, data, nil)
			if r.valid() {
				best, ok, first = nil, true, &r
				break
			}
			if best == nil || r.count > best.count {
				best = &r
			}
		}
		if !ok {
			res.add(composite(fmt.Sprintf("%q must validate at least one schema (anyOf)", path)))
		}
		if best != nil {
			res.merge(*best)
		} else if first != nil {
			res.merge(*first)
		}
	}
	if len(p.OneOf) > 0 {
		var best, first *result
		validated := 0
		for i := range p.OneOf {
			r := w.validateValue(&p.OneOf[i], path, data, nil)
			if r.valid() {
				validated++
				best = nil
				if first == nil {
					first = &r
				}
				continue
			}
			if validated == 0 && (best == nil || r.count > best.count) {
				best = &r
			}
		}
		if validated != 1 {
			more := "Found none valid"
			if validated > 1 {
				more = fmt.Sprintf("Found %d valid alternatives", validated)
			}
			res.add(composite(fmt.Sprintf("%q must validate one and only one schema (oneOf). %s", path, more)))
			if best != nil {
				res.merge(*best)
			}
		} else if first != nil {
			res.merge(*first)
		}
	}
	if len(p.AllOf) > 0 {
		validated := 0
		for i := range p.AllOf {
			r := w.validateValue(&p.AllOf[i], path, data, nil)
			if r.valid() {
				validated++
			}
			res.merge(r)
		}
		if validated != len(p.AllOf) {
			more := ""
			if validated == 0 {
				more = ". None validated"
			}
			res.add(composite(fmt.Sprintf("%q must validate all the schemas (allOf)%s", path, more)))
		}
	}
	if p.Not != nil && w.validateValue(p.Not, path, data, nil).valid() {
		res.add(composite(fmt.Sprintf("%q must not validate the schema (not)", path)))
	}
	if m, ok := data.(map[string]any); ok && len(p.Dependencies) > 0 {
		for _, k := range sortedKeys(m) {
			dep, ok := p.Dependencies[k]
			if !ok {
				continue
			}
			if dep.Schema != nil {
				res.merge(w.validateValue(dep.Schema, joinPath(path, k), data, nil))
				continue
			}
			for _, need := range dep.Property {
				if _, ok := m[need]; !ok {
					res.add(composite(fmt.Sprintf("%q has a dependency on %s", path, need)))
				}
			}
		}
	}
	res.count++
	return res
}

func composite(msg string) *failure { return &failure{code: codeComposite, msg: msg} }

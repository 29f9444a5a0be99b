package jsonschema

import (
	"reflect"
	"regexp"
	"sort"
	"unsafe"
)

// index holds what validation derives from a schema node, computed once
// when the schema is parsed so that validating a custom resource neither
// copies property schemas, decodes enums nor looks patterns up: sorted
// property names with stable pointers to their schemas, the decoded enum,
// the compiled pattern, and whether anything below needs the embedded
// resource or list uniqueness walks. A node whose properties, enum or
// pattern were replaced after parsing (a copy edited by another package)
// no longer matches its index, and is read directly instead.
type index struct {
	propsMap unsafe.Pointer // the Properties map the index was built from
	names    []string
	subs     []*Props
	byName   map[string]*Props

	enumSrc  *JSON // first member of the Enum slice it was decoded from
	enumLen  int
	enum     []any
	pattern  string
	re       *regexp.Regexp
	reErr    error
	embedded bool // an embedded resource at or below this node
	lists    bool // a set or map list at or below this node
}

func mapPointer(m map[string]Props) unsafe.Pointer {
	if m == nil {
		return nil
	}
	return reflect.ValueOf(m).UnsafePointer()
}

// buildIndex indexes p and every schema below it. It must run before p is
// shared: it stores indexed copies back into p's maps.
func (p *Props) buildIndex() {
	idx := &index{}
	for k, v := range p.PatternProperties {
		v.buildIndex()
		p.PatternProperties[k] = v
	}
	for k, d := range p.Dependencies {
		if d.Schema != nil {
			d.Schema.buildIndex()
		}
		p.Dependencies[k] = d
	}
	for _, list := range [][]Props{p.AllOf, p.AnyOf, p.OneOf} {
		for i := range list {
			list[i].buildIndex()
		}
	}
	for _, s := range []*Props{p.Not, p.ItemSchema(), p.ValueSchema()} {
		if s != nil {
			s.buildIndex()
		}
	}
	if p.Items != nil {
		for i := range p.Items.JSONSchemas {
			p.Items.JSONSchemas[i].buildIndex()
		}
	}
	if p.AdditionalItems != nil && p.AdditionalItems.Schema != nil {
		p.AdditionalItems.Schema.buildIndex()
	}
	if len(p.Properties) > 0 {
		idx.names = make([]string, 0, len(p.Properties))
		for k, v := range p.Properties {
			v.buildIndex()
			p.Properties[k] = v
			idx.names = append(idx.names, k)
		}
		sort.Strings(idx.names)
		store := make([]Props, len(idx.names))
		idx.subs = make([]*Props, len(idx.names))
		idx.byName = make(map[string]*Props, len(idx.names))
		for i, k := range idx.names {
			store[i] = p.Properties[k]
			idx.subs[i] = &store[i]
			idx.byName[k] = &store[i]
		}
		idx.propsMap = mapPointer(p.Properties)
	}
	if len(p.Enum) > 0 {
		idx.enumSrc, idx.enumLen = &p.Enum[0], len(p.Enum)
		idx.enum = decodeEnum(p.Enum)
	}
	if p.Pattern != "" {
		idx.pattern = p.Pattern
		idx.re, idx.reErr = regexp.Compile(p.Pattern)
	}
	idx.embedded = p.XEmbeddedResource
	idx.lists = p.XListType != nil && (*p.XListType == "set" || *p.XListType == "map")
	for _, s := range append(idx.subs, p.ItemSchema(), p.ValueSchema()) {
		if s != nil && s.index != nil {
			idx.embedded = idx.embedded || s.index.embedded
			idx.lists = idx.lists || s.index.lists
		}
	}
	p.index = idx
}

// sameProps reports whether two nodes declare the same schema; their
// indexes, derived data, are not compared.
func sameProps(a, b Props) bool {
	a.index, b.index = nil, nil
	return reflect.DeepEqual(a, b)
}

// propertiesIndexed reports whether p's index describes its properties.
func (p *Props) propertiesIndexed() bool {
	return p.index != nil && p.index.propsMap == mapPointer(p.Properties)
}

// property is the schema of the named property.
func (p *Props) property(name string) (*Props, bool) {
	if p.propertiesIndexed() {
		s, ok := p.index.byName[name]
		return s, ok
	}
	s, ok := p.Properties[name]
	return &s, ok
}

// propertyList is p's properties in name order.
func (p *Props) propertyList() ([]string, []*Props) {
	if p.propertiesIndexed() {
		return p.index.names, p.index.subs
	}
	names := sortedKeys(p.Properties)
	subs := make([]*Props, len(names))
	for i, k := range names {
		s := p.Properties[k]
		subs[i] = &s
	}
	return names, subs
}

// enumValues decodes the node's enum; members that do not decode are left
// out, as they never match.
func (p *Props) enumValues() []any {
	if p.index != nil && len(p.Enum) > 0 && p.index.enumSrc == &p.Enum[0] && p.index.enumLen == len(p.Enum) {
		return p.index.enum
	}
	return decodeEnum(p.Enum)
}

func decodeEnum(enum []JSON) []any {
	vals := make([]any, 0, len(enum))
	for _, e := range enum {
		v, err := e.Value()
		if err != nil {
			continue
		}
		vals = append(vals, v)
	}
	return vals
}

// patternRegexp is the node's compiled pattern.
func (p *Props) patternRegexp() (*regexp.Regexp, error) {
	if p.index != nil && p.index.pattern == p.Pattern {
		return p.index.re, p.index.reErr
	}
	return compilePattern(p.Pattern)
}

// mayHaveEmbedded reports whether an embedded resource may be at or below
// p along properties, items and additionalProperties.
func (p *Props) mayHaveEmbedded() bool {
	return p.XEmbeddedResource || p.index == nil || !p.propertiesIndexed() && len(p.Properties) > 0 || p.index.embedded
}

// mayHaveLists reports whether a set or map list may be at or below p.
func (p *Props) mayHaveLists() bool {
	return p.XListType != nil || p.index == nil || !p.propertiesIndexed() && len(p.Properties) > 0 || p.index.lists
}

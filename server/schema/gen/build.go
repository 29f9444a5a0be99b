package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"platd/config"
)

// gSchema and gField mirror schema.Schema and schema.Field at generation
// time; render writes them out.
type gSchema struct {
	name     string
	typ      string
	format   string
	elem     *gSchema
	listType string
	keys     []string
	mapType  string
	enum     []string
	preserve bool
	nullable bool
	embedded bool
	// untyped marks a hand type whose OpenAPI schema states no type.
	untyped bool
	proto   string
	// unions is the compact JSON of x-kubernetes-unions, "" for none.
	unions string
	// required is the upstream order of the required members, kept only
	// when it is not the order of the fields.
	required []string
	fields   []*gField
	idx      int
	key      string // dedup key of anonymous schemas
}

type gField struct {
	name          string
	schema        *gSchema
	required      bool
	omitEmpty     bool
	pointer       bool
	protoNum      int
	protoAlways   bool
	inline        bool
	patchStrategy string
	mergeKey      string
	def           string
	// refListType and refMapType are list and map types documented beside
	// a reference.
	refListType, refMapType string
	// bareRef marks a property that is a plain $ref, not wrapped in allOf.
	bareRef bool
}

type builder struct {
	docs     map[string]*oaSchema
	protos   protoTables
	rev      string // upstream reverse domain, "io.<...>"
	up       string // upstream domain
	named    map[string]*gSchema
	anon     map[string]*gSchema
	anonList []*gSchema
	list     []*gSchema
	gvks     []gvkRef
	warnings []string
}

type gvkRef struct {
	g      gvk
	schema *gSchema
}

func newBuilder(docs map[string]*oaSchema, protos protoTables) *builder {
	up := config.UpstreamDomain()
	return &builder{
		docs: docs, protos: protos,
		up: up, rev: reverseDomain(up),
		named: map[string]*gSchema{}, anon: map[string]*gSchema{},
	}
}

func reverseDomain(d string) string {
	p := strings.Split(d, ".")
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return strings.Join(p, ".")
}

// protoName maps an OpenAPI schema name to its protobuf message name.
func (b *builder) protoName(name string) string {
	rest, ok := strings.CutPrefix(name, b.rev+".")
	if !ok {
		return ""
	}
	return b.up + "." + strings.ReplaceAll(rest, "-", "_")
}

// openapiName maps a protobuf message name to the OpenAPI naming scheme.
func (b *builder) openapiName(msg string) string {
	rest, ok := strings.CutPrefix(msg, b.up+".")
	if !ok {
		return msg
	}
	return b.rev + "." + strings.ReplaceAll(rest, "_", "-")
}

// handTypes are the types whose JSON form is not their structure, keyed by
// schema name without the reverse domain.
var handTypes = map[string]string{
	"apimachinery.pkg.apis.meta.v1.Time":                                             "time",
	"apimachinery.pkg.apis.meta.v1.MicroTime":                                        "microtime",
	"apimachinery.pkg.api.resource.Quantity":                                         "quantity",
	"apimachinery.pkg.util.intstr.IntOrString":                                       "intorstring",
	"apimachinery.pkg.apis.meta.v1.FieldsV1":                                         "any",
	"apimachinery.pkg.runtime.RawExtension":                                          "any",
	"apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON":                         "any",
	"apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray":       "any",
	"apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool":        "any",
	"apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray": "any",
}

func (b *builder) build() error {
	names := make([]string, 0, len(b.docs))
	for n := range b.docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.namedSchema(n)
	}
	// Index: named schemas sorted by name, then anonymous ones.
	named := make([]*gSchema, 0, len(b.named))
	for _, s := range b.named {
		named = append(named, s)
	}
	sort.Slice(named, func(i, j int) bool { return named[i].name < named[j].name })
	b.list = append(named, b.anonList...)
	for i, s := range b.list {
		s.idx = i
	}
	sort.SliceStable(b.gvks, func(i, j int) bool {
		a, c := b.gvks[i].g, b.gvks[j].g
		if a.Group != c.Group {
			return a.Group < c.Group
		}
		if a.Version != c.Version {
			return a.Version < c.Version
		}
		return a.Kind < c.Kind
	})
	return nil
}

func (b *builder) namedSchema(name string) *gSchema {
	if s, ok := b.named[name]; ok {
		return s
	}
	s := &gSchema{name: name}
	b.named[name] = s
	oa := b.docs[name]
	if oa == nil {
		b.warnings = append(b.warnings, "missing schema "+name)
		s.typ = "any"
		return s
	}
	for _, g := range oa.GVK {
		b.gvks = append(b.gvks, gvkRef{g: g, schema: s})
	}
	short := strings.TrimPrefix(name, b.rev+".")
	if t, ok := handTypes[short]; ok {
		s.typ = t
		s.format = oa.Format
		s.untyped = t == "any" && oa.Type == ""
		if _, has := b.protos[b.protoName(name)]; has {
			s.proto = b.protoName(name)
		}
		return s
	}
	switch {
	case oa.Properties != nil || (oa.Type == "object" && oa.additional() == nil):
		s.typ = "object"
		s.proto = b.protoName(name)
		s.mapType = oa.MapType
		s.preserve = oa.PreserveUnknown
		s.embedded = oa.EmbeddedResource
		if len(oa.Unions) > 0 {
			var buf bytes.Buffer
			if err := json.Compact(&buf, oa.Unions); err == nil {
				s.unions = buf.String()
			}
		}
		s.fields = b.objectFields(s.proto, oa)
		s.fields = applyOverride(short, s.fields)
		applyAlwaysEncoded(short, s.fields)
		var inOrder []string
		for _, f := range s.fields {
			if f.required && !f.inline {
				inOrder = append(inOrder, f.name)
			}
		}
		if strings.Join(inOrder, ",") != strings.Join(oa.Required, ",") {
			s.required = oa.Required
		}
	default:
		a := b.anonSchema(oa)
		*s = *a
		s.name = name
		s.key = ""
	}
	return s
}

// objectFields orders an object's properties: kind and apiVersion first,
// then protobuf field-number order (inline members expanded in place), then
// properties without a protobuf number alphabetically.
func (b *builder) objectFields(msg string, oa *oaSchema) []*gField {
	required := map[string]bool{}
	for _, r := range oa.Required {
		required[r] = true
	}
	used := map[string]bool{}
	var out []*gField
	rows := b.protos[msg]
	inProto := map[string]bool{}
	for _, r := range rows {
		inProto[r.JSONName] = true
	}
	for _, n := range []string{"kind", "apiVersion"} {
		if p := oa.Properties[n]; p != nil && !inProto[n] {
			out = append(out, b.field(n, p, required, nil))
			used[n] = true
		}
	}
	out = append(out, b.protoFields(msg, oa, required, used)...)
	rest := make([]string, 0, len(oa.Properties))
	for n := range oa.Properties {
		if !used[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		out = append(out, b.field(n, oa.Properties[n], required, nil))
	}
	return out
}

// protoFields returns the fields of message msg that the flattened
// properties of oa hold, in field-number order.
func (b *builder) protoFields(msg string, oa *oaSchema, required, used map[string]bool) []*gField {
	var out []*gField
	for i := range b.protos[msg] {
		r := &b.protos[msg][i]
		switch r.JSONName {
		case "-":
			continue
		case "(inline)":
			inner := b.inlineSchema(r.Type, oa, required)
			out = append(out, &gField{schema: inner, inline: true, protoNum: r.Number, protoAlways: r.Emit == "always"})
			for _, f := range inner.fields {
				if f.inline {
					continue
				}
				c := *f
				c.protoNum, c.protoAlways = 0, false
				out = append(out, &c)
				used[f.name] = true
			}
			continue
		}
		p := oa.Properties[r.JSONName]
		if p == nil {
			b.warnings = append(b.warnings, fmt.Sprintf("%s.%s: no OpenAPI property", msg, r.JSONName))
			continue
		}
		out = append(out, b.field(r.JSONName, p, required, r))
		used[r.JSONName] = true
	}
	return out
}

// inlineSchema describes an embedded message whose members the parent's
// OpenAPI schema lists flattened.
func (b *builder) inlineSchema(msg string, parent *oaSchema, required map[string]bool) *gSchema {
	name := b.openapiName(msg)
	if s, ok := b.named[name]; ok {
		return s
	}
	s := &gSchema{name: name, typ: "object", proto: msg}
	b.named[name] = s
	s.fields = b.protoFields(msg, parent, required, map[string]bool{})
	s.fields = applyOverride(strings.TrimPrefix(name, b.rev+"."), s.fields)
	return s
}

func (b *builder) field(name string, p *oaSchema, required map[string]bool, row *protoField) *gField {
	f := &gField{name: name, required: required[name]}
	f.schema = b.propSchema(name, p)
	if p.refTarget() != "" {
		f.refListType, f.refMapType = p.ListType, p.MapType
		f.bareRef = p.Ref != ""
	}
	f.patchStrategy = p.PatchStrategy
	f.mergeKey = p.PatchMergeKey
	if len(p.Default) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, p.Default); err == nil {
			f.def = buf.String()
		}
	}
	structLike := false
	switch f.schema.typ {
	case "object", "time", "microtime", "quantity", "intorstring", "any":
		structLike = true
	}
	f.omitEmpty = !f.required
	if row != nil && f.schema.typ == "array" && row.Label != "repeated" && b.protos[row.Type] != nil {
		f.schema = b.wrappedArray(f.schema, row.Type)
	}
	if row != nil {
		f.protoNum = row.Number
		f.protoAlways = row.Emit == "always"
		f.pointer = strings.HasPrefix(row.GoType, "*")
		if !f.pointer && structLike {
			// encoding/json ignores omitempty on struct values.
			f.omitEmpty = false
		}
	} else {
		f.pointer = structLike
	}
	return f
}

func (b *builder) propSchema(name string, p *oaSchema) *gSchema {
	if t := p.refTarget(); t != "" {
		// A list or map type beside the reference is the field's (field).
		return b.namedSchema(t)
	}
	return b.anonSchema(p)
}

func (b *builder) anonSchema(p *oaSchema) *gSchema {
	s := &gSchema{}
	switch {
	case p.Type == "array":
		s.typ = "array"
		if p.Items != nil {
			s.elem = b.propSchema("items", p.Items)
		} else {
			s.elem = b.anonSchema(&oaSchema{})
		}
		s.listType = p.ListType
		s.keys = p.ListMapKeys
	case p.Type == "object" && p.additional() != nil:
		s.typ = "map"
		s.elem = b.propSchema("additionalProperties", p.additional())
		s.mapType = p.MapType
	case p.Type == "object" && p.Properties != nil:
		s.typ = "object"
		s.mapType = p.MapType
		s.fields = b.objectFields("", p)
	case p.Format == "int-or-string" || p.IntOrString:
		s.typ = "intorstring"
	case p.Type == "string":
		switch p.Format {
		case "byte":
			s.typ = "bytes"
			s.listType = p.ListType
		case "date-time":
			s.typ = "time"
		default:
			s.typ = "string"
		}
		s.format = p.Format
	case p.Type == "integer":
		s.typ, s.format = "integer", p.Format
	case p.Type == "number":
		s.typ, s.format = "number", p.Format
	case p.Type == "boolean":
		s.typ = "boolean"
	case p.Type == "object":
		s.typ = "object"
		s.mapType = p.MapType
	default:
		s.typ = "any"
	}
	for _, e := range p.Enum {
		var v string
		if json.Unmarshal(e, &v) == nil {
			s.enum = append(s.enum, v)
		}
	}
	s.preserve = p.PreserveUnknown
	s.nullable = p.Nullable
	s.embedded = p.EmbeddedResource
	if s.fields != nil {
		// Anonymous objects with properties are not shared.
		b.anonList = append(b.anonList, s)
		return s
	}
	s.key = b.record(s)
	if old, ok := b.anon[s.key]; ok {
		return old
	}
	b.anon[s.key] = s
	b.anonList = append(b.anonList, s)
	return s
}

// wrappedArray is the schema of an array field whose protobuf form is a
// message of its own holding the items (meta/v1 Verbs): a copy of the
// array's schema naming that message.
func (b *builder) wrappedArray(arr *gSchema, msg string) *gSchema {
	c := *arr
	c.name, c.proto = "", msg
	c.key = b.record(&c) + "\t" + msg
	if old, ok := b.anon[c.key]; ok {
		return old
	}
	b.anon[c.key] = &c
	b.anonList = append(b.anonList, &c)
	return &c
}

// record renders the schema line without its index-dependent element
// reference resolved, for de-duplication.
func (b *builder) record(s *gSchema) string {
	elem := ""
	if s.elem != nil {
		if s.elem.name != "" {
			elem = s.elem.name
		} else {
			elem = fmt.Sprintf("%p", s.elem)
		}
	}
	return strings.Join([]string{s.typ, s.format, elem, s.listType, strings.Join(s.keys, ","), s.mapType, strings.Join(s.enum, "\x00"), s.flags()}, "\t")
}

func (s *gSchema) flags() string {
	f := ""
	if s.preserve {
		f += "U"
	}
	if s.nullable {
		f += "N"
	}
	if s.embedded {
		f += "E"
	}
	if s.untyped {
		f += "T"
	}
	return f
}

func (f *gField) flags() string {
	out := ""
	for _, x := range []struct {
		on bool
		c  string
	}{{f.required, "R"}, {f.omitEmpty, "O"}, {f.pointer, "P"}, {f.protoAlways, "A"}, {f.inline, "L"}, {f.bareRef, "B"}} {
		if x.on {
			out += x.c
		}
	}
	return out
}

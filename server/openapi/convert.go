package openapi

import (
	"encoding/json"
	"sort"

	"platd/server/schema"
)

// dialect is the OpenAPI version being written.
type dialect int

const (
	v3 dialect = iota
	v2
)

// refPrefix is where named schemas live in each dialect.
func (dl dialect) refPrefix() string {
	if dl == v3 {
		return "#/components/schemas/"
	}
	return "#/definitions/"
}

// obj is a JSON object under construction; encoding/json writes its keys
// sorted, which keeps documents (and their hashes) deterministic.
type obj = map[string]any

// converter renders schema model values into one document's schema
// objects, collecting every named schema reached.
type converter struct {
	dl dialect
	// named maps each schema name reached to its schema; done holds the
	// rendered ones.
	named map[string]*schema.Schema
	queue []string
	done  map[string]obj
	// gvks lists the kinds to mark each named schema with.
	gvks map[string][]gvk
	// open marks unnamed schemas being rendered, to cut cycles.
	open map[*schema.Schema]bool
	// kindsOf, when set and not nil for a name, lists its kinds in place
	// of gvks.
	kindsOf func(name string) []gvk
}

func newConverter(dl dialect, gvks map[string][]gvk) *converter {
	return &converter{dl: dl, named: map[string]*schema.Schema{}, done: map[string]obj{}, gvks: gvks, open: map[*schema.Schema]bool{}}
}

// ref returns a plain reference to the named schema s and queues it.
func (c *converter) ref(name string, s *schema.Schema) obj {
	if _, ok := c.named[name]; !ok {
		c.named[name] = s
		c.queue = append(c.queue, name)
	}
	return obj{"$ref": c.dl.refPrefix() + name}
}

// definitions renders every queued schema (and what they reach) and
// returns them by name.
func (c *converter) definitions() obj {
	for len(c.queue) > 0 {
		name := c.queue[0]
		c.queue = c.queue[1:]
		s := c.named[name]
		var body obj
		if s == nil {
			// A name no model knows: keep the document valid and open.
			body = obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		} else {
			body = c.body(s)
		}
		ks := c.gvks[name]
		if c.kindsOf != nil {
			if all := c.kindsOf(name); all != nil {
				ks = all
			}
		}
		if len(ks) > 0 {
			sorted := append([]gvk(nil), ks...)
			sort.Slice(sorted, func(i, j int) bool {
				a, b := sorted[i], sorted[j]
				if a.Group != b.Group {
					return a.Group < b.Group
				}
				if a.Version != b.Version {
					return a.Version < b.Version
				}
				return a.Kind < b.Kind
			})
			body["x-kubernetes-group-version-kind"] = sorted
		}
		c.done[name] = body
	}
	out := make(obj, len(c.done))
	for k, v := range c.done {
		out[k] = v
	}
	return out
}

// use renders a schema at a property, item or map-value position: named
// schemas by reference, others inline. At properties and items v3 wraps
// the reference in allOf, as upstream does so that siblings such as
// default may sit beside it; map values take the bare reference. f, when
// not nil, adds the field's default and patch metadata.
func (c *converter) use(s *schema.Schema, f *schema.Field) obj {
	return c.useAt(s, f, f == nil || !f.DocBareRef)
}

func (c *converter) useAt(s *schema.Schema, f *schema.Field, wrap bool) obj {
	var out obj
	switch {
	case s == nil:
		out = obj{}
	case s.Name != "" && c.dl == v3 && wrap:
		out = obj{"allOf": []any{c.ref(s.Name, s)}}
	case s.Name != "":
		out = c.ref(s.Name, s)
	default:
		out = c.body(s)
	}
	if f == nil {
		return out
	}
	if len(f.Default) > 0 && c.dl == v3 && json.Valid(f.Default) {
		out["default"] = json.RawMessage(f.Default)
	}
	if f.PatchStrategy != "" {
		out["x-kubernetes-patch-strategy"] = f.PatchStrategy
	}
	if f.DocListType != "" {
		out["x-kubernetes-list-type"] = f.DocListType
	}
	if f.DocMapType != "" {
		out["x-kubernetes-map-type"] = f.DocMapType
	}
	if f.PatchMergeKey != "" {
		out["x-kubernetes-patch-merge-key"] = f.PatchMergeKey
	}
	return out
}

// elem renders an array's items or a map's values. In v3 an element that
// is a plain value (not a pointer) upstream carries its zero value as
// default, and a reference is wrapped in allOf only to carry it.
func (c *converter) elem(s *schema.Schema) obj {
	def := elemDefault(s)
	if c.dl != v3 || def == "" {
		return c.useAt(s, nil, false)
	}
	out := c.useAt(s, nil, true)
	out["default"] = json.RawMessage(def)
	return out
}

// elemDefault is the default upstream documents on an element of a
// built-in type: "" for a string, 0 for an integer, {} for a struct; none
// for other kinds (quantities, times, bytes, raw JSON, lists) and for the
// values a CustomResourceDefinition declares.
func elemDefault(s *schema.Schema) string {
	if s == nil || s.Loose {
		return ""
	}
	switch {
	case s.Type == schema.String && s.Format == "":
		return `""`
	case s.Type == schema.Integer:
		return "0"
	case s.Type == schema.Object && s.Name != "":
		return "{}"
	}
	return ""
}

// body renders the definition of s itself.
func (c *converter) body(s *schema.Schema) obj {
	if s.Name == "" {
		if c.open[s] {
			return obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		}
		c.open[s] = true
		defer delete(c.open, s)
	}
	if s.Published != nil {
		return c.published(s)
	}
	out := obj{}
	switch s.Type {
	case schema.Object:
		out["type"] = "object"
		if len(s.Fields) > 0 {
			props := obj{}
			var required []string
			for _, f := range s.Fields {
				if f.Inline {
					// The parent lists an embedded message's members itself.
					continue
				}
				props[f.Name] = c.use(f.Schema, f)
				if f.Required {
					required = append(required, f.Name)
				}
			}
			out["properties"] = props
			if len(s.RequiredOrder) > 0 {
				required = s.RequiredOrder
			}
			if len(required) > 0 {
				out["required"] = required
			}
		}
	case schema.Map:
		out["type"] = "object"
		if s.Elem != nil {
			out["additionalProperties"] = c.elem(s.Elem)
		}
	case schema.Array:
		out["type"] = "array"
		out["items"] = c.elem(s.Elem)
		if s.ListType != "" {
			out["x-kubernetes-list-type"] = s.ListType
		}
		if len(s.ListMapKeys) > 0 {
			out["x-kubernetes-list-map-keys"] = s.ListMapKeys
		}
	case schema.String:
		out["type"] = "string"
	case schema.Integer:
		out["type"] = "integer"
	case schema.Number:
		out["type"] = "number"
	case schema.Boolean:
		out["type"] = "boolean"
	case schema.Time, schema.MicroTime:
		out["type"], out["format"] = "string", "date-time"
	case schema.Bytes:
		out["type"], out["format"] = "string", "byte"
		if s.ListType != "" {
			// Upstream marks some byte strings (Go byte slices) atomic.
			out["x-kubernetes-list-type"] = s.ListType
		}
	case schema.Quantity:
		if c.dl == v3 {
			out["oneOf"] = []any{obj{"type": "string"}, obj{"type": "number"}}
		} else {
			out["type"] = "string"
		}
	case schema.IntOrString:
		c.intOrString(s, out)
	case schema.Any:
		switch {
		case s.Name == "":
			out["x-kubernetes-preserve-unknown-fields"] = true
		case !s.Untyped:
			out["type"] = "object"
		}
	}
	if s.Format != "" && s.Type != schema.IntOrString {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		out["enum"] = s.Enum
	}
	if s.MapType != "" && (s.Type == schema.Object || s.Type == schema.Map) {
		out["x-kubernetes-map-type"] = s.MapType
	}
	if s.PreserveUnknown {
		out["x-kubernetes-preserve-unknown-fields"] = true
	}
	if len(s.Unions) > 0 {
		unions := make([]any, 0, len(s.Unions))
		for _, u := range s.Unions {
			unions = append(unions, obj{"discriminator": u.Discriminator, "fields-to-discriminateBy": u.Fields})
		}
		out["x-kubernetes-unions"] = unions
	}
	if s.Nullable && c.dl == v3 {
		out["nullable"] = true
	}
	return out
}

// published renders a schema that carries its own definition (a custom
// resource's, as its CRD wrote it): that definition, with the members
// whose schemas are named (object metadata) referenced as the document's
// other named schemas are.
func (c *converter) published(s *schema.Schema) obj {
	out := obj{}
	for k, v := range s.Published {
		out[k] = v
	}
	props := obj{}
	if p, ok := out["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	for _, f := range s.Fields {
		if f.Schema != nil && f.Schema.Name != "" {
			props[f.Name] = c.use(f.Schema, nil)
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	return out
}

// intOrString writes the built-in named form (format int-or-string) or the
// custom resource form (x-kubernetes-int-or-string).
func (c *converter) intOrString(s *schema.Schema, out obj) {
	alts := []any{obj{"type": "integer"}, obj{"type": "string"}}
	switch {
	case s.Name != "" && c.dl == v3:
		out["format"], out["oneOf"] = "int-or-string", alts
	case s.Name != "":
		out["type"], out["format"] = "string", "int-or-string"
	case c.dl == v3:
		out["anyOf"], out["x-kubernetes-int-or-string"] = alts, true
	default:
		out["x-kubernetes-int-or-string"] = true
	}
}

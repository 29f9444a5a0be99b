// Package customresource serves the types CustomResourceDefinitions
// declare: it turns a CRD into descriptors, and keeps the registry in step
// with the stored CRDs.
package customresource

import (
	"slices"
	"strings"

	"platd/server/jsonschema"
	"platd/server/schema"
)

// structure converts a version's OpenAPI schema into the schema that
// decodes, prunes, defaults and encodes its objects. Every node is Loose:
// a custom resource of the wrong shape is refused by validation with
// upstream's texts, not by decoding. Scalars are kept as decoded (Any):
// the validator judges their types and formats. Members are sorted by
// name, as upstream writes custom resources (generic maps), but for
// metadata, which comes first; meta, the
// schema of object metadata, keeps its own order, in which the
// resourceVersion comes before any label or annotation key.
func structure(p *jsonschema.Props, meta *schema.Schema) *schema.Schema {
	root := node(p, meta)
	if root.Type != schema.Object {
		root = &schema.Schema{Type: schema.Object, Loose: true, PreserveUnknown: root.PreserveUnknown}
	}
	return withResourceFields(root, meta)
}

// withResourceFields adds the members every resource has (apiVersion,
// kind, metadata) to an object's schema, replacing what the CRD says of
// them: metadata is always the standard object metadata.
func withResourceFields(s *schema.Schema, meta *schema.Schema) *schema.Schema {
	fields := slices.DeleteFunc(slices.Clone(s.Fields), func(f *schema.Field) bool {
		return f.Name == "apiVersion" || f.Name == "kind" || f.Name == "metadata"
	})
	str := &schema.Schema{Type: schema.String, Loose: true}
	sortFields(fields)
	// Metadata comes first, as in every stored object: the storage
	// engine finds the resourceVersion by its first occurrence.
	s.Fields = append([]*schema.Field{
		{Name: "apiVersion", Schema: str, OmitEmpty: true, Pointer: true},
		{Name: "kind", Schema: str, OmitEmpty: true, Pointer: true},
		{Name: "metadata", Schema: meta, OmitEmpty: true, Pointer: true},
	}, fields...)
	return s
}

func sortFields(fields []*schema.Field) {
	slices.SortFunc(fields, func(a, b *schema.Field) int { return strings.Compare(a.Name, b.Name) })
}

// node converts one schema node.
func node(p *jsonschema.Props, meta *schema.Schema) *schema.Schema {
	if p == nil {
		return &schema.Schema{Type: schema.Any, Loose: true}
	}
	s := &schema.Schema{Loose: true, Nullable: p.Nullable, Format: p.Format}
	if p.Default != nil {
		// As a map value or list item, a null takes the default.
		s.NullDefault = p.Default.Raw
	}
	switch {
	case p.XIntOrString:
		s.Type = schema.Any
		return s
	case p.XEmbeddedResource:
		s.Type = schema.Object
		s.EmbeddedResource = true
		s.PreserveUnknown = p.PreservesUnknown()
		s.Fields = fieldsOf(p, meta)
		return withResourceFields(s, meta)
	}
	switch p.Type {
	case "object":
		if vs := p.ValueSchema(); vs != nil && len(p.Properties) == 0 {
			s.Type = schema.Map
			s.Elem = node(vs, meta)
		} else {
			s.Type = schema.Object
			s.Fields = fieldsOf(p, meta)
			// additionalProperties: true keeps every member, as
			// preserve-unknown does.
			s.PreserveUnknown = p.PreservesUnknown() || p.AdditionalProperties != nil && p.AdditionalProperties.Allows && len(p.Properties) == 0
		}
		if p.XMapType != nil {
			s.MapType = *p.XMapType
		}
	case "array":
		s.Type = schema.Array
		s.Elem = node(p.ItemSchema(), meta)
		s.ListType = p.ListType()
		s.ListMapKeys = p.XListMapKeys
	default:
		// Scalars, and untyped nodes that preserve what they hold.
		s.Type = schema.Any
	}
	return s
}

// fieldsOf converts an object's properties, sorted by name.
func fieldsOf(p *jsonschema.Props, meta *schema.Schema) []*schema.Field {
	fields := make([]*schema.Field, 0, len(p.Properties))
	for name, prop := range p.Properties {
		f := &schema.Field{Name: name, Schema: node(&prop, meta), OmitEmpty: true, Pointer: true}
		if prop.Default != nil {
			f.Default = prop.Default.Raw
		}
		fields = append(fields, f)
	}
	sortFields(fields)
	return fields
}

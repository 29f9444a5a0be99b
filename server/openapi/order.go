package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The v3 documents are written with their members in upstream's order:
// the order of the OpenAPI object's fields (openapi, info, paths,
// components; a schema's description, type, ..., properties; an
// operation's tags, ..., responses), extensions last and sorted, and the
// members of maps (paths, properties, schemas, media types, response
// codes) sorted by name. Clients do not care; byte-level comparisons and
// diffs against upstream's documents do.

// memberOrder ranks the members of the document's objects. One order
// serves them all: where two kinds of object share a member name, their
// orders agree.
var memberOrder = rankOf(
	"openapi", "info", "paths", "components", "schemas", "securitySchemes",
	"$ref", "tags", "summary", "description", "title", "version", "type", "nullable", "format",
	"default", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength",
	"pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties", "minProperties",
	"operationId", "get", "put", "post", "delete", "options", "head", "patch", "parameters",
	"requestBody", "content", "required", "schema", "items", "allOf", "oneOf", "anyOf", "not",
	"properties", "additionalProperties", "patternProperties", "dependencies", "additionalItems",
	"definitions", "responses",
)

// paramOrder and schemeOrder rank parameters' and security schemes'
// members, whose orders differ from the others'.
var (
	paramOrder  = rankOf("name", "in", "description", "required", "schema")
	schemeOrder = rankOf("type", "description", "name", "in")
)

func rankOf(names ...string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i
	}
	return m
}

// orderCtx says how the members of an object are ordered.
type orderCtx int

const (
	ctxObject orderCtx = iota // by memberOrder
	ctxMap                    // sorted by name
	ctxParam                  // by paramOrder
	ctxScheme                 // by schemeOrder
	ctxData                   // a value's JSON as it is (defaults, enums)
)

// mapMembers are the members whose values are maps keyed by name.
var mapMembers = map[string]bool{
	"paths": true, "properties": true, "schemas": true, "content": true, "responses": true,
	"securitySchemes": true, "patternProperties": true, "definitions": true, "fields-to-discriminateBy": true,
}

// dataMembers hold values, not schema objects.
var dataMembers = map[string]bool{"default": true, "enum": true, "example": true}

// childCtx is the context of the value of member name in an object of
// context ctx.
func childCtx(ctx orderCtx, name string) orderCtx {
	switch {
	case ctx == ctxData:
		return ctxData
	case ctx == ctxMap:
		// A map's values are objects, but security schemes rank their own.
		return ctxObject
	case dataMembers[name]:
		return ctxData
	case mapMembers[name]:
		return ctxMap
	case name == "parameters":
		return ctxParam
	}
	return ctxObject
}

// marshalOrdered writes v (a document built of obj, slices and plain
// values) as compact JSON with members in upstream's order.
func marshalOrdered(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeOrdered(&buf, v, ctxObject, ""); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeOrdered writes v in context ctx; parent names the member v is the
// value of (security schemes are told apart by it).
func writeOrdered(buf *bytes.Buffer, v any, ctx orderCtx, parent string) error {
	if ctx == ctxData {
		return writePlain(buf, v)
	}
	switch x := v.(type) {
	case map[string]any:
		if parent == "securitySchemes" {
			ctx = ctxMap
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortMembers(keys, ctx, parent)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writePlain(buf, k); err != nil {
				return err
			}
			buf.WriteByte(':')
			cc := childCtx(ctx, k)
			if ctx == ctxMap && parent == "securitySchemes" {
				cc = ctxScheme
			}
			if err := writeOrdered(buf, x[k], cc, k); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			// The items of a list keep the list's context (parameters).
			if err := writeOrdered(buf, e, ctx, parent); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case gvk:
		// An operation's kind lists its members as upstream's struct does.
		fmt.Fprintf(buf, `{"group":%s,"version":%s,"kind":%s}`, quote(x.Group), quote(x.Version), quote(x.Kind))
		return nil
	}
	return writePlain(buf, v)
}

// sortMembers orders the member names of an object in context ctx.
func sortMembers(keys []string, ctx orderCtx, parent string) {
	var rank map[string]int
	switch ctx {
	case ctxMap:
		sort.Strings(keys)
		return
	case ctxParam:
		rank = paramOrder
	case ctxScheme:
		rank = schemeOrder
	default:
		rank = memberOrder
	}
	// Ranked members first, then others by name, extensions last.
	class := func(k string) int {
		switch _, ok := rank[k]; {
		case ok:
			return 0
		case strings.HasPrefix(k, "x-"):
			return 2
		}
		return 1
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		ca, cb := class(a), class(b)
		if ca != cb {
			return ca < cb
		}
		if ca == 0 {
			return rank[a] < rank[b]
		}
		return a < b
	})
}

// writePlain writes v as encoding/json does (members sorted, HTML-safe).
func writePlain(buf *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"platd/server/jsonschema"
)

// ErrSchemaNotFound is the error of a kind no served document declares.
var ErrSchemaNotFound = errors.New("schema not found")

// refPrefix starts every reference between the schemas of a v3 document.
const refPrefix = "#/components/schemas/"

// KindSchemas resolves kinds to their schemas; see Handler.KindSchemas.
type KindSchemas func(group, version, kind string) (*jsonschema.Props, error)

// KindSchemas returns a resolver of kinds' schemas read from the v3
// documents served now, as a client of those documents reads them: the
// schema marked with the kind's x-kubernetes-group-version-kind, with
// every reference replaced by the schema it names (a reference wrapped
// in allOf too), a reference back into itself by an object that keeps
// unknown fields, and the int-or-string format of built-in types as the
// x-kubernetes-int-or-string extension. An error wraps ErrSchemaNotFound
// when the group-version or kind is not served.
//
// The resolver reads each document once; it is for one goroutine and
// holds the documents it read until dropped.
func (h *Handler) KindSchemas() KindSchemas {
	set := h.currentV3()
	read := map[string]map[string]any{}
	return func(group, version, kind string) (*jsonschema.Props, error) {
		key := indexKey(group, version)
		components, ok := read[key]
		if !ok {
			doc, served := set.docs[key]
			if !served {
				return nil, fmt.Errorf("group-version %q: %w", key, ErrSchemaNotFound)
			}
			var parsed struct {
				Components struct {
					Schemas map[string]any `json:"schemas"`
				} `json:"components"`
			}
			if err := json.Unmarshal(doc.body, &parsed); err != nil {
				return nil, fmt.Errorf("reading the document of %q: %w", key, err)
			}
			components = parsed.Components.Schemas
			read[key] = components
		}
		for name, s := range components {
			node, _ := s.(map[string]any)
			if !declaresKind(node, group, version, kind) {
				continue
			}
			resolved := resolveRefs(components, node, map[string]bool{name: true})
			raw, err := json.Marshal(resolved)
			if err != nil {
				return nil, fmt.Errorf("encoding the schema of %s: %w", kind, err)
			}
			return jsonschema.ParseJSON(raw)
		}
		return nil, fmt.Errorf("kind %s in %q: %w", kind, key, ErrSchemaNotFound)
	}
}

// declaresKind reports whether a component schema is that of the kind.
func declaresKind(node map[string]any, group, version, kind string) bool {
	gvks, _ := node["x-kubernetes-group-version-kind"].([]any)
	for _, g := range gvks {
		m, _ := g.(map[string]any)
		if m["group"] == group && m["version"] == version && m["kind"] == kind {
			return true
		}
	}
	return false
}

// refOf is the component a schema node stands for: its $ref, or that of
// the single allOf entry a reference is wrapped in to keep a description.
func refOf(node map[string]any) (string, bool) {
	if ref, ok := node["$ref"].(string); ok {
		return strings.TrimPrefix(ref, refPrefix), true
	}
	if all, ok := node["allOf"].([]any); ok && len(all) == 1 {
		if inner, ok := all[0].(map[string]any); ok {
			return refOf(inner)
		}
	}
	return "", false
}

// resolveRefs returns node with its references replaced, into new maps
// where anything changes; components stay as they are. visiting holds
// the components being resolved on the way down: a reference to one of
// them is a cycle, cut by an object that keeps unknown fields.
func resolveRefs(components map[string]any, node map[string]any, visiting map[string]bool) map[string]any {
	if ref, ok := refOf(node); ok {
		if visiting[ref] {
			return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		}
		target, _ := components[ref].(map[string]any)
		if target == nil {
			// A dangling reference stands for nothing rules can read.
			return map[string]any{}
		}
		visiting[ref] = true
		defer delete(visiting, ref)
		node = target
	}
	out := make(map[string]any, len(node)+1)
	for k, v := range node {
		out[k] = v
	}
	if node["format"] == "int-or-string" {
		out["x-kubernetes-int-or-string"] = true
	}
	if props, ok := node["properties"].(map[string]any); ok {
		resolved := make(map[string]any, len(props))
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				resolved[name] = resolveRefs(components, pm, visiting)
			}
		}
		out["properties"] = resolved
	}
	if ap, ok := node["additionalProperties"].(map[string]any); ok {
		out["additionalProperties"] = resolveRefs(components, ap, visiting)
	}
	if items, ok := node["items"].(map[string]any); ok {
		out["items"] = resolveRefs(components, items, visiting)
	}
	return out
}

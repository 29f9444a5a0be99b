package patch

import (
	"strings"

	"platd/server/schema"
)

// fieldMeta is what strategic merge needs to know about one member of an
// object: its schema (nil when free-form, where merge-patch semantics with
// directives apply) and its patch strategy and merge key.
type fieldMeta struct {
	schema   *schema.Schema
	strategy string // "merge", "replace" or ""
	mergeKey string
}

// memberMeta looks up the member key of a value described by s. A map's
// members share its value schema and have no strategy. A member an object
// does not declare is an error unless the object preserves unknown fields.
func memberMeta(s *schema.Schema, key string) (fieldMeta, error) {
	if s == nil {
		return fieldMeta{}, nil
	}
	switch s.Type {
	case schema.Map:
		return fieldMeta{schema: s.Elem}, nil
	case schema.Object:
		f := s.Field(key)
		if f == nil {
			if s.PreserveUnknown {
				return fieldMeta{}, nil
			}
			return fieldMeta{}, strategicErr("unable to find api field in struct %s for the json field %q", structName(s), key)
		}
		_, strategy, err := splitStrategy(f.PatchStrategy)
		if err != nil {
			return fieldMeta{}, err
		}
		return fieldMeta{schema: f.Schema, strategy: strategy, mergeKey: f.PatchMergeKey}, nil
	}
	return fieldMeta{}, nil
}

// elem is the item schema of a list member, nil when it is not a list.
func (m fieldMeta) elem() *schema.Schema {
	if m.schema == nil || m.schema.Type != schema.Array {
		return nil
	}
	return m.schema.Elem
}

// splitStrategy separates retainKeys from the other strategy of a
// comma-joined patch strategy.
func splitStrategy(ps string) (retainKeys bool, strategy string, err error) {
	if ps == "" {
		return false, "", nil
	}
	parts := strings.Split(ps, ",")
	switch len(parts) {
	case 1:
		if parts[0] == retainKeysStrategy {
			return true, "", nil
		}
		return false, parts[0], nil
	case 2:
		switch {
		case parts[0] == retainKeysStrategy:
			return true, parts[1], nil
		case parts[1] == retainKeysStrategy:
			return true, parts[0], nil
		}
	}
	return false, "", strategicErr("unexpected patch strategy: %v", parts)
}

// structName is the Go type name of an object schema, the last segment of
// its schema name.
func structName(s *schema.Schema) string {
	return s.Name[strings.LastIndexByte(s.Name, '.')+1:]
}

// kindName names the Go kind of an item schema, for error texts.
func kindName(s *schema.Schema) string {
	if s == nil {
		return "interface"
	}
	switch s.Type {
	case schema.Object:
		return "struct"
	case schema.Map:
		return "map"
	case schema.Array:
		return "slice"
	}
	return "interface"
}

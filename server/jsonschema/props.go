// Package jsonschema holds the OpenAPI v3 schema a CustomResourceDefinition
// declares for its custom resources (JSONSchemaProps), parsed into Go
// values, and the rules derived from it: the structural-schema checks a
// CRD is validated with, and the validation of custom resources.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"

	"platd/server/schema"
)

// Props is one node of a JSONSchemaProps tree, as a CRD's
// spec.versions[].schema.openAPIV3Schema spells it. Absent keywords are the
// zero value; pointers mark keywords whose absence differs from their
// zero value.
type Props struct {
	ID          string  `json:"id,omitempty"`
	Schema      string  `json:"$schema,omitempty"`
	Ref         *string `json:"$ref,omitempty"`
	Description string  `json:"description,omitempty"`
	Type        string  `json:"type,omitempty"`
	Format      string  `json:"format,omitempty"`
	Title       string  `json:"title,omitempty"`
	// Default is the member's default value, Example an example of it.
	Default *JSON `json:"default,omitempty"`
	Example *JSON `json:"example,omitempty"`

	Maximum          *float64 `json:"maximum,omitempty"`
	ExclusiveMaximum bool     `json:"exclusiveMaximum,omitempty"`
	Minimum          *float64 `json:"minimum,omitempty"`
	ExclusiveMinimum bool     `json:"exclusiveMinimum,omitempty"`
	MaxLength        *int64   `json:"maxLength,omitempty"`
	MinLength        *int64   `json:"minLength,omitempty"`
	Pattern          string   `json:"pattern,omitempty"`
	MaxItems         *int64   `json:"maxItems,omitempty"`
	MinItems         *int64   `json:"minItems,omitempty"`
	UniqueItems      bool     `json:"uniqueItems,omitempty"`
	MultipleOf       *float64 `json:"multipleOf,omitempty"`
	Enum             []JSON   `json:"enum,omitempty"`
	MaxProperties    *int64   `json:"maxProperties,omitempty"`
	MinProperties    *int64   `json:"minProperties,omitempty"`
	Required         []string `json:"required,omitempty"`

	Items                *PropsOrArray             `json:"items,omitempty"`
	AllOf                []Props                   `json:"allOf,omitempty"`
	OneOf                []Props                   `json:"oneOf,omitempty"`
	AnyOf                []Props                   `json:"anyOf,omitempty"`
	Not                  *Props                    `json:"not,omitempty"`
	Properties           map[string]Props          `json:"properties,omitempty"`
	AdditionalProperties *PropsOrBool              `json:"additionalProperties,omitempty"`
	PatternProperties    map[string]Props          `json:"patternProperties,omitempty"`
	Dependencies         map[string]PropsOrStrings `json:"dependencies,omitempty"`
	AdditionalItems      *PropsOrBool              `json:"additionalItems,omitempty"`
	Definitions          map[string]Props          `json:"definitions,omitempty"`
	ExternalDocs         *ExternalDocs             `json:"externalDocs,omitempty"`
	Nullable             bool                      `json:"nullable,omitempty"`

	XPreserveUnknownFields *bool            `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	XEmbeddedResource      bool             `json:"x-kubernetes-embedded-resource,omitempty"`
	XIntOrString           bool             `json:"x-kubernetes-int-or-string,omitempty"`
	XListMapKeys           []string         `json:"x-kubernetes-list-map-keys,omitempty"`
	XListType              *string          `json:"x-kubernetes-list-type,omitempty"`
	XMapType               *string          `json:"x-kubernetes-map-type,omitempty"`
	XValidations           []ValidationRule `json:"x-kubernetes-validations,omitempty"`

	// index is what validation derives from the node, set by Parse;
	// compare nodes with sameProps, not reflect.DeepEqual.
	index *index
}

// ValidationRule is one x-kubernetes-validations entry: a CEL rule.
type ValidationRule struct {
	Rule              string  `json:"rule"`
	Message           string  `json:"message,omitempty"`
	MessageExpression string  `json:"messageExpression,omitempty"`
	Reason            *string `json:"reason,omitempty"`
	FieldPath         string  `json:"fieldPath,omitempty"`
	OptionalOldSelf   *bool   `json:"optionalOldSelf,omitempty"`
}

// ExternalDocs points at documentation outside the schema.
type ExternalDocs struct {
	Description string `json:"description,omitempty"`
	URL         string `json:"url,omitempty"`
}

// JSON is an arbitrary JSON value held in the schema (default, enum,
// example), kept as written.
type JSON struct {
	Raw []byte
}

// UnmarshalJSON keeps the value's bytes.
func (j *JSON) UnmarshalJSON(b []byte) error {
	j.Raw = append([]byte(nil), b...)
	return nil
}

// MarshalJSON writes the value back as it was read.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j.Raw) == 0 {
		return []byte("null"), nil
	}
	return j.Raw, nil
}

// Value decodes the value into the generic form decoded objects use:
// map[string]any, []any, string, int64 for integers that fit, float64,
// bool or nil.
func (j JSON) Value() (any, error) {
	if len(j.Raw) == 0 {
		return nil, nil
	}
	return schema.DecodeAny(j.Raw)
}

// PropsOrArray is items: one schema for every item, or (refused in a
// structural schema) one per position.
type PropsOrArray struct {
	Schema      *Props
	JSONSchemas []Props
}

// UnmarshalJSON reads an object or an array of objects.
func (p *PropsOrArray) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &p.JSONSchemas)
	}
	p.Schema = &Props{}
	return json.Unmarshal(b, p.Schema)
}

// MarshalJSON writes the form that was read.
func (p PropsOrArray) MarshalJSON() ([]byte, error) {
	if p.Schema != nil {
		return json.Marshal(p.Schema)
	}
	return json.Marshal(p.JSONSchemas)
}

// PropsOrBool is additionalProperties or additionalItems: a boolean, or
// a schema (which allows them).
type PropsOrBool struct {
	Allows bool
	Schema *Props
}

// UnmarshalJSON reads a boolean or an object.
func (p *PropsOrBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && (b[0] == 't' || b[0] == 'f') {
		return json.Unmarshal(b, &p.Allows)
	}
	p.Allows = true
	p.Schema = &Props{}
	return json.Unmarshal(b, p.Schema)
}

// MarshalJSON writes the schema, or the boolean when there is none.
func (p PropsOrBool) MarshalJSON() ([]byte, error) {
	if p.Schema != nil {
		return json.Marshal(p.Schema)
	}
	return json.Marshal(p.Allows)
}

// PropsOrStrings is a dependencies entry: a schema or a list of property
// names.
type PropsOrStrings struct {
	Schema   *Props
	Property []string
}

// UnmarshalJSON reads an array of strings or an object.
func (p *PropsOrStrings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &p.Property)
	}
	p.Schema = &Props{}
	return json.Unmarshal(b, p.Schema)
}

// MarshalJSON writes the form that was read.
func (p PropsOrStrings) MarshalJSON() ([]byte, error) {
	if p.Schema != nil {
		return json.Marshal(p.Schema)
	}
	return json.Marshal(p.Property)
}

// Parse reads a JSONSchemaProps value in its generic decoded form (the
// openAPIV3Schema member of a decoded CRD).
func Parse(v any) (*Props, error) {
	raw, err := schema.AppendAny(nil, v)
	if err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	return ParseJSON(raw)
}

// ParseJSON reads a JSONSchemaProps document.
func ParseJSON(raw []byte) (*Props, error) {
	p := &Props{}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	p.buildIndex()
	return p, nil
}

// PreservesUnknown reports whether x-kubernetes-preserve-unknown-fields
// is true at this node.
func (p *Props) PreservesUnknown() bool {
	return p.XPreserveUnknownFields != nil && *p.XPreserveUnknownFields
}

// ListType is x-kubernetes-list-type, "atomic" when unset.
func (p *Props) ListType() string {
	if p.XListType == nil {
		return "atomic"
	}
	return *p.XListType
}

// MapType is x-kubernetes-map-type, "granular" when unset.
func (p *Props) MapType() string {
	if p.XMapType == nil {
		return "granular"
	}
	return *p.XMapType
}

// ItemSchema is the schema of every item of an array, nil when none.
func (p *Props) ItemSchema() *Props {
	if p.Items == nil {
		return nil
	}
	return p.Items.Schema
}

// ValueSchema is the schema of every value of a map
// (additionalProperties as a schema), nil when none.
func (p *Props) ValueSchema() *Props {
	if p.AdditionalProperties == nil {
		return nil
	}
	return p.AdditionalProperties.Schema
}

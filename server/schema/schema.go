// Package schema is the structural description of every resource type and
// the operations derived from it: decoding with unknown and duplicate field
// detection, pruning, defaulting, validation and canonical encoding.
package schema

// Type is the shape of a value.
type Type uint8

// The value shapes. Time, MicroTime, Quantity, IntOrString, Bytes and Any
// are the hand-encoded types whose JSON form is not their structure.
const (
	Object Type = iota // fixed properties
	Map                // string keys, values of one schema (AdditionalProperties)
	Array
	String
	Integer
	Number
	Boolean
	IntOrString
	Quantity
	Time      // RFC 3339 in UTC, seconds precision; zero renders as null
	MicroTime // RFC 3339 with microseconds
	Bytes     // base64 in JSON
	Any       // arbitrary JSON kept as is (RawExtension, FieldsV1, JSON)
)

// Schema describes one value. Schemas of named types are shared: a field's
// Schema points at the one *Schema of its type, so the graph may be cyclic.
type Schema struct {
	// Name is the type's schema name (<reverse domain>.api.core.v1.ConfigMap,
	// the upstream domain replaced by the brand's at load time), empty for
	// anonymous schemas.
	Name string
	Type Type
	// Format is the OpenAPI format (int32, int64, byte, date-time, ...).
	Format string
	// Fields are an Object's properties in the order they are encoded;
	// their names are unique (Encode relies on it).
	Fields []*Field
	// Elem is the value schema of a Map or the item schema of an Array.
	Elem *Schema
	// ListType is "atomic", "set" or "map" for arrays; "" means atomic.
	ListType string
	// ListMapKeys are the key fields of a ListType "map" array.
	ListMapKeys []string
	// MapType is "granular" or "atomic" for maps and objects.
	MapType string
	// Enum lists the allowed values of a string, when closed.
	Enum []string
	// PreserveUnknown keeps fields the schema does not declare.
	PreserveUnknown bool
	// Nullable lets a JSON null stand for the value.
	Nullable bool
	// Published, when set, is the OpenAPI definition documents publish
	// for this schema in place of one derived from its structure: a
	// custom resource's schema as its CRD wrote it, with the descriptions
	// and validation keywords this model does not hold.
	Published map[string]any
	// Loose marks a value declared by a CustomResourceDefinition, whose
	// objects are judged by validation, not by decoding: a value of
	// another JSON kind is kept as decoded for validation to refuse, a
	// null member or map value is kept when its schema is Nullable (and
	// dropped otherwise, as upstream prunes it), a null item stays null,
	// and a kept null is encoded as null.
	Loose bool
	// EmbeddedResource marks an object that is itself a complete resource
	// (kind, apiVersion, metadata).
	EmbeddedResource bool
	// Untyped marks a named Any schema whose documents state no type (raw
	// JSON values: JSON, JSONSchemaPropsOrBool and the like); other named
	// Any schemas are documented as objects.
	Untyped bool
	// Unions are the object's unions (x-kubernetes-unions): members of
	// which one at most is set, named by a discriminator member.
	Unions []Union
	// RequiredOrder, when set, is the order documents list the required
	// members in (upstream's, its Go types' order), when it is not the
	// order of Fields.
	RequiredOrder []string
	// ProtoMessage is the fully qualified protobuf message of an Object
	// (<domain>.api.core.v1.ConfigMap with the brand's domain), empty for
	// scalars and for types without a protobuf form.
	ProtoMessage string

	// NullDefault is the JSON default a null map value or list item of
	// this schema takes unless the schema is Nullable: a custom resource
	// schema's additionalProperties or items default, which upstream's
	// defaulting gives nulls only (an absent value has nothing to fill).
	NullDefault []byte
	nullDef     any  // NullDefault decoded, set by Seal
	hasNullD    bool // nullDef holds a decoded default

	index  map[string]*Field
	sealed bool
	// defaulted are the fields defaulting may act on (see markDefaulted),
	// set by Seal.
	defaulted []*Field
}

// Union is one union of an object's members: the discriminator member and,
// for each member of the union, the discriminator value that selects it.
type Union struct {
	Discriminator string
	Fields        map[string]string
}

// Field is one property of an Object.
type Field struct {
	// Name is the JSON member name; empty for an Inline field, whose
	// members are listed separately in the parent.
	Name   string
	Schema *Schema
	// Required fields must be present (validation).
	Required bool
	// OmitEmpty drops the member from encoded output when it is absent or,
	// unless Pointer, its value is the zero value of its type (empty string,
	// 0, false, empty map or list). Fields that are not OmitEmpty are always
	// encoded when absent: scalars as their zero value, lists and maps as
	// null, Time and MicroTime as null, structs as {} holding their own
	// always-encoded members.
	OmitEmpty bool
	// Pointer says the Go field is a pointer: an OmitEmpty pointer field is
	// encoded whenever present, even when its value is the zero value, and a
	// non-OmitEmpty pointer field encodes as null when absent.
	Pointer bool
	// Default is the JSON default applied when the member is absent.
	Default []byte
	// Immutable fields may not change on update.
	Immutable bool
	// PatchStrategy and PatchMergeKey drive strategic merge patch
	// ("merge", "replace", "retainKeys", comma-joined).
	PatchStrategy string
	PatchMergeKey string
	// ProtoNumber is the protobuf field number, 0 when the field has none.
	ProtoNumber int
	// ProtoAlways says the protobuf encoder writes the field even when it
	// is zero (non-pointer fields upstream).
	ProtoAlways bool
	// DocListType and DocMapType are the list and map types documents
	// state beside the field's reference to a named schema (upstream's
	// markers on the field); they do not change how values are handled.
	DocListType, DocMapType string
	// DocBareRef says documents reference the field's named schema
	// directly rather than through allOf (upstream's fields with nothing
	// beside the reference, not even a description).
	DocBareRef bool
	// Inline marks an embedded message whose members appear in the parent
	// in JSON but as a nested message under ProtoNumber in protobuf. Its
	// Schema lists those members; the parent lists them too, with
	// ProtoNumber 0, at the place encoding/json writes them.
	Inline bool

	def  any  // Default decoded, set by Seal
	hasD bool // def holds a decoded default
}

// Field returns the property called name, or nil.
func (s *Schema) Field(name string) *Field {
	if s == nil {
		return nil
	}
	if s.index == nil {
		return s.lookup(name)
	}
	return s.index[name]
}

func (s *Schema) lookup(name string) *Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Seal builds lookup indexes and decodes defaults for s and every schema it
// reaches; call once after the schema graph is complete and before it is
// shared between goroutines. Schemas already sealed are skipped, so sealing
// many roots of one graph costs one pass.
func (s *Schema) Seal() {
	var fresh []*Schema
	var walk func(*Schema)
	walk = func(x *Schema) {
		// sealed is set before the walk goes deeper: it also stops
		// cycles.
		if x == nil || x.sealed {
			return
		}
		x.sealed = true
		fresh = append(fresh, x)
		if len(x.NullDefault) > 0 && !x.hasNullD {
			x.nullDef, x.hasNullD = parseDefault(x.NullDefault, x)
		}
		if len(x.Fields) > 0 {
			x.index = make(map[string]*Field, len(x.Fields))
			for _, f := range x.Fields {
				if f.Name != "" {
					x.index[f.Name] = f
				}
				if len(f.Default) > 0 && !f.hasD {
					f.def, f.hasD = parseDefault(f.Default, f.Schema)
				}
				walk(f.Schema)
			}
		}
		walk(x.Elem)
	}
	walk(s)
	markDefaulted(fresh)
}

// markDefaulted sets the defaulted fields of schemas just sealed: those
// with a default, and those whose value may hold one below (an object
// with defaulted fields, or maps and lists of such). Defaulting visits
// only these: an object's other fields are many, mostly scalars, and
// looking each up changes nothing. Schemas sealed before are complete
// already; a cycle without a default anywhere stays without.
func markDefaulted(fresh []*Schema) {
	for changed := true; changed; {
		changed = false
		for _, x := range fresh {
			var d []*Field
			for _, f := range x.Fields {
				if !f.Inline && (f.hasD || mayDefault(f.Schema)) {
					d = append(d, f)
				}
			}
			if len(d) != len(x.defaulted) {
				x.defaulted, changed = d, true
			}
		}
	}
}

// mayDefault reports whether defaulting a value of schema s may set
// something, as defaultValue walks it: as far as markDefaulted knows yet.
func mayDefault(s *Schema) bool {
	for range maxElemChain {
		switch {
		case s == nil:
			return false
		case s.Type == Object:
			return len(s.defaulted) > 0
		case s.Type != Map && s.Type != Array:
			return false
		}
		s = s.Elem
	}
	return true // a chain of lists and maps this long is walked anyway
}

// maxElemChain bounds mayDefault's walk down nested lists and maps.
const maxElemChain = 64

// nullValue is what a null map value or list item of schema s becomes: a
// copy of its NullDefault, when it has one and is not Nullable.
func (s *Schema) nullValue() (any, bool) {
	if s == nil || s.Nullable || !s.hasNullD {
		return nil, false
	}
	return DeepCopy(s.nullDef), true
}

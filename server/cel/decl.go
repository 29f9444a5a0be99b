package cel

import (
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"platd/server/jsonschema"
)

// Size facts of serialized JSON values, used to bound how many values of
// a kind one request can hold (upstream's estimates, so that cost
// estimates and refusals match).
const (
	maxRequestSizeBytes = 3 * 1024 * 1024
	minStringSize       = 2  // ""
	minBoolSize         = 4  // true
	minNumberSize       = 1  // 0
	minDurationSizeJSON = 3  // "0"
	maxDurationSizeJSON = 32 // longest formatted duration
	jsonDateSize        = 12 // "2006-01-02"
	minDatetimeSizeJSON = 21 // date, T and time, quoted
	maxDatetimeSizeJSON = 32 // "9999-12-31T23:59:59.999999999Z", quoted
)

// declKind is what a schema node is in CEL.
type declKind int

const (
	kindSimple declKind = iota // string, int, double, bool, bytes, timestamp, duration, dyn
	kindObject                 // properties: a CEL object type with fields
	kindMap                    // additionalProperties: map(string, V)
	kindList                   // items: list(V)
)

// declType is the CEL view of one schema node: its CEL type, the fields
// of an object, the element of a list or map, and upstream's size
// bounds (MaxElements: the most characters, items or properties a value
// can hold; minSize: the fewest bytes it serializes to).
type declType struct {
	kind   declKind
	name   string // object type name once assigned; "object" before
	simple *cel.Type
	// format of a string node: "byte", "duration", "date", "date-time" or ""
	format string
	// intOrString marks x-kubernetes-int-or-string (dyn).
	intOrString bool
	nullable    bool

	fields map[string]*declField // escaped name → field (objects)
	elem   *declType             // list items, map values

	listType string   // atomic, set or map (lists)
	mapKeys  []string // x-kubernetes-list-map-keys

	maxElements int64
	minSize     int64
}

// declField is one property of an object type.
type declField struct {
	name     string // the property name as written in JSON
	escaped  string
	typ      *declType
	required bool
}

func zeroIfNegative(v int64) int64 {
	if v < 0 {
		return 0
	}
	return v
}

// schemaDeclType converts a schema node into its CEL form, or nil when
// the node is not visible to rules (no type, or a list or map of such).
// isRoot adds apiVersion, kind and metadata.name/generateName, which rules
// at a resource's root (and an embedded resource's) can always read.
func schemaDeclType(s *jsonschema.Props, isRoot bool) *declType {
	if s == nil {
		return nil
	}
	if s.XIntOrString {
		d := &declType{kind: kindSimple, simple: cel.DynType, intOrString: true, minSize: 1, nullable: s.Nullable}
		if s.MaxLength != nil {
			d.maxElements = zeroIfNegative(*s.MaxLength) * 4
		} else {
			d.maxElements = maxRequestSizeBytes - 2
		}
		return d
	}
	if isRoot {
		s = withTypeAndObjectMeta(s)
	}
	switch s.Type {
	case "array":
		items := s.ItemSchema()
		if items == nil {
			return nil
		}
		it := schemaDeclType(items, items.XEmbeddedResource)
		if it == nil {
			return nil
		}
		var maxItems int64
		if s.MaxItems != nil {
			maxItems = zeroIfNegative(*s.MaxItems)
		} else {
			maxItems = (maxRequestSizeBytes - 2) / (it.minSize + 1)
		}
		return &declType{kind: kindList, elem: it, maxElements: maxItems, minSize: 2,
			listType: s.ListType(), mapKeys: s.XListMapKeys, nullable: s.Nullable}
	case "object":
		if vs := s.ValueSchema(); vs != nil {
			vt := schemaDeclType(vs, vs.XEmbeddedResource)
			if vt == nil {
				return nil
			}
			var maxProps int64
			if s.MaxProperties != nil {
				maxProps = zeroIfNegative(*s.MaxProperties)
			} else {
				maxProps = (maxRequestSizeBytes - 2) / (vt.minSize + 6)
			}
			return &declType{kind: kindMap, elem: vt, maxElements: maxProps, minSize: 2, nullable: s.Nullable}
		}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		d := &declType{kind: kindObject, name: "object", fields: map[string]*declField{}, minSize: 2, nullable: s.Nullable}
		for name := range s.Properties {
			prop := s.Properties[name]
			ft := schemaDeclType(&prop, prop.XEmbeddedResource)
			if ft == nil {
				continue
			}
			if esc, ok := Escape(name); ok {
				d.fields[esc] = &declField{name: name, escaped: esc, typ: ft, required: required[name]}
			}
			// Required properties without a default always serialize.
			if required[name] && prop.Default == nil {
				d.minSize += int64(len(name)) + ft.minSize + 4
			}
		}
		return d
	case "string":
		d := &declType{kind: kindSimple, format: s.Format, nullable: s.Nullable}
		switch s.Format {
		case "byte":
			d.simple, d.minSize = cel.BytesType, minStringSize
			if s.MaxLength != nil {
				d.maxElements = zeroIfNegative(*s.MaxLength)
			} else {
				d.maxElements = maxRequestSizeBytes - 2
			}
			return d
		case "duration":
			d.simple, d.minSize, d.maxElements = cel.DurationType, minDurationSizeJSON, maxDurationSizeJSON
			return d
		case "date":
			d.simple, d.minSize, d.maxElements = cel.TimestampType, jsonDateSize, jsonDateSize
			return d
		case "date-time":
			d.simple, d.minSize, d.maxElements = cel.TimestampType, minDatetimeSizeJSON, maxDatetimeSizeJSON
			return d
		}
		d.format = ""
		d.simple, d.minSize = cel.StringType, minStringSize
		switch {
		case s.MaxLength != nil:
			d.maxElements = zeroIfNegative(*s.MaxLength) * 4
		case len(s.Enum) > 0:
			for _, e := range s.Enum {
				if v, err := e.Value(); err == nil {
					if str, ok := v.(string); ok && int64(len(str)) > d.maxElements {
						d.maxElements = int64(len(str))
					}
				}
			}
		default:
			d.maxElements = maxRequestSizeBytes - 2
		}
		return d
	case "boolean":
		return &declType{kind: kindSimple, simple: cel.BoolType, minSize: minBoolSize, nullable: s.Nullable}
	case "number":
		return &declType{kind: kindSimple, simple: cel.DoubleType, minSize: minNumberSize, nullable: s.Nullable}
	case "integer":
		return &declType{kind: kindSimple, simple: cel.IntType, minSize: minNumberSize, nullable: s.Nullable}
	}
	return nil
}

// withTypeAndObjectMeta makes sure kind, apiVersion and metadata.name and
// metadata.generateName are declared, as at every resource root; the
// schema is copied when it has to change.
func withTypeAndObjectMeta(s *jsonschema.Props) *jsonschema.Props {
	isType := func(p jsonschema.Props, ok bool, t string) bool { return ok && p.Type == t }
	kind, okK := s.Properties["kind"]
	av, okA := s.Properties["apiVersion"]
	md, okM := s.Properties["metadata"]
	if isType(kind, okK, "string") && isType(av, okA, "string") && isType(md, okM, "object") {
		n, okN := md.Properties["name"]
		g, okG := md.Properties["generateName"]
		if isType(n, okN, "string") && isType(g, okG, "string") {
			return s
		}
	}
	c := *s
	c.Properties = make(map[string]jsonschema.Props, len(s.Properties)+3)
	for k, v := range s.Properties {
		c.Properties[k] = v
	}
	str := jsonschema.Props{Type: "string"}
	c.Properties["kind"] = str
	c.Properties["apiVersion"] = str
	c.Properties["metadata"] = jsonschema.Props{Type: "object", Properties: map[string]jsonschema.Props{
		"name": str, "generateName": str,
	}}
	return &c
}

// assignNames names every object type under d, prefix first: fields
// append ".<field>", list items ".@idx", map values ".@elem". The names
// are unique per compile so rules cannot depend on them.
func (d *declType) assignNames(prefix string) {
	if d == nil {
		return
	}
	switch d.kind {
	case kindObject:
		d.name = prefix
		for _, f := range d.fields {
			f.typ.assignNames(prefix + "." + f.escaped)
		}
	case kindList:
		d.elem.assignNames(prefix + ".@idx")
	case kindMap:
		d.elem.assignNames(prefix + ".@elem")
	}
}

// celType is the CEL type of values of d.
func (d *declType) celType() *cel.Type {
	switch d.kind {
	case kindObject:
		return types.NewObjectType(d.name)
	case kindList:
		return cel.ListType(d.elem.celType())
	case kindMap:
		return cel.MapType(cel.StringType, d.elem.celType())
	}
	return d.simple
}

// collectObjects records every object type under d by name.
func (d *declType) collectObjects(into map[string]*declType) {
	if d == nil {
		return
	}
	switch d.kind {
	case kindObject:
		into[d.name] = d
		for _, f := range d.fields {
			f.typ.collectObjects(into)
		}
	case kindList, kindMap:
		d.elem.collectObjects(into)
	}
}

// celReserved are CEL's reserved words; a property so named is escaped
// as __word__.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true,
	"as": true, "break": true, "const": true, "continue": true, "else": true,
	"for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true,
	"var": true, "void": true, "while": true,
}

// Escape turns a property name into the CEL identifier rules use for it:
// "__" → "__underscores__", "." → "__dot__", "-" → "__dash__",
// "/" → "__slash__", a reserved word w → "__w__". It reports false for a
// name CEL cannot spell (empty, leading digit, other characters): such
// properties are invisible to rules.
func Escape(name string) (string, bool) {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return "", false
	}
	if celReserved[name] {
		return "__" + name + "__", true
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' && i+1 < len(name) && name[i+1] == '_':
			b.WriteString("__underscores__")
			i++
			changed = true
		case c == '.':
			b.WriteString("__dot__")
			changed = true
		case c == '-':
			b.WriteString("__dash__")
			changed = true
		case c == '/':
			b.WriteString("__slash__")
			changed = true
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	if !changed {
		return name, true
	}
	return b.String(), true
}

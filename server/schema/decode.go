package schema

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Decoded is the result of Decode. Object belongs to the caller.
type Decoded struct {
	// Object is the decoded value with undeclared members pruned (unless
	// their schema preserves them) and JSON nulls of members dropped.
	Object map[string]any
	// Unknown lists the paths of undeclared members in input order, named
	// as upstream strict decoding names them ("metadata.bogusMeta",
	// "spec.limits[0].foo").
	Unknown []string
	// Duplicates lists the paths of members that occur twice in one object.
	Duplicates []string
}

// Decode parses a JSON object guided by s. Syntax errors win over type
// errors; type errors carry encoding/json's text ("json: cannot unmarshal
// number into Go struct field ConfigMap.data of type string") and wrap
// ErrType; syntax errors wrap ErrSyntax. Unknown and duplicate members are
// not errors: they are reported in the result for the caller's field
// validation policy. The top-level kind and apiVersion are always kept.
// Decode is safe for concurrent use; data is not retained (strings that
// need no unescaping share one copy of it).
func Decode(data []byte, s *Schema) (*Decoded, error) {
	return decode(data, string(data), s)
}

// DecodeOwned is Decode for data the caller hands over: the decoded
// strings share data itself instead of a copy, so data must never be
// written again. It saves one copy of a request body, which for a large
// object is a large share of what a write allocates.
func DecodeOwned(data []byte, s *Schema) (*Decoded, error) {
	if len(data) == 0 {
		return Decode(data, s)
	}
	return decode(data, unsafe.String(&data[0], len(data)), s)
}

func decode(data []byte, text string, s *Schema) (*Decoded, error) {
	d := &decoder{scanner: scanner{data: data, text: text, maxDepth: anyMaxDepth}}
	d.path = make([]byte, 0, 64)
	d.gopath = make([]byte, 0, 64)
	v, err := d.value(s, 0, structName(s))
	if err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	if d.typeErr != nil {
		return nil, d.typeErr
	}
	obj, _ := v.(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	return &Decoded{Object: obj, Unknown: d.unknown, Duplicates: d.dups}, nil
}

// DecodeStored is Decode's Object for bytes this server encoded itself:
// the same object, built without tracking member paths. On any error it
// decodes again with Decode, so errors are Decode's. data is not retained.
func DecodeStored(data []byte, s *Schema) (map[string]any, error) {
	return decodeStored(data, s, "")
}

// DecodeStoredShared is DecodeStored for an object the caller drops soon
// (to render or match it): its strings that need no unescaping share one
// copy of data instead of one allocation each, and keep that whole copy
// alive while any of them lives.
func DecodeStoredShared(data []byte, s *Schema) (map[string]any, error) {
	return decodeStored(data, s, string(data))
}

// DecodeStoredAliased is DecodeStored for data that is never written again
// (a stored value): its strings that need no unescaping are slices of data
// itself, with no copy, and keep data alive while any of them lives.
func DecodeStoredAliased(data []byte, s *Schema) (map[string]any, error) {
	if len(data) == 0 {
		return DecodeStored(data, s)
	}
	return decodeStored(data, s, unsafe.String(&data[0], len(data)))
}

func decodeStored(data []byte, s *Schema, text string) (map[string]any, error) {
	d := &decoder{scanner: scanner{data: data, text: text, maxDepth: anyMaxDepth}, trusted: true}
	v, err := d.value(s, 0, structName(s))
	if err == nil {
		err = d.end()
	}
	if err != nil || d.typeErr != nil {
		dec, err := Decode(data, s)
		if err != nil {
			return nil, err
		}
		return dec.Object, nil
	}
	obj, _ := v.(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, nil
}

type decoder struct {
	scanner
	// trusted skips the bookkeeping only Decode's Unknown, Duplicates and
	// error texts need (DecodeStored).
	trusted bool
	path    []byte // member path with list indices, for unknown/duplicate names
	gopath  []byte // struct field path, for type errors
	unknown []string
	dups    []string
}

// structName is the Go type name of an object schema: the last segment of
// its schema name.
func structName(s *Schema) string {
	if s == nil || s.Name == "" {
		return ""
	}
	return s.Name[strings.LastIndexByte(s.Name, '.')+1:]
}

// goType names the Go type encoding/json would report for s.
func goType(s *Schema) string {
	if s == nil {
		return "interface {}"
	}
	switch s.Type {
	case String:
		return "string"
	case Integer:
		switch s.Format {
		case "int32":
			return "int32"
		case "int64":
			return "int64"
		}
		return "int"
	case Number:
		return "float64"
	case Boolean:
		return "bool"
	case Map:
		return "map[string]" + goType(s.Elem)
	case Array:
		return "[]" + goType(s.Elem)
	case Bytes:
		return "[]uint8"
	case Object:
		n := s.Name
		if n == "" {
			return "struct {}"
		}
		i := strings.LastIndexByte(n, '.')
		j := strings.LastIndexByte(n[:max(i, 0)], '.')
		return n[j+1:]
	}
	return "string"
}

// typeError records the first type mismatch.
func (d *decoder) typeError(what string, s *Schema, owner string) {
	if d.typeErr != nil {
		return
	}
	var msg string
	if len(d.gopath) == 0 || owner == "" {
		msg = "json: cannot unmarshal " + what + " into Go value of type " + goType(s)
	} else {
		msg = "json: cannot unmarshal " + what + " into Go struct field " + owner + "." + string(d.gopath) + " of type " + goType(s)
	}
	d.typeErr = &wrapped{msg: msg, kind: ErrType}
}

func (d *decoder) valueError(err error) {
	if d.typeErr == nil {
		d.typeErr = &wrapped{msg: err.Error(), kind: ErrType}
	}
}

func kindWord(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

// mismatch skips a value of the wrong JSON kind and records the error.
func (d *decoder) mismatch(c byte, s *Schema, owner string) (any, error) {
	if s.Loose {
		return d.anyValue()
	}
	what := kindWord(c)
	start := d.pos
	if err := d.skip(); err != nil {
		return nil, err
	}
	if what == "number" && (s.Type == Integer) {
		what += " " + string(d.data[start:d.pos])
	}
	d.typeError(what, s, owner)
	return nil, nil
}

// value decodes one value against s. A nil result with nil error means
// JSON null or a recorded type error: the member is absent.
func (d *decoder) value(s *Schema, depth int, owner string) (any, error) {
	if depth > anyMaxDepth {
		// Recursive schemas (JSONSchemaProps) could otherwise nest without
		// bound.
		return nil, errDepth()
	}
	c, err := d.expectValue()
	if err != nil {
		return nil, err
	}
	if c == 'n' {
		if _, err := d.literal(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if s == nil {
		return d.anyValue()
	}
	switch s.Type {
	case Object:
		if c != '{' {
			return d.mismatch(c, s, owner)
		}
		d.pos++
		return d.object(s, depth, owner)
	case Map:
		if c != '{' {
			return d.mismatch(c, s, owner)
		}
		d.pos++
		return d.mapValue(s, depth, owner)
	case Array:
		if c != '[' {
			return d.mismatch(c, s, owner)
		}
		d.pos++
		return d.array(s, depth, owner)
	case String:
		if c != '"' {
			return d.mismatch(c, s, owner)
		}
		return d.str()
	case Boolean:
		if c != 't' && c != 'f' {
			return d.mismatch(c, s, owner)
		}
		l, err := d.literal()
		return l == 't', err
	case Integer:
		if c != '-' && (c < '0' || c > '9') {
			return d.mismatch(c, s, owner)
		}
		text, _, err := d.number()
		if err != nil {
			return nil, err
		}
		n, perr := strconv.ParseInt(string(text), 10, 64)
		if perr != nil || s.Format == "int32" && (n < math.MinInt32 || n > math.MaxInt32) {
			d.typeError("number "+string(text), s, owner)
			return nil, nil
		}
		return n, nil
	case Number:
		if c != '-' && (c < '0' || c > '9') {
			return d.mismatch(c, s, owner)
		}
		text, _, err := d.number()
		if err != nil {
			return nil, err
		}
		f, perr := strconv.ParseFloat(string(text), 64)
		if perr != nil {
			d.typeError("number "+string(text), s, owner)
			return nil, nil
		}
		return f, nil
	case IntOrString:
		switch {
		case c == '"':
			return d.str()
		case c == '-' || c >= '0' && c <= '9':
			text, _, err := d.number()
			if err != nil {
				return nil, err
			}
			n, perr := strconv.ParseInt(string(text), 10, 32)
			if perr != nil {
				d.typeErrorPlain("number "+string(text), "int32")
				return nil, nil
			}
			return n, nil
		}
		return d.mismatch(c, s, owner)
	case Quantity:
		var text string
		switch {
		case c == '"':
			text, err = d.str()
		case c == '-' || c >= '0' && c <= '9':
			var b []byte
			b, _, err = d.number()
			text = string(b)
		default:
			return d.mismatch(c, s, owner)
		}
		if err != nil {
			return nil, err
		}
		q, qerr := CanonicalQuantity(text)
		if qerr != nil {
			d.valueError(qerr)
			return nil, nil
		}
		return q, nil
	case Time, MicroTime:
		if c != '"' {
			return d.mismatch(c, &Schema{Type: String}, owner)
		}
		text, err := d.str()
		if err != nil {
			return nil, err
		}
		layout := time.RFC3339
		if s.Type == MicroTime {
			// Upstream's MicroTime reads exactly six fractional digits.
			layout = rfc3339Micro
		}
		t, terr := time.Parse(layout, text)
		if terr != nil {
			d.valueError(terr)
			return nil, nil
		}
		var buf [40]byte
		if canon := appendTime(buf[:0], t, s.Type); string(canon) != text {
			return string(canon), nil
		}
		return text, nil // already canonical, as the server writes times
	case Bytes:
		if c != '"' {
			return d.mismatch(c, s, owner)
		}
		text, err := d.str()
		if err != nil {
			return nil, err
		}
		return d.bytes(text), nil
	}
	return d.anyValue()
}

func (d *decoder) typeErrorPlain(what, typ string) {
	if d.typeErr == nil {
		d.typeErr = &wrapped{msg: "json: cannot unmarshal " + what + " into Go value of type " + typ, kind: ErrType}
	}
}

// bytes validates base64 and returns its canonical spelling (encoding/json
// ignores \r and \n and re-encodes on output).
func (d *decoder) bytes(text string) any {
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		d.valueError(err)
		return nil
	}
	if canon := base64.StdEncoding.EncodeToString(raw); canon != text {
		return canon
	}
	return text
}

// formatTime renders a Time in seconds precision, a MicroTime in
// microseconds, both in UTC.
func formatTime(t time.Time, typ Type) string {
	return string(appendTime(nil, t, typ))
}

// rfc3339Micro is the layout MicroTime values are read and written in.
const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// appendTime appends formatTime's text.
func appendTime(dst []byte, t time.Time, typ Type) []byte {
	t = t.UTC()
	if typ == MicroTime {
		return t.AppendFormat(dst, rfc3339Micro)
	}
	return t.AppendFormat(dst, time.RFC3339)
}

func (d *decoder) pushMember(name string) (int, int) {
	pl, gl := len(d.path), len(d.gopath)
	if pl > 0 {
		d.path = append(d.path, '.')
	}
	d.path = append(d.path, name...)
	if gl > 0 {
		d.gopath = append(d.gopath, '.')
	}
	d.gopath = append(d.gopath, name...)
	return pl, gl
}

// smallMapHint sizes a decoded object's map: objects rarely hold more
// than a few of their schema's fields, and a hint beyond one map group
// allocates a full table that mostly stays empty.
const smallMapHint = 8

// memberOf finds the field a member's key names (nil when the schema has
// none) and the member's name; esc says the key needs unescaping.
func (s *Schema) memberOf(key []byte, esc bool) (*Field, string) {
	var f *Field
	switch {
	case esc:
		name := unquote(key)
		if f = s.Field(name); f == nil {
			return nil, name
		}
	case s.index != nil:
		f = s.index[string(key)]
	default:
		f = s.Field(string(key))
	}
	if f == nil {
		return nil, string(key)
	}
	return f, f.Name
}

func (d *decoder) object(s *Schema, depth int, owner string) (any, error) {
	out := make(map[string]any, min(len(s.Fields), smallMapHint))
	if n := structName(s); n != "" {
		owner = n
	}
	err := d.eachMember(func(key []byte, esc bool) error {
		f, name := s.memberOf(key, esc)
		if !d.trusted {
			pl, gl := d.pushMember(name)
			defer func() { d.path, d.gopath = d.path[:pl], d.gopath[:gl] }()
		}
		if f == nil {
			if depth == 0 && (name == "kind" || name == "apiVersion") {
				v, err := d.value(&Schema{Type: String}, depth+1, owner)
				if v != nil {
					out[name] = v
				}
				return err
			}
			if s.PreserveUnknown {
				v, err := d.anyValue()
				if _, dup := out[name]; dup && !d.trusted {
					d.dups = append(d.dups, string(d.path))
				}
				out[name] = v
				return err
			}
			if !d.trusted {
				d.unknown = append(d.unknown, string(d.path))
			}
			return d.skip()
		}
		v, err := d.value(f.Schema, depth+1, owner)
		if err != nil {
			return err
		}
		prev, dup := out[name]
		if dup && !d.trusted {
			d.dups = append(d.dups, string(d.path))
		}
		if v == nil {
			if s.Loose && f.Schema != nil && f.Schema.Nullable {
				out[name] = nil
				return nil
			}
			delete(out, name)
			return nil
		}
		if dup {
			v = mergeDuplicate(prev, v, f.Schema)
		}
		out[name] = v
		return nil
	})
	return out, err
}

// mergeDuplicate combines a member that appears twice, as upstream's
// decoder does when it decodes the second occurrence into the value the
// first one left: an object's members merge (recursively), a map's keys
// are added (each key's value replaced whole), and everything else —
// scalars, lists, arbitrary JSON — is replaced.
func mergeDuplicate(prev, next any, s *Schema) any {
	pm, ok1 := prev.(map[string]any)
	nm, ok2 := next.(map[string]any)
	if !ok1 || !ok2 || s == nil {
		return next
	}
	switch s.Type {
	case Object:
		for k, v := range nm {
			if f := s.Field(k); f != nil && !f.Inline {
				if old, ok := pm[k]; ok {
					v = mergeDuplicate(old, v, f.Schema)
				}
			}
			pm[k] = v
		}
		return pm
	case Map:
		for k, v := range nm {
			pm[k] = v
		}
		return pm
	}
	return next
}

// putMember stores a decoded map member as DecodeStored keeps it: a null
// is the element's zero value, kept as null in a loose map of nullable
// values and dropped from a loose map of others.
func putMember(out map[string]any, s *Schema, name string, v any) {
	switch {
	case v != nil:
		out[name] = v
	case !s.Loose:
		out[name] = zeroValue(s.Elem)
	case s.Elem == nil || s.Elem.Nullable:
		out[name] = nil
	}
}

func (d *decoder) mapValue(s *Schema, depth int, owner string) (any, error) {
	out := map[string]any{}
	err := d.eachMember(func(key []byte, esc bool) error {
		if d.trusted {
			name := d.stringOf(key, esc)
			v, err := d.value(s.Elem, depth+1, owner)
			if err != nil {
				return err
			}
			putMember(out, s, name, v)
			return nil
		}
		name := d.stringOf(key, esc)
		pl := len(d.path)
		if pl > 0 {
			d.path = append(d.path, '.')
		}
		d.path = append(d.path, name...)
		defer func() { d.path = d.path[:pl] }()
		v, err := d.value(s.Elem, depth+1, owner)
		if err != nil {
			return err
		}
		if _, dup := out[name]; dup {
			d.dups = append(d.dups, string(d.path))
		}
		if v == nil && s.Loose {
			if dv, ok := s.Elem.nullValue(); ok {
				out[name] = dv
			} else if s.Elem == nil || s.Elem.Nullable {
				out[name] = nil
			} else {
				delete(out, name)
			}
			return nil
		}
		if v == nil {
			v = zeroValue(s.Elem)
		}
		out[name] = v
		return nil
	})
	return out, err
}

func (d *decoder) array(s *Schema, depth int, owner string) (any, error) {
	out := []any{}
	err := d.eachElem(func(i int) error {
		if !d.trusted {
			pl := len(d.path)
			d.path = append(d.path, '[')
			d.path = strconv.AppendInt(d.path, int64(i), 10)
			d.path = append(d.path, ']')
			defer func() { d.path = d.path[:pl] }()
		}
		v, err := d.value(s.Elem, depth+1, owner)
		if err != nil {
			return err
		}
		if v == nil && !s.Loose {
			v = zeroValue(s.Elem)
		} else if v == nil {
			if dv, ok := s.Elem.nullValue(); ok {
				v = dv
			}
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// zeroValue is the value a JSON null element takes: the zero value of the
// element's Go type as encoding/json leaves it.
func zeroValue(s *Schema) any {
	if s == nil {
		return nil
	}
	switch s.Type {
	case String:
		return ""
	case Integer, IntOrString:
		return int64(0)
	case Number:
		return float64(0)
	case Boolean:
		return false
	case Quantity:
		return "0"
	case Object:
		return map[string]any{}
	}
	return nil
}

package protobuf

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/schema"
)

// Unmarshal decodes raw, the protobuf message of an object of schema s (the
// raw of the envelope), into its generic JSON form: the value
// schema.Decode would return for upstream's JSON rendering of the same
// object. Unknown field numbers are skipped; a known field with the wrong
// wire type is an error. Members encoding/json omits (omitempty zero
// scalars, nil pointers, empty lists and maps, zero times) are absent;
// members it always writes are present, with their zero value if the
// message lacked them. kind and apiVersion are not set. Repeated numeric
// scalars may be packed or unpacked. raw is only read and not retained.
// Errors wrap ErrMalformed, ErrValue, ErrRawNotJSON or ErrNoProtobuf and
// name the member; no input makes Unmarshal panic.
func Unmarshal(raw []byte, s *schema.Schema) (map[string]any, error) {
	if s == nil || s.Type != schema.Object || s.ProtoMessage == "" {
		return nil, ErrNoProtobuf
	}
	d := decoder{base: raw, all: string(raw)}
	out := map[string]any{}
	if err := d.object(raw, s, out); err != nil {
		return nil, err
	}
	return out, nil
}

// decoder carries the state of one Unmarshal call.
type decoder struct {
	depth int
	props *schema.Schema // innermost JSONSchemaProps, as in encoder
	// base is the input and all one string copy of it: decoded strings
	// are slices of all, one allocation instead of one per string.
	base []byte
	all  string
}

// text returns v, a subslice of base, as a string sharing all's memory;
// other slices are copied.
func (d *decoder) text(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	off := cap(d.base) - cap(v)
	if off >= 0 && off+len(v) <= len(d.base) && &d.base[off] == &v[0] {
		return d.all[off : off+len(v)]
	}
	return string(v)
}

func (d *decoder) enter() error {
	if d.depth++; d.depth > maxDepth {
		return malformed("nesting deeper than %d", maxDepth)
	}
	return nil
}

// object decodes the message b into out, which may already hold members
// (a repeated message field merges, an inline message shares its parent).
func (d *decoder) object(b []byte, s *schema.Schema, out map[string]any) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	l := layoutOf(s)
	if l.isProps {
		saved := d.props
		d.props = s
		defer func() { d.props = saved }()
	}
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return parseErr(n)
		}
		b = b[n:]
		f := l.field(int(num))
		if f == nil {
			if n = protowire.ConsumeFieldValue(num, wt, b); n < 0 {
				return parseErr(n)
			}
			b = b[n:]
			continue
		}
		n, err := d.field(b, wt, f, out)
		if err != nil {
			return at(f.Name, err)
		}
		b = b[n:]
	}
	d.fill(out, s)
	return nil
}

// fill sets the members encoding/json always writes that are still absent.
func (d *decoder) fill(out map[string]any, s *schema.Schema) {
	if d.depth > maxDepth {
		return
	}
	l := layoutOf(s)
	for _, f := range l.fill {
		if _, ok := out[f.Name]; !ok {
			if z := d.zero(f.Schema); z != nil {
				out[f.Name] = z
			}
		}
	}
	for _, f := range l.ordered {
		if f.Inline {
			d.depth++
			d.fill(out, f.Schema)
			d.depth--
		}
	}
}

// zero is the generic form of a Go zero value as encoding/json writes it;
// nil where it writes null.
func (d *decoder) zero(s *schema.Schema) any {
	switch s.Type {
	case schema.String:
		if layoutOf(s).kind == duration {
			return "0s"
		}
		return ""
	case schema.Integer, schema.IntOrString:
		return int64(0)
	case schema.Number:
		return float64(0)
	case schema.Boolean:
		return false
	case schema.Quantity:
		return "0"
	case schema.Object:
		m := map[string]any{}
		d.depth++
		d.fill(m, s)
		d.depth--
		return m
	}
	return nil
}

// field decodes one occurrence of f from b (just past the tag) into out and
// returns the bytes consumed.
func (d *decoder) field(b []byte, wt protowire.Type, f *schema.Field, out map[string]any) (int, error) {
	fs := f.Schema
	switch {
	case f.Inline:
		v, n, err := consumeBytes(b, wt)
		if err != nil {
			return 0, err
		}
		return n, d.object(v, fs, out)
	case fs.Type == schema.Object:
		v, n, err := consumeBytes(b, wt)
		if err != nil {
			return 0, err
		}
		if fs.ProtoMessage == "" {
			return 0, ErrNoProtobuf
		}
		m, _ := out[f.Name].(map[string]any)
		if m == nil {
			m = map[string]any{}
			out[f.Name] = m
		}
		return n, d.object(v, fs, m)
	case fs.Type == schema.Map:
		v, n, err := consumeBytes(b, wt)
		if err != nil {
			return 0, err
		}
		k, val, err := d.entry(v, fs.Elem)
		if err != nil {
			return 0, err
		}
		m, _ := out[f.Name].(map[string]any)
		if m == nil {
			m = map[string]any{}
			out[f.Name] = m
		}
		m[k] = val
		return n, nil
	case fs.Type == schema.Array && layoutOf(fs).kind != stringsWrapper:
		a, _ := out[f.Name].([]any)
		n, a, err := d.elements(b, wt, fs.Elem, a)
		if err != nil {
			return 0, err
		}
		out[f.Name] = a
		return n, nil
	}
	v, n, err := d.single(b, wt, fs)
	if err != nil {
		return 0, err
	}
	switch {
	case v == nil, f.OmitEmpty && !f.Pointer && isZero(v):
		delete(out, f.Name)
	default:
		out[f.Name] = v
	}
	return n, nil
}

// isZero reports whether omitempty drops a decoded scalar or wrapper list.
func isZero(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case int64:
		return x == 0
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		return len(x) == 0
	}
	return false
}

// elements appends one or, when packed, several elements of a repeated
// field to a.
func (d *decoder) elements(b []byte, wt protowire.Type, elem *schema.Schema, a []any) (int, []any, error) {
	if elem == nil {
		return 0, a, ErrNoProtobuf
	}
	packable := elem.Type == schema.Integer || elem.Type == schema.Boolean || elem.Type == schema.Number
	if packable && wt == protowire.BytesType {
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, a, parseErr(n)
		}
		ewt := protowire.VarintType
		if elem.Type == schema.Number {
			ewt = protowire.Fixed64Type
		}
		for len(v) > 0 {
			x, m, err := d.single(v, ewt, elem)
			if err != nil {
				return 0, a, atIndex(len(a), err)
			}
			a = append(a, x)
			v = v[m:]
		}
		return n, a, nil
	}
	x, n, err := d.single(b, wt, elem)
	if err != nil {
		return 0, a, atIndex(len(a), err)
	}
	return n, append(a, x), nil
}

// entry decodes a map entry; a missing value is entryZero's.
func (d *decoder) entry(b []byte, elem *schema.Schema) (string, any, error) {
	if elem == nil {
		return "", nil, ErrNoProtobuf
	}
	var key string
	var val any
	seen := false
	err := d.each(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case entryKey:
			v, n, err := consumeBytes(b, wt)
			key = d.text(v)
			return n, err
		case entryValue:
			v, n, err := d.single(b, wt, elem)
			if err != nil {
				return 0, atIndex(key, err)
			}
			val, seen = v, true
			return n, nil
		}
		return -1, nil
	})
	if err != nil {
		return "", nil, err
	}
	if !seen {
		val = d.entryZero(elem)
	}
	return key, val, nil
}

// entryZero is the value of a map entry that carries none. Upstream
// decodes each entry's value into a fresh empty message, so a list (a map
// value is one only inside a wrapper message, as ExtraValue) reads back as
// [], not null; other types as zero does.
func (d *decoder) entryZero(elem *schema.Schema) any {
	if elem.Type == schema.Array {
		return []any{}
	}
	return d.zero(elem)
}

// each calls fn for each field of b with the bytes after the tag; fn
// returns the bytes it consumed, or -1 to have the field skipped.
func (d *decoder) each(b []byte, fn func(num protowire.Number, wt protowire.Type, b []byte) (int, error)) error {
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return parseErr(n)
		}
		b = b[n:]
		n, err := fn(num, wt, b)
		if err != nil {
			return err
		}
		if n < 0 {
			if n = protowire.ConsumeFieldValue(num, wt, b); n < 0 {
				return parseErr(n)
			}
		}
		b = b[n:]
	}
	return nil
}

func consumeBytes(b []byte, wt protowire.Type) ([]byte, int, error) {
	if wt != protowire.BytesType {
		return nil, 0, malformed("wire type %d where length-delimited belongs", wt)
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, 0, parseErr(n)
	}
	return v, n, nil
}

// single decodes one value of schema s and returns the bytes consumed; a
// nil value means absent (the zero time, a null raw extension).
func (d *decoder) single(b []byte, wt protowire.Type, s *schema.Schema) (any, int, error) {
	switch s.Type {
	case schema.Integer, schema.Boolean:
		if wt != protowire.VarintType {
			return nil, 0, malformed("wire type %d where varint belongs", wt)
		}
		x, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, 0, parseErr(n)
		}
		if s.Type == schema.Boolean {
			return x != 0, n, nil
		}
		if s.Format == "int32" {
			return int64(int32(x)), n, nil
		}
		return int64(x), n, nil
	case schema.Number:
		if wt != protowire.Fixed64Type {
			return nil, 0, malformed("wire type %d where fixed64 belongs", wt)
		}
		x, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return nil, 0, parseErr(n)
		}
		f := math.Float64frombits(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, 0, fmt.Errorf("%w: %v has no JSON form", ErrValue, f)
		}
		return f, n, nil
	}
	v, n, err := consumeBytes(b, wt)
	if err != nil {
		return nil, 0, err
	}
	var x any
	switch s.Type {
	case schema.String:
		if layoutOf(s).kind == duration {
			x, err = decodeDuration(v)
		} else {
			x = d.text(v)
		}
	case schema.Bytes:
		x = base64.StdEncoding.EncodeToString(v)
	case schema.Object:
		if s.ProtoMessage == "" {
			return nil, 0, ErrNoProtobuf
		}
		m := map[string]any{}
		err = d.object(v, s, m)
		x = m
	case schema.Time, schema.MicroTime:
		x, err = decodeTime(v, s.Type)
	case schema.Quantity:
		x, err = decodeQuantity(v)
	case schema.IntOrString:
		x, err = decodeIntOrString(v)
	case schema.Array:
		x, err = d.strings(v, wrapperItems)
	case schema.Any:
		x, err = d.anyBody(v, s)
	default:
		err = ErrNoProtobuf
	}
	if err != nil {
		return nil, 0, err
	}
	return x, n, nil
}

// strings collects the string fields numbered num of b into a list.
func (d *decoder) strings(b []byte, num protowire.Number) ([]any, error) {
	a := []any{}
	err := d.each(b, func(n protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if n != num {
			return -1, nil
		}
		v, used, err := consumeBytes(b, wt)
		if err != nil {
			return 0, err
		}
		a = append(a, d.text(v))
		return used, nil
	})
	return a, err
}

func (d *decoder) anyBody(b []byte, s *schema.Schema) (any, error) {
	switch layoutOf(s).kind {
	case rawJSON, rawExtension:
		var raw []byte
		err := d.each(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num != rawBytes {
				return -1, nil
			}
			v, n, err := consumeBytes(b, wt)
			raw = v
			return n, err
		})
		if err != nil || len(raw) == 0 {
			return nil, err
		}
		v, err := schema.DecodeAnyShared(raw, d.text(raw))
		if errors.Is(err, schema.ErrType) {
			return nil, fmt.Errorf("%w: %v", ErrValue, err)
		}
		if err != nil {
			return nil, ErrRawNotJSON
		}
		return v, nil
	case propsOrArray:
		var obj any
		var list []any
		err := d.each(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case propsSchema:
				v, n, err := d.props1(b, wt)
				obj = v
				return n, err
			case propsArray:
				v, n, err := d.props1(b, wt)
				list = append(list, v)
				return n, err
			}
			return -1, nil
		})
		if err != nil {
			return nil, err
		}
		if len(list) > 0 {
			return list, nil
		}
		return obj, nil
	case propsOrBool:
		var obj any
		allows := false
		err := d.each(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case propsAllows:
				v, n, err := d.single(b, wt, boolSchema)
				allows, _ = v.(bool)
				return n, err
			case propsBoolSch:
				v, n, err := d.props1(b, wt)
				obj = v
				return n, err
			}
			return -1, nil
		})
		if err != nil {
			return nil, err
		}
		if obj != nil {
			return obj, nil
		}
		return allows, nil
	case propsOrStrings:
		var obj any
		var list []any
		err := d.each(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case propsSchema:
				v, n, err := d.props1(b, wt)
				obj = v
				return n, err
			case propsStrings:
				v, n, err := consumeBytes(b, wt)
				list = append(list, d.text(v))
				return n, err
			}
			return -1, nil
		})
		if err != nil {
			return nil, err
		}
		if len(list) > 0 {
			return list, nil
		}
		return obj, nil
	}
	return nil, ErrNoProtobuf
}

// props1 decodes one JSONSchemaProps message.
func (d *decoder) props1(b []byte, wt protowire.Type) (any, int, error) {
	if d.props == nil {
		return nil, 0, ErrNoProtobuf
	}
	return d.single(b, wt, d.props)
}

// boolSchema decodes the allows flag of JSONSchemaPropsOrBool.
var boolSchema = &schema.Schema{Type: schema.Boolean}

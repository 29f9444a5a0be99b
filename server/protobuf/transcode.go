package protobuf

import (
	"bytes"
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/schema"
)

// Transcode appends the protobuf message of the JSON object data, of
// schema s, to dst: the bytes Marshal writes for the object schema.Decode
// reads from data, without building that object. Members are read from a
// token tape (jsontape.go) and written in field-number order.
//
// On success the output equals Marshal(dst, Decode(data, s).Object, s).
// When Decode or Marshal would fail, Transcode fails too. Input it does not
// follow — duplicate members, deep nesting, JSONSchemaProps unions — fails
// with ErrUnsupported although Marshal may succeed: callers fall back to
// decoding. On error dst's contents past its length are undefined. data is
// only read and not retained; Transcode is safe for concurrent use.
func Transcode(dst, data []byte, s *schema.Schema) ([]byte, error) {
	if s == nil || s.Type != schema.Object || s.ProtoMessage == "" {
		return dst, ErrNoProtobuf
	}
	t := transcoders.Get().(*transcoder)
	defer t.release()
	if err := t.parse(data); err != nil {
		return dst, err
	}
	root := int32(0)
	switch t.toks[0].kind {
	case tokObject:
	case tokNull:
		root = -1 // Decode yields an empty object
	default:
		return dst, errJSONType
	}
	return t.object(dst, planOf(s), root, true)
}

// errJSONType reports a JSON value of the wrong kind for its schema, which
// Decode reports as a type error.
var errJSONType = ErrType

// transcoder is the reusable state of one Transcode call.
type transcoder struct {
	tape
	slots   []int32 // per open object: token index+1 of each member, 0 absent, -1 null
	entries []mapEntry
	discard []byte
}

// mapEntry is one member of a map whose keys need sorting.
type mapEntry struct {
	key string
	val int32
}

var transcoders = sync.Pool{New: func() any { return new(transcoder) }}

// maxPooledTape keeps a huge document's tape out of the pool.
const maxPooledTape = 1 << 16

func (t *transcoder) release() {
	t.data = nil
	if cap(t.toks) > maxPooledTape {
		t.toks = nil
	}
	if cap(t.discard) > maxPooledTape {
		t.discard = nil
	}
	clear(t.entries)
	t.entries = t.entries[:0]
	transcoders.Put(t)
}

// object writes the fields of the object at token oi (-1: absent, as for
// an always-written field or JSON null); top marks the document's root.
func (t *transcoder) object(dst []byte, p *plan, oi int32, top bool) ([]byte, error) {
	if p.unsupported {
		return dst, ErrUnsupported
	}
	base := len(t.slots)
	n := len(p.s.Fields)
	t.slots = slices.Grow(t.slots, n)[:base+n]
	slots := t.slots[base : base+n]
	clear(slots)
	defer func() { t.slots = t.slots[:base] }()
	if oi >= 0 {
		end := t.toks[oi].next
		for k := oi + 1; k < end; {
			vi := k + 1
			key := &t.toks[k]
			k = t.toks[vi].next
			var i int32
			var ok bool
			if key.flags&flagEscaped != 0 {
				i, ok = p.index[schema.Unquote(t.data[key.start:key.end])]
			} else {
				i, ok = p.lookup(t.data[key.start:key.end])
			}
			if !ok {
				if top && t.isTypeMember(key) && t.toks[vi].kind != tokString && t.toks[vi].kind != tokNull {
					return dst, errJSONType
				}
				continue
			}
			if slots[i] != 0 {
				return dst, ErrUnsupported // Decode merges duplicates
			}
			if t.toks[vi].kind == tokNull {
				slots[i] = -1
			} else {
				slots[i] = vi + 1
			}
		}
	}
	var err error
	for _, i := range p.check {
		if slots[i] > 0 {
			// Written for its errors only, to a buffer nested checks
			// may share: its contents do not matter.
			f := p.s.Fields[i]
			st := step{f: f, num: 1, pos: i, sub: planOf(f.Schema)}
			if t.discard, err = t.field(t.discard[:0], &st, slots); err != nil {
				return dst, ErrUnsupported
			}
		}
	}
	for i := range p.steps {
		if dst, err = t.field(dst, &p.steps[i], slots); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// isTypeMember reports a key spelled kind or apiVersion, which Decode
// checks at the root even when the schema does not declare them.
func (t *transcoder) isTypeMember(key *token) bool {
	k := t.data[key.start:key.end]
	if key.flags&flagEscaped != 0 {
		u := schema.Unquote(k)
		return u == "kind" || u == "apiVersion"
	}
	return string(k) == "kind" || string(k) == "apiVersion"
}

// valueAt returns the token of a step's member, -1 when absent or null.
func valueAt(st *step, slots []int32) int32 {
	if st.pos < 0 {
		return -1
	}
	if v := slots[st.pos]; v > 0 {
		return v - 1
	}
	return -1
}

// field writes one field as Marshal's encoder.field does.
func (t *transcoder) field(dst []byte, st *step, slots []int32) ([]byte, error) {
	f := st.f
	if f.Inline {
		dst, start := openBytes(dst, st.num)
		if st.sub.unsupported {
			return dst, ErrUnsupported
		}
		var err error
		for i := range st.inline {
			if dst, err = t.field(dst, &st.inline[i], slots); err != nil {
				return dst, err
			}
		}
		return closeBytes(dst, start), nil
	}
	vi := valueAt(st, slots)
	fs := st.sub
	if fs == nil {
		return dst, ErrUnsupported
	}
	switch {
	case fs.s.Type == schema.Map:
		if vi < 0 {
			return dst, nil
		}
		if t.toks[vi].kind != tokObject {
			return dst, errJSONType
		}
		return t.mapEntries(dst, st.num, vi, fs.elem)
	case fs.s.Type == schema.Array && fs.kind != stringsWrapper:
		if vi < 0 {
			return dst, nil
		}
		if t.toks[vi].kind != tokArray {
			return dst, errJSONType
		}
		var err error
		end := t.toks[vi].next
		for k := vi + 1; k < end; k = t.toks[k].next {
			ei := k
			if t.toks[k].kind == tokNull {
				if fs.elem.nullDiffers() {
					return dst, ErrUnsupported
				}
				ei = -1 // Decode's zero value encodes as the absent value
			}
			if dst, err = t.value(dst, st.num, ei, fs.elem); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case vi < 0 && !f.ProtoAlways:
		return dst, nil
	}
	return t.value(dst, st.num, vi, fs)
}

// nullDiffers reports an element schema whose zero value, which Decode
// puts in place of a JSON null, Marshal does not write as the absent value:
// a Duration's empty string does not parse.
func (p *plan) nullDiffers() bool {
	return p != nil && p.s.Type == schema.String && p.kind == duration
}

// mapEntries writes one {1 key, 2 value} entry per member of the object at
// token mi, in sorted key order.
func (t *transcoder) mapEntries(dst []byte, num protowire.Number, mi int32, elem *plan) ([]byte, error) {
	end := t.toks[mi].next
	if mi+1 == end {
		return dst, nil
	}
	// Stored maps are already sorted: write them in document order when
	// they are, else sort a copy of the keys.
	sorted := true
	var prev []byte
	for k := mi + 1; k < end; k = t.toks[k+1].next {
		key := &t.toks[k]
		raw := t.data[key.start:key.end]
		if key.flags&flagEscaped != 0 || (k > mi+1 && bytes.Compare(prev, raw) >= 0) {
			sorted = false
			break
		}
		prev = raw
	}
	var err error
	if sorted {
		for k := mi + 1; k < end; k = t.toks[k+1].next {
			if dst, err = t.mapEntry(dst, num, t.data[t.toks[k].start:t.toks[k].end], k+1, elem); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	first := len(t.entries)
	defer func() {
		clear(t.entries[first:])
		t.entries = t.entries[:first]
	}()
	for k := mi + 1; k < end; k = t.toks[k+1].next {
		key := &t.toks[k]
		var name string
		if key.flags&flagEscaped != 0 {
			name = schema.Unquote(t.raw(k))
		} else {
			name = string(t.raw(k))
		}
		t.entries = append(t.entries, mapEntry{key: name, val: k + 1})
	}
	entries := t.entries[first:]
	slices.SortStableFunc(entries, func(a, b mapEntry) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	for i := range entries {
		if i > 0 && entries[i].key == entries[i-1].key {
			return dst, ErrUnsupported
		}
	}
	for i := range entries {
		// entries may move if a nested map appends to t.entries.
		e := t.entries[first+i]
		if dst, err = t.mapEntry(dst, num, []byte(e.key), e.val, elem); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// mapEntry writes one map entry whose value is token vi.
func (t *transcoder) mapEntry(dst []byte, num protowire.Number, key []byte, vi int32, elem *plan) ([]byte, error) {
	vt := &t.toks[vi]
	if elem != nil && elem.s.Type == schema.String && elem.kind != duration && vt.kind == tokString && vt.flags&flagEscaped == 0 {
		// The common string map: the entry's size is known up front.
		val := t.data[vt.start:vt.end]
		size := 1 + protowire.SizeBytes(len(key)) + 1 + protowire.SizeBytes(len(val))
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(size))
		dst = append(dst, byte(entryKey)<<3|byte(protowire.BytesType))
		dst = protowire.AppendBytes(dst, key)
		dst = append(dst, byte(entryValue)<<3|byte(protowire.BytesType))
		return protowire.AppendBytes(dst, val), nil
	}
	dst, start, w := openSized(dst, num, len(key)+len(t.span(vi))+4)
	dst = protowire.AppendTag(dst, entryKey, protowire.BytesType)
	dst = protowire.AppendBytes(dst, key)
	if vt.kind == tokNull {
		if elem.nullDiffers() {
			return dst, ErrUnsupported
		}
		vi = -1
	}
	if vi >= 0 || elem == nil || elem.s.Type != schema.Bytes {
		var err error
		if dst, err = t.value(dst, entryValue, vi, elem); err != nil {
			return dst, err
		}
	}
	return closeSized(dst, start, w), nil
}

// value writes one tagged value as Marshal's encoder.value does; vi -1 is
// the absent (zero) value.
func (t *transcoder) value(dst []byte, num protowire.Number, vi int32, p *plan) ([]byte, error) {
	if p == nil {
		return dst, ErrNoProtobuf
	}
	var tk *token
	if vi >= 0 {
		tk = &t.toks[vi]
	}
	switch p.s.Type {
	case schema.String:
		if tk != nil && tk.kind != tokString {
			return dst, errJSONType
		}
		if p.kind == duration {
			var d time.Duration
			if tk != nil {
				var err error
				if d, err = time.ParseDuration(t.str(vi)); err != nil {
					return dst, ErrValue
				}
			}
			dst = protowire.AppendTag(dst, num, protowire.BytesType)
			dst = protowire.AppendVarint(dst, uint64(1+protowire.SizeVarint(uint64(d))))
			return appendVarintField(dst, durationNS, uint64(d)), nil
		}
		if tk == nil {
			return appendStringField(dst, num, ""), nil
		}
		return t.appendStr(dst, num, vi), nil
	case schema.Integer:
		var n int64
		if tk != nil {
			if tk.kind != tokNumber {
				return dst, errJSONType
			}
			var ok bool
			if n, ok = parseInt(t.raw(vi)); !ok || p.s.Format == "int32" && (n < math.MinInt32 || n > math.MaxInt32) {
				return dst, errJSONType
			}
		}
		return appendVarintField(dst, num, uint64(n)), nil
	case schema.Boolean:
		var b bool
		if tk != nil {
			if tk.kind != tokTrue && tk.kind != tokFalse {
				return dst, errJSONType
			}
			b = tk.kind == tokTrue
		}
		return appendVarintField(dst, num, protowire.EncodeBool(b)), nil
	case schema.Number:
		var f float64
		if tk != nil {
			if tk.kind != tokNumber {
				return dst, errJSONType
			}
			var err error
			if f, err = strconv.ParseFloat(string(t.raw(vi)), 64); err != nil {
				return dst, errJSONType
			}
		}
		dst = protowire.AppendTag(dst, num, protowire.Fixed64Type)
		return protowire.AppendFixed64(dst, math.Float64bits(f)), nil
	case schema.Bytes:
		dst, start := openBytes(dst, num)
		if tk != nil {
			if tk.kind != tokString {
				return dst, errJSONType
			}
			var err error
			src := t.raw(vi)
			if tk.flags&flagEscaped != 0 {
				src = schema.AppendUnquote(nil, src)
			}
			if dst, err = base64.StdEncoding.AppendDecode(dst, src); err != nil {
				return dst, ErrValue
			}
		}
		return closeBytes(dst, start), nil
	case schema.Object:
		if tk != nil && tk.kind != tokObject {
			return dst, errJSONType
		}
		if p.s.ProtoMessage == "" {
			return dst, ErrNoProtobuf
		}
		guess := 0
		if tk != nil {
			guess = int(tk.end - tk.start)
		}
		dst, start, w := openSized(dst, num, guess)
		dst, err := t.object(dst, p, vi, false)
		return closeSized(dst, start, w), err
	}
	dst, start := openBytes(dst, num)
	dst, err := t.body(dst, vi, p)
	return closeBytes(dst, start), err
}

// body writes the body of a hand-encoded message as encoder.body does.
func (t *transcoder) body(dst []byte, vi int32, p *plan) ([]byte, error) {
	var tk *token
	if vi >= 0 {
		tk = &t.toks[vi]
	}
	switch p.s.Type {
	case schema.Time, schema.MicroTime:
		if tk == nil {
			return dst, nil
		}
		if tk.kind != tokString {
			return dst, errJSONType
		}
		return appendTimeJSON(dst, t.raw(vi), tk.flags, p.s.Type)
	case schema.Quantity:
		if tk == nil {
			return appendStringField(dst, quantityText, "0"), nil
		}
		var text string
		switch tk.kind {
		case tokString:
			text = t.str(vi)
		case tokNumber:
			text = string(t.raw(vi))
		default:
			return dst, errJSONType
		}
		q, err := schema.CanonicalQuantity(text)
		if err != nil {
			return dst, ErrValue
		}
		return appendStringField(dst, quantityText, q), nil
	case schema.IntOrString:
		var n int64
		if tk != nil {
			switch tk.kind {
			case tokString:
				dst = appendVarintField(dst, iosType, 1)
				dst = appendVarintField(dst, iosInt, 0)
				return t.appendStr(dst, iosString, vi), nil
			case tokNumber:
				var ok bool
				if n, ok = parseInt(t.raw(vi)); !ok || n < math.MinInt32 || n > math.MaxInt32 {
					return dst, errJSONType
				}
			default:
				return dst, errJSONType
			}
		}
		dst = appendVarintField(dst, iosType, 0)
		dst = appendVarintField(dst, iosInt, uint64(n))
		return appendStringField(dst, iosString, ""), nil
	case schema.Array:
		if tk != nil && tk.kind != tokArray {
			return dst, errJSONType
		}
		if p.s.Elem == nil || p.s.Elem.Type != schema.String {
			return dst, ErrNoProtobuf
		}
		if tk == nil {
			return dst, nil
		}
		for k := vi + 1; k < tk.next; k = t.toks[k].next {
			switch t.toks[k].kind {
			case tokString:
				dst = t.appendStr(dst, wrapperItems, k)
			case tokNull:
				dst = appendStringField(dst, wrapperItems, "")
			default:
				return dst, errJSONType
			}
		}
		return dst, nil
	case schema.Any:
		switch p.kind {
		case rawJSON, rawExtension:
			if tk == nil {
				return dst, nil
			}
			dst, start, w := openSized(dst, rawBytes, len(t.span(vi)))
			dst, err := t.anyJSON(dst, vi)
			return closeSized(dst, start, w), err
		case propsOrArray, propsOrBool, propsOrStrings:
			return dst, ErrUnsupported
		}
	}
	return dst, ErrNoProtobuf
}

// appendStr writes the value of string token i as field num.
func (t *transcoder) appendStr(dst []byte, num protowire.Number, i int32) []byte {
	tk := &t.toks[i]
	raw := t.data[tk.start:tk.end]
	if tk.flags&flagEscaped == 0 {
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		return protowire.AppendBytes(dst, raw)
	}
	dst, start, w := openSized(dst, num, len(raw))
	dst = schema.AppendUnquote(dst, raw)
	return closeSized(dst, start, w)
}

// str returns the value of the string token i.
func (t *transcoder) str(i int32) string {
	if t.toks[i].flags&flagEscaped != 0 {
		return schema.Unquote(t.raw(i))
	}
	return string(t.raw(i))
}

// parseInt parses an integer as strconv.ParseInt does, without its
// allocation for the common short case.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		n, err := strconv.ParseInt(string(b), 10, 64)
		return n, err == nil
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = b[1:]
		if len(d) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// appendTimeJSON writes the body of a Time or MicroTime given as the raw
// contents of a JSON string, as Decode then Marshal would: parsed as RFC
// 3339, rendered in UTC at the type's precision, and that text parsed
// again. The canonical spelling stored objects use is read directly.
func appendTimeJSON(dst, raw []byte, flags uint8, typ schema.Type) ([]byte, error) {
	if flags&flagEscaped == 0 {
		if sec, nanos, zero, ok := canonicalTime(raw, typ); ok {
			if zero {
				return dst, nil
			}
			dst = appendVarintField(dst, timeSeconds, uint64(sec))
			return appendVarintField(dst, timeNanos, uint64(nanos)), nil
		}
	}
	text := string(raw)
	if flags&flagEscaped != 0 {
		text = schema.Unquote(raw)
	}
	layout := timeLayout
	if typ == schema.MicroTime {
		// Read as Decode reads it: exactly six fractional digits.
		layout = microTimeLayout
	}
	tm, err := time.Parse(layout, text)
	if err != nil {
		return dst, ErrValue
	}
	return appendTimeBody(dst, tm.UTC().Format(layout), typ)
}

// canonicalTime reads "2006-01-02T15:04:05Z" (Time) or
// "2006-01-02T15:04:05.000000Z" (MicroTime) with every field in range; ok
// is false for any other text.
func canonicalTime(b []byte, typ schema.Type) (sec int64, nanos int64, zero, ok bool) {
	want := 20
	if typ == schema.MicroTime {
		want = 27
	}
	if len(b) != want || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[want-1] != 'Z' {
		return 0, 0, false, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(b[0:4])
	mo, ok2 := num(b[5:7])
	d, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	mi, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, 0, false, false
	}
	if typ == schema.MicroTime {
		if b[19] != '.' {
			return 0, 0, false, false
		}
		us, ok := num(b[20:26])
		if !ok {
			return 0, 0, false, false
		}
		nanos = int64(us) * 1000
	}
	tm := time.Date(y, time.Month(mo), d, h, mi, s, int(nanos), time.UTC)
	if tm.Year() != y || int(tm.Month()) != mo || tm.Day() != d || tm.Hour() != h || tm.Minute() != mi || tm.Second() != s {
		return 0, 0, false, false // out of range: time.Parse decides
	}
	return tm.Unix(), nanos, tm.IsZero(), true
}

// anyJSON writes the value at token vi as the compact JSON with sorted keys
// Marshal writes for arbitrary JSON. Text already in that form, as stored
// objects hold it, is copied; anything else is decoded and re-encoded.
func (t *transcoder) anyJSON(dst []byte, vi int32) ([]byte, error) {
	if t.canonicalJSON(vi) {
		return append(dst, t.span(vi)...), nil
	}
	v, err := schema.DecodeAny(t.span(vi))
	if err != nil {
		return dst, ErrValue
	}
	return appendJSON(dst, v)
}

// canonicalJSON reports whether the value at token i is written exactly
// as appendJSON would write its decoded value.
func (t *transcoder) canonicalJSON(i int32) bool {
	tk := &t.toks[i]
	switch tk.kind {
	case tokObject:
		if tk.flags&flagSpace != 0 {
			return false
		}
		prev := int32(-1)
		for k := i + 1; k < tk.next; k = t.toks[k+1].next {
			if !t.canonicalString(&t.toks[k]) || prev >= 0 && !t.keyBefore(prev, k) {
				return false
			}
			if !t.canonicalJSON(k + 1) {
				return false
			}
			prev = k
		}
		return true
	case tokArray:
		if tk.flags&flagSpace != 0 {
			return false
		}
		for k := i + 1; k < tk.next; k = t.toks[k].next {
			if !t.canonicalJSON(k) {
				return false
			}
		}
		return true
	case tokString:
		return t.canonicalString(tk)
	case tokNumber:
		// Integers that surely fit int64, in encoding/json's spelling.
		raw := t.data[tk.start:tk.end]
		digits := raw
		if len(raw) > 0 && raw[0] == '-' {
			digits = raw[1:]
		}
		if len(digits) == 0 || len(digits) > 18 || string(raw) == "-0" {
			return false
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return true // true, false, null
}

// keyBefore reports whether key a sorts strictly before key b by value.
func (t *transcoder) keyBefore(a, b int32) bool {
	ka, kb := &t.toks[a], &t.toks[b]
	if ka.flags&flagEscaped == 0 && kb.flags&flagEscaped == 0 {
		return bytes.Compare(t.raw(a), t.raw(b)) < 0
	}
	return schema.Unquote(t.raw(a)) < schema.Unquote(t.raw(b))
}

// canonicalString reports whether a string token is spelled as
// codec.AppendJSONString spells its value: printable ASCII, HTML
// characters escaped, only the short escapes for quote, backslash and
// \n \r \t \b \f.
func (t *transcoder) canonicalString(tk *token) bool {
	raw := t.data[tk.start:tk.end]
	for j := 0; j < len(raw); j++ {
		switch c := raw[j]; {
		case c >= 0x80 || c == '<' || c == '>' || c == '&':
			return false
		case c == '\\':
			j++
			switch raw[j] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
			default:
				return false
			}
		}
	}
	return true
}

package cel

import (
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// toVal turns a value of the generic decoded form into the CEL value a
// rule sees, as d says: objects stay lazy (their fields convert on
// access), lists and maps convert their elements.
func toVal(v any, d *declType) ref.Val {
	if v == nil {
		if d.nullable {
			return types.NullValue
		}
		return types.NewErr("invalid data, got null for schema with nullable=false")
	}
	if d.intOrString {
		if n, ok := intVal(v); ok {
			return n
		}
		switch x := v.(type) {
		case float64:
			return types.Double(x)
		case string:
			return types.String(x)
		}
		return types.NewErr("invalid data, expected either int or string, got %T", v)
	}
	switch d.kind {
	case kindObject:
		m, ok := v.(map[string]any)
		if !ok {
			return types.NewErr("invalid data, expected a map for the provided schema with type=object")
		}
		return &objVal{m: m, d: d}
	case kindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return types.NewErr("invalid data, expected a map for the provided schema with type=object")
		}
		out := make(map[ref.Val]ref.Val, len(m))
		for k, e := range m {
			out[types.String(k)] = toVal(e, d.elem)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, out)
	case kindList:
		l, ok := v.([]any)
		if !ok {
			return types.NewErr("invalid data, expected an array for the provided schema with type=array")
		}
		out := make([]ref.Val, len(l))
		for i, e := range l {
			out[i] = toVal(e, d.elem)
		}
		base := types.NewRefValList(types.DefaultTypeAdapter, out).(traits.Lister)
		switch d.listType {
		case "set", "map":
			return &listVal{Lister: base, d: d}
		}
		return base
	}
	switch d.simple {
	case types.StringType:
		if s, ok := v.(string); ok {
			return types.String(s)
		}
	case types.BytesType:
		if s, ok := v.(string); ok {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return types.NewErr("base64 decoding failed: %v", err)
			}
			return types.Bytes(b)
		}
	case types.DurationType:
		if s, ok := v.(string); ok {
			dur, err := parseDuration(s)
			if err != nil {
				return types.NewErr("Invalid duration %s: %v", s, err)
			}
			return types.Duration{Duration: dur}
		}
	case types.TimestampType:
		if s, ok := v.(string); ok {
			var t time.Time
			var err error
			if d.format == "date" {
				t, err = time.Parse(time.DateOnly, s)
			} else {
				t, err = parseDateTime(s)
			}
			if err != nil {
				return types.NewErr("Invalid %s %s: %v", d.format, s, err)
			}
			return types.Timestamp{Time: t}
		}
	case types.IntType:
		if n, ok := intVal(v); ok {
			return n
		}
	case types.DoubleType:
		switch x := v.(type) {
		case float64:
			return types.Double(x)
		case int64:
			return types.Double(x)
		case int:
			return types.Double(x)
		}
	case types.BoolType:
		if b, ok := v.(bool); ok {
			return types.Bool(b)
		}
	}
	return types.NewErr("invalid data, expected %s, got %T", d.simple.TypeName(), v)
}

// intVal converts a decoded integer, or a float64 holding a whole number
// an int64 can hold, to a CEL int.
func intVal(v any) (ref.Val, bool) {
	switch x := v.(type) {
	case int64:
		return types.Int(x), true
	case int:
		return types.Int(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return types.Int(int64(x)), true
		}
	}
	return nil, false
}

// durationPart is one "<number><unit>" of a duration, spaces allowed.
var durationPart = lazyRegexp(`((\d+)\s*([A-Za-zµ]+))`)

// durationUnits are the unit spellings of format: duration beside Go's:
// the last spelling of each also matches as a prefix ("hours").
var durationUnits = []struct {
	spellings []string
	unit      time.Duration
}{
	{[]string{"ns", "nano"}, time.Nanosecond},
	{[]string{"us", "µs", "micro"}, time.Microsecond},
	{[]string{"ms", "milli"}, time.Millisecond},
	{[]string{"s", "sec"}, time.Second},
	{[]string{"m", "min"}, time.Minute},
	{[]string{"h", "hr", "hour"}, time.Hour},
	{[]string{"d", "day"}, 24 * time.Hour},
	{[]string{"w", "wk", "week"}, 7 * 24 * time.Hour},
}

// parseDuration reads a format: duration string as the OpenAPI format
// library upstream uses does: Go's syntax, or else every
// "<number><unit>" part summed.
func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	var total time.Duration
	ok := false
	for _, m := range durationPart().FindAllStringSubmatch(s, -1) {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return 0, err
		}
		unit := strings.ToLower(strings.TrimSpace(m[3]))
		for _, u := range durationUnits {
			last := len(u.spellings) - 1
			for i, sp := range u.spellings {
				if (i == last && strings.HasPrefix(unit, sp)) || strings.EqualFold(sp, unit) {
					ok = true
					total += time.Duration(n) * u.unit
				}
			}
		}
	}
	if !ok {
		return 0, fmt.Errorf("unable to parse %s as duration", s)
	}
	return total, nil
}

// objVal is an object with declared properties. Only declared (and
// escapable) properties are visible; their CEL names are escaped.
type objVal struct {
	m map[string]any
	d *declType
	// cache holds converted field values: a rule may read self.list
	// once per step of a comprehension. One evaluation uses a value at a
	// time, so no lock.
	cache map[string]ref.Val
}

var (
	_ traits.Mapper = (*objVal)(nil)
)

func (o *objVal) field(key ref.Val) (*declField, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	f, ok := o.d.fields[string(k)]
	return f, ok
}

// Find returns the field's value when the object has it.
func (o *objVal) Find(key ref.Val) (ref.Val, bool) {
	f, ok := o.field(key)
	if !ok {
		return nil, false
	}
	if v, ok := o.cache[f.name]; ok {
		return v, true
	}
	v, ok := o.m[f.name]
	if !ok {
		return nil, false
	}
	cv := toVal(v, f.typ)
	if o.cache == nil {
		o.cache = make(map[string]ref.Val, len(o.d.fields))
	}
	o.cache[f.name] = cv
	return cv, true
}

func (o *objVal) Get(key ref.Val) ref.Val {
	if v, ok := o.Find(key); ok {
		return v
	}
	return types.NewErr("no such key: %v", key)
}

func (o *objVal) Contains(key ref.Val) ref.Val {
	_, ok := o.Find(key)
	return types.Bool(ok)
}

// present lists the escaped names of the declared fields the object has,
// in a stable order.
func (o *objVal) present() []string {
	var out []string
	for esc, f := range o.d.fields {
		if _, ok := o.m[f.name]; ok {
			out = append(out, esc)
		}
	}
	sort.Strings(out)
	return out
}

func (o *objVal) Size() ref.Val { return types.Int(len(o.present())) }

func (o *objVal) Iterator() traits.Iterator {
	names := o.present()
	vals := make([]ref.Val, len(names))
	for i, n := range names {
		vals[i] = types.String(n)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals).(traits.Lister).Iterator()
}

func (o *objVal) Equal(other ref.Val) ref.Val {
	p, ok := other.(*objVal)
	if !ok {
		return types.False
	}
	a, b := o.present(), p.present()
	if len(a) != len(b) {
		return types.False
	}
	for i, n := range a {
		if b[i] != n {
			return types.False
		}
		k := types.String(n)
		if o.Get(k).Equal(p.Get(k)) != types.True {
			return types.False
		}
	}
	return types.True
}

func (o *objVal) Type() ref.Type { return types.NewObjectType(o.d.name) }

func (o *objVal) Value() any { return o.m }

func (o *objVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(o.m).AssignableTo(t) {
		return o.m, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", o.d.name, t)
}

func (o *objVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return types.NewObjectType(o.d.name)
	}
	if t.TypeName() == o.d.name {
		return o
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.d.name, t.TypeName())
}

// listVal is a list with set or map semantics: equality ignores order,
// and + is a union (set) or a merge by key (map), as the list type says.
type listVal struct {
	traits.Lister
	d *declType
}

func (l *listVal) items() []ref.Val {
	n := int(l.Size().(types.Int))
	out := make([]ref.Val, n)
	for i := 0; i < n; i++ {
		out[i] = l.Get(types.Int(i))
	}
	return out
}

func listItems(v traits.Lister) []ref.Val {
	n := int(v.Size().(types.Int))
	out := make([]ref.Val, n)
	for i := 0; i < n; i++ {
		out[i] = v.Get(types.Int(i))
	}
	return out
}

// key is the map-list key of an item, rendered for comparison.
func (l *listVal) key(v ref.Val) (string, bool) {
	o, ok := v.(*objVal)
	if !ok {
		return "", false
	}
	var b []byte
	for _, k := range l.d.mapKeys {
		b = fmt.Appendf(b, "%T:%v;", o.m[k], o.m[k])
	}
	return string(b), true
}

func indexOfVal(vals []ref.Val, v ref.Val) int {
	for i, e := range vals {
		if e.Equal(v) == types.True {
			return i
		}
	}
	return -1
}

func (l *listVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	a, b := l.items(), listItems(o)
	if len(a) != len(b) {
		return types.False
	}
	if l.d.listType == "map" && len(l.d.mapKeys) > 0 {
		byKey := map[string]ref.Val{}
		for _, e := range b {
			k, ok := l.key(e)
			if !ok {
				return types.False
			}
			byKey[k] = e
		}
		for _, e := range a {
			k, ok := l.key(e)
			if !ok {
				return types.False
			}
			f, ok := byKey[k]
			if !ok || e.Equal(f) != types.True {
				return types.False
			}
		}
		return types.True
	}
	for _, e := range a {
		if indexOfVal(b, e) < 0 {
			return types.False
		}
	}
	for _, e := range b {
		if indexOfVal(a, e) < 0 {
			return types.False
		}
	}
	return types.True
}

func (l *listVal) Add(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	a, b := l.items(), listItems(o)
	out := append([]ref.Val(nil), a...)
	if l.d.listType == "map" && len(l.d.mapKeys) > 0 {
		pos := map[string]int{}
		for i, e := range out {
			if k, ok := l.key(e); ok {
				pos[k] = i
			}
		}
		for _, e := range b {
			if k, ok := l.key(e); ok {
				if i, dup := pos[k]; dup {
					out[i] = e
					continue
				}
				pos[k] = len(out)
			}
			out = append(out, e)
		}
	} else {
		for _, e := range b {
			if indexOfVal(out, e) < 0 {
				out = append(out, e)
			}
		}
	}
	return &listVal{Lister: types.NewRefValList(types.DefaultTypeAdapter, out).(traits.Lister), d: l.d}
}

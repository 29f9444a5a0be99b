package protobuf

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/schema"
)

// Field numbers of the hand-encoded messages.
const (
	timeSeconds  protowire.Number = 1
	timeNanos    protowire.Number = 2
	quantityText protowire.Number = 1
	iosType      protowire.Number = 1
	iosInt       protowire.Number = 2
	iosString    protowire.Number = 3
	rawBytes     protowire.Number = 1
	durationNS   protowire.Number = 1
	wrapperItems protowire.Number = 1
	propsSchema  protowire.Number = 1 // OrArray, OrStringArray: schema
	propsArray   protowire.Number = 2 // OrArray: jSONSchemas
	propsAllows  protowire.Number = 1 // OrBool: allows
	propsBoolSch protowire.Number = 2 // OrBool: schema
	propsStrings protowire.Number = 2 // OrStringArray: property
	entryKey     protowire.Number = 1
	entryValue   protowire.Number = 2
)

// Layouts of the generic time strings.
const (
	timeLayout      = time.RFC3339
	microTimeLayout = "2006-01-02T15:04:05.000000Z07:00"
)

// appendTimeBody writes the body of a Time or MicroTime: empty for the zero
// time, else seconds and nanos (nanos always 0 for Time, truncated to
// microseconds for MicroTime).
func appendTimeBody(dst []byte, v any, typ schema.Type) ([]byte, error) {
	if v == nil {
		return dst, nil
	}
	str, ok := v.(string)
	if !ok {
		return dst, fmt.Errorf("%w: time is %T", ErrType, v)
	}
	t, err := time.Parse(time.RFC3339, str)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrValue, err)
	}
	if t.IsZero() {
		return dst, nil
	}
	var nanos int64
	if typ == schema.MicroTime {
		nanos = int64(t.Nanosecond()) / 1000 * 1000
	}
	dst = appendVarintField(dst, timeSeconds, uint64(t.Unix()))
	return appendVarintField(dst, timeNanos, uint64(nanos)), nil
}

// decodeTime reads a Time or MicroTime body; nil means the zero time.
func decodeTime(b []byte, typ schema.Type) (any, error) {
	var sec, nanos int64
	seen := false
	err := walk(b, func(num protowire.Number, wt protowire.Type, v []byte, x uint64) error {
		switch num {
		case timeSeconds, timeNanos:
			if wt != protowire.VarintType {
				return malformed("time field %d has wire type %d", num, wt)
			}
			seen = true
			if num == timeSeconds {
				sec = int64(x)
			} else {
				nanos = int64(int32(x))
			}
		}
		return nil
	})
	if err != nil || !seen {
		return nil, err
	}
	if typ == schema.Time {
		nanos = 0
	}
	t := time.Unix(sec, nanos).UTC()
	if t.IsZero() {
		return nil, nil
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("%w: time year %d outside [0,9999]", ErrValue, y)
	}
	if typ == schema.MicroTime {
		return t.Truncate(time.Microsecond).Format(microTimeLayout), nil
	}
	return t.Format(timeLayout), nil
}

// quantityString returns the wire text of a generic quantity value.
func quantityString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "0", nil
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return schema.CanonicalQuantity(strconv.FormatFloat(x, 'f', -1, 64))
	}
	return "", fmt.Errorf("%w: quantity is %T", ErrType, v)
}

func decodeQuantity(b []byte) (any, error) {
	text, seen := "", false
	err := walk(b, func(num protowire.Number, wt protowire.Type, v []byte, _ uint64) error {
		if num == quantityText {
			if wt != protowire.BytesType {
				return malformed("quantity field has wire type %d", wt)
			}
			text, seen = string(v), true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !seen {
		return "0", nil
	}
	q, err := schema.CanonicalQuantity(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrValue, err)
	}
	return q, nil
}

func appendIntOrStringBody(dst []byte, v any) ([]byte, error) {
	var n int64
	switch x := v.(type) {
	case nil:
	case string:
		dst = appendVarintField(dst, iosType, 1)
		dst = appendVarintField(dst, iosInt, 0)
		return appendStringField(dst, iosString, x), nil
	default:
		var err error
		if n, err = toInt(v); err != nil {
			return dst, err
		}
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return dst, fmt.Errorf("%w: int-or-string %d overflows int32", ErrValue, n)
	}
	dst = appendVarintField(dst, iosType, 0)
	dst = appendVarintField(dst, iosInt, uint64(n))
	return appendStringField(dst, iosString, ""), nil
}

func decodeIntOrString(b []byte) (any, error) {
	var typ, intVal int64
	var strVal string
	err := walk(b, func(num protowire.Number, wt protowire.Type, v []byte, x uint64) error {
		switch num {
		case iosType, iosInt:
			if wt != protowire.VarintType {
				return malformed("int-or-string field %d has wire type %d", num, wt)
			}
			if num == iosType {
				typ = int64(x)
			} else {
				intVal = int64(int32(x))
			}
		case iosString:
			if wt != protowire.BytesType {
				return malformed("int-or-string field %d has wire type %d", num, wt)
			}
			strVal = string(v)
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case typ == 0:
		return intVal, nil
	case typ == 1:
		return strVal, nil
	}
	return nil, fmt.Errorf("%w: int-or-string type %d", ErrValue, typ)
}

func appendDurationBody(dst []byte, v any) ([]byte, error) {
	var d time.Duration
	switch x := v.(type) {
	case nil:
	case string:
		var err error
		if d, err = time.ParseDuration(x); err != nil {
			return dst, fmt.Errorf("%w: %w", ErrValue, err)
		}
	default:
		return dst, fmt.Errorf("%w: duration is %T", ErrType, v)
	}
	return appendVarintField(dst, durationNS, uint64(d)), nil
}

func decodeDuration(b []byte) (any, error) {
	var d time.Duration
	err := walk(b, func(num protowire.Number, wt protowire.Type, _ []byte, x uint64) error {
		if num == durationNS {
			if wt != protowire.VarintType {
				return malformed("duration field has wire type %d", wt)
			}
			d = time.Duration(int64(x))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d.String(), nil
}

// toInt converts a generic number to int64; fractional floats are an error.
func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x), nil
		}
		return 0, fmt.Errorf("%w: %v is not an integer", ErrValue, x)
	}
	return 0, fmt.Errorf("%w: integer is %T", ErrType, v)
}

// walk calls fn for each field of the message in b: v holds the bytes of a
// length-delimited field, x the value of a varint or fixed field. Groups
// and malformed fields end the walk with an error.
func walk(b []byte, fn func(num protowire.Number, wt protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return parseErr(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch wt {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, wt, b)
		}
		if n < 0 {
			return parseErr(n)
		}
		b = b[n:]
		if wt == protowire.StartGroupType {
			continue
		}
		if err := fn(num, wt, v, x); err != nil {
			return err
		}
	}
	return nil
}

package protobuf

import (
	"errors"

	"platd/server/schema"
)

// The raw JSON carried by FieldsV1, RawExtension and apiextensions JSON is
// parsed by schema.DecodeAnyShared, into the generic values schema.Decode
// yields for Any (int64 for integers that fit, float64 for other numbers),
// and written by schema.AppendAny.

// appendJSON writes v as compact JSON with sorted object keys, escaping
// strings as encoding/json does (HTML characters included). NaN and
// infinities are ErrValue, values of other Go types ErrType.
func appendJSON(dst []byte, v any) ([]byte, error) {
	dst, err := schema.AppendAny(dst, v)
	switch {
	case err == nil:
		return dst, nil
	case errors.Is(err, schema.ErrType):
		return dst, ErrType
	}
	return dst, ErrValue
}

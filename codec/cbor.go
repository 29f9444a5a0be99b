package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/fxamacker/cbor/v2"
)

// CBOR media types: one data item per body; a sequence of items for a
// watch (RFC 8742); a server-side apply body.
const (
	CBORMediaType      = "application/cbor"
	CBORSeqMediaType   = "application/cbor-seq"
	ApplyCBORMediaType = "application/apply-patch+cbor"
)

// selfDescribed is the head of tag 55799 ("self-described CBOR"). Every
// CBOR body the server writes starts with it, as upstream's do, so that a
// reader can tell CBOR from JSON by the first three bytes.
var selfDescribed = []byte{0xd9, 0xd9, 0xf7}

// HasCBORPrefix reports whether b starts with the self-described CBOR tag.
func HasCBORPrefix(b []byte) bool { return bytes.HasPrefix(b, selfDescribed) }

// The encoding rules are the upstream serializer's: every Go string (keys
// too) as a byte string, integers as integers, floats in their shortest
// exact width, definite lengths, no NaN or infinity, []byte as a byte
// string in tag 22 (base64 expected later). Map keys are in bytewise order
// of their encoding (RFC 8949 core deterministic order), the upstream
// serializer's default; upstream's API responses use its nondeterministic
// variant (struct fields in declaration order, map keys unordered), which
// clients cannot tell from this one but which would make one object's
// bytes vary from response to response.
var cborEncode = func() cbor.UserBufferEncMode {
	m, err := cbor.EncOptions{
		Sort:                 cbor.SortBytewiseLexical,
		ShortestFloat:        cbor.ShortestFloat16,
		NaNConvert:           cbor.NaNConvertReject,
		InfConvert:           cbor.InfConvertReject,
		BigIntConvert:        cbor.BigIntConvertReject,
		Time:                 cbor.TimeRFC3339Nano,
		TimeTag:              cbor.EncTagNone,
		IndefLength:          cbor.IndefLengthForbidden,
		NilContainers:        cbor.NilContainerAsNull,
		TagsMd:               cbor.TagsAllowed,
		OmitEmpty:            cbor.OmitEmptyGoValue,
		String:               cbor.StringToByteString,
		FieldName:            cbor.FieldNameToByteString,
		ByteSliceLaterFormat: cbor.ByteSliceLaterFormatBase64,
		ByteArray:            cbor.ByteArrayToArray,
		BinaryMarshaler:      cbor.BinaryMarshalerNone,
	}.UserBufferEncMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// Decoding limits, as upstream: deeper nesting or longer arrays and maps
// than any API object needs are refused before they cost memory.
const (
	cborMaxNesting  = 64
	cborMaxElements = 1024
)

// cborSimpleValues accepts false, true and null only: undefined and the
// unassigned simple values have no JSON form.
var cborSimpleValues = func() *cbor.SimpleValueRegistry {
	var opts []func(*cbor.SimpleValueRegistry) error
	for sv := 0; sv <= 255; sv++ {
		switch {
		case sv >= 20 && sv <= 22: // false, true, null
		case sv >= 24 && sv <= 31: // reserved: ill-formed, the decoder refuses them itself
		default:
			opts = append(opts, cbor.WithRejectedSimpleValue(cbor.SimpleValue(sv)))
		}
	}
	r, err := cbor.NewSimpleValueRegistryFromDefaults(opts...)
	if err != nil {
		panic(err)
	}
	return r
}()

// cborDecode reads request bodies as upstream does: duplicate map keys
// are an error (never a warning), text strings must be UTF-8, byte
// strings read as strings (in base64 when tag 21-23 asks), unknown tags
// are read as their content, integers must fit an int64, no NaN,
// infinity, bignums, undefined or indefinite-length surprises beyond
// what RFC 8949 allows.
var cborDecode = func() cbor.DecMode {
	m, err := cbor.DecOptions{
		DupMapKey:                cbor.DupMapKeyEnforcedAPF,
		TimeTag:                  cbor.DecTagOptional,
		MaxNestedLevels:          cborMaxNesting,
		MaxArrayElements:         cborMaxElements,
		MaxMapPairs:              cborMaxElements,
		IndefLength:              cbor.IndefLengthAllowed,
		TagsMd:                   cbor.TagsAllowed,
		IntDec:                   cbor.IntDecConvertSignedOrFail,
		MapKeyByteString:         cbor.MapKeyByteStringForbidden,
		DefaultMapType:           reflect.TypeOf(map[string]any(nil)),
		UTF8:                     cbor.UTF8RejectInvalid,
		FieldNameMatching:        cbor.FieldNameMatchingCaseSensitive,
		DefaultByteStringType:    reflect.TypeOf(""),
		ByteStringToString:       cbor.ByteStringToStringAllowedWithExpectedLaterEncoding,
		FieldNameByteString:      cbor.FieldNameByteStringAllowed,
		UnrecognizedTagToAny:     cbor.UnrecognizedTagContentToAny,
		TimeTagToAny:             cbor.TimeTagToRFC3339Nano,
		ByteStringToTime:         cbor.ByteStringToTimeAllowed,
		NaN:                      cbor.NaNDecodeForbidden,
		Inf:                      cbor.InfDecodeForbidden,
		ByteStringExpectedFormat: cbor.ByteStringExpectedBase64,
		BignumTag:                cbor.BignumTagForbidden,
		SimpleValues:             cborSimpleValues,
		BinaryUnmarshaler:        cbor.BinaryUnmarshalerNone,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// AppendCBOR appends the self-described CBOR encoding of v to dst. v is a
// JSON-shaped value: map[string]any, []any, string, int64, float64, bool,
// nil, and []byte for a field whose JSON form is base64 (it is written as
// raw bytes in tag 22). A RawCBOR value is copied as is. Errors wrap
// ErrCBOR.
func AppendCBOR(dst []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	buf.Write(selfDescribed)
	if err := cborEncode.MarshalToBuffer(v, buf); err != nil {
		return dst, wrap(ErrCBOR, err)
	}
	return buf.Bytes(), nil
}

// RawCBOR is an already encoded CBOR data item embedded in a value given
// to AppendCBOR (a watch event's object keeps its own self-described tag,
// as upstream's does).
type RawCBOR = cbor.RawMessage

// JSONToCBOR appends to dst the self-described CBOR encoding of the JSON
// document j. Numbers written as integers that fit an int64 become CBOR
// integers, all others floats, as upstream's unstructured decoding reads
// them. Errors wrap ErrCBOR.
func JSONToCBOR(dst, j []byte) ([]byte, error) {
	v, err := DecodeJSONValue(j)
	if err != nil {
		return dst, wrap(ErrCBOR, err)
	}
	return AppendCBOR(dst, v)
}

// DecodeJSONValue decodes a JSON document into the JSON-shaped values
// AppendCBOR takes: integers that fit as int64, other numbers as float64.
func DecodeJSONValue(j []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return numbersToValues(v)
}

// numbersToValues replaces the json.Numbers in v, in place.
func numbersToValues(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s out of range", x)
		}
		return f, nil
	case map[string]any:
		for k, e := range x {
			n, err := numbersToValues(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := numbersToValues(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}

// CBORToJSON decodes one CBOR data item (a request body, with or without
// the self-described tag) and returns it as compact JSON with object keys
// sorted. Malformed or invalid input (trailing bytes, duplicate map keys,
// non-string map keys, invalid UTF-8 text, NaN, limits exceeded) is an
// error wrapping ErrCBOR whose text is the decoder's.
func CBORToJSON(data []byte) ([]byte, error) {
	var v any
	if err := cborDecode.Unmarshal(data, &v); err != nil {
		return nil, wrap(ErrCBOR, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, wrap(ErrCBOR, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// CBORTypeMeta reads the apiVersion and kind of a CBOR object the way
// upstream finds them before decoding the rest: other keys are skipped,
// but the item must be well formed and its top-level keys distinct.
func CBORTypeMeta(data []byte) (apiVersion, kind string, err error) {
	var tm struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := cborDecode.Unmarshal(data, &tm); err != nil {
		return "", "", wrap(ErrCBOR, err)
	}
	return tm.APIVersion, tm.Kind, nil
}

// cborStrict is cborDecode that also refuses map keys naming no field of
// the destination struct, the check upstream's strict decoding makes.
var cborStrict = func() cbor.DecMode {
	o := cborDecode.DecOptions()
	o.ExtraReturnErrors = cbor.ExtraDecErrorUnknownField
	m, err := o.DecMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// CBORUnknownField decodes data into into (a pointer to a struct whose
// json tags name the known fields) and returns the first unknown field
// error in upstream's words ("cbor: found unknown field at map element
// index 1": the index within the map holding it), or nil. Other decoding
// errors are not its business and are ignored: CBORToJSON reports them.
func CBORUnknownField(data []byte, into any) error {
	err := cborStrict.Unmarshal(data, into)
	var uf *cbor.UnknownFieldError
	if errors.As(err, &uf) {
		return uf
	}
	return nil
}

package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"

	"platd/server/schema"
)

// StrategicMergeBytes is StrategicMerge on JSON documents: both are decoded
// with integers as int64 and other numbers as float64, and the result is
// encoded with encoding/json (sorted members). A patch that is not a JSON
// object or null is 400 ErrMalformed with encoding/json's text, as
// upstream; an original that is not an object is 400 ErrDocument ("invalid JSON
// document"). The arguments are not modified or retained.
func StrategicMergeBytes(original, patch []byte, s *schema.Schema) ([]byte, error) {
	out, _, err := StrategicMergeBytesLeft(original, patch, s)
	return out, err
}

// StrategicMergeBytesLeft is StrategicMergeBytes that also returns the
// patch as the merge left it (the directives it applied and the nulls it
// dropped removed, values shared with the result): what upstream's
// strict-decoding errors quote. The map must not be modified.
func StrategicMergeBytesLeft(original, patch []byte, s *schema.Schema) ([]byte, map[string]any, error) {
	p, err := DecodeObject(patch)
	if err != nil {
		return nil, nil, err
	}
	o, err := decodeObject(original)
	if err != nil {
		return nil, nil, errBadJSONDoc()
	}
	out, err := StrategicMerge(o, p, s)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(out)
	return b, p, err
}

// DecodeObject decodes a strategic merge patch body as the server does
// (integers as int64, other numbers as float64, null as an empty map) into
// a new map the caller owns. A body that is not a JSON object or null is
// 400 ErrMalformed with encoding/json's text. Callers that report the
// patch in error messages (upstream prints it with %v) must do so before
// handing the map to StrategicMerge, which consumes it.
func DecodeObject(patch []byte) (map[string]any, error) {
	p, err := decodeObject(patch)
	if err != nil {
		return nil, badRequest(err.Error(), err)
	}
	return p, nil
}

// decodeObject decodes a JSON object (null gives an empty map). Errors carry
// encoding/json's text for decoding into a map.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errTrailing
		}
	}
	m, isMap := v.(map[string]any)
	if err != nil || (!isMap && v != nil) {
		// Let encoding/json word the failure exactly as upstream's decoder.
		var probe map[string]any
		if perr := json.Unmarshal(data, &probe); perr != nil {
			return nil, perr
		}
		if err != nil {
			return nil, err
		}
	}
	if m == nil {
		return map[string]any{}, nil
	}
	if err := convertNumbers(m); err != nil {
		return nil, err
	}
	return m, nil
}

var errTrailing = errors.New("invalid data after top-level value")

var floatType = reflect.TypeFor[float64]()

// convertNumbers replaces every json.Number inside v with int64 when it is
// an integer in range and float64 otherwise.
func convertNumbers(v any) error {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			n, err := convertValue(x)
			if err != nil {
				return err
			}
			t[k] = n
		}
	case []any:
		for i, x := range t {
			n, err := convertValue(x)
			if err != nil {
				return err
			}
			t[i] = n
		}
	}
	return nil
}

func convertValue(x any) (any, error) {
	switch n := x.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, &json.UnmarshalTypeError{Value: "number " + string(n), Type: floatType}
		}
		return f, nil
	case map[string]any, []any:
		return x, convertNumbers(n)
	}
	return x, nil
}

package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is one name/value pair of a JSON object.
type member struct {
	name  string
	value any
}

// members is a JSON object with its members in document order. The
// protobuf form of a document keeps the order of its JSON text, and the
// YAML of an extension value lists keys as the JSON does.
type members []member

// maxTreeDepth bounds the nesting parseTree accepts, so hostile input
// cannot exhaust the stack; generated documents nest a few dozen levels.
const maxTreeDepth = 1000

// errTree reports JSON that parseTree cannot represent.
var errTree = errors.New("openapi: malformed JSON document")

// parseTree decodes one JSON value into members, []any, string,
// json.Number, bool or nil, keeping the order of object members.
func parseTree(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := treeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the value", errTree)
	}
	return v, nil
}

func treeValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxTreeDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", errTree, maxTreeDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTree, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := members{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, fmt.Errorf("%w: %w", errTree, err)
				}
				v, err := treeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				obj = append(obj, member{name: k.(string), value: v})
			}
			if _, err := d.Token(); err != nil {
				return nil, fmt.Errorf("%w: %w", errTree, err)
			}
			return obj, nil
		case '[':
			arr := []any{}
			for d.More() {
				v, err := treeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := d.Token(); err != nil {
				return nil, fmt.Errorf("%w: %w", errTree, err)
			}
			return arr, nil
		}
		return nil, fmt.Errorf("%w: unexpected %v", errTree, t)
	default:
		return tok, nil
	}
}

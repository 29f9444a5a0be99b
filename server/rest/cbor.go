package rest

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"strconv"
	"sync"

	"platd/codec"
	"platd/server/apierr"
	"platd/server/schema"
)

// CBOR bodies are derived from the JSON the other encodings start from.
// The one thing JSON does not carry is which strings are bytes: upstream
// writes a []byte field (base64 in JSON) as raw bytes in tag 22, so the
// object's schema marks them on the way.

// writeCBOR writes the JSON body as CBOR. sch describes the object (or,
// when list, each item of the list); nil when the body holds no typed
// object (a Status, metadata).
func (h *Handler) writeCBOR(w http.ResponseWriter, r *http.Request, code int, body []byte, sch *schema.Schema, list bool) {
	c, err := cborFromJSON(body, sch, list)
	if err != nil {
		h.writeError(w, r, apierr.InternalError(err))
		return
	}
	h.send(w, r, code, codec.CBORMediaType, c)
}

// cborFromJSON converts a JSON object (or list of objects described by
// sch) to self-described CBOR.
func cborFromJSON(body []byte, sch *schema.Schema, list bool) ([]byte, error) {
	v, err := schema.DecodeAny(body)
	if err != nil {
		return nil, err
	}
	// Only built-in types (those with a protobuf form) have bytes; custom
	// resources' schemas, replaced with each definition change, are kept
	// out of the caches below.
	if sch != nil && sch.ProtoMessage != "" && hasBytes(sch) {
		if m, ok := v.(map[string]any); ok && list {
			for _, item := range asList(m["items"]) {
				markBytes(item, sch)
			}
		} else {
			v = markBytes(v, sch)
		}
	}
	return codec.AppendCBOR(make([]byte, 0, len(body)), v)
}

// markBytes returns v with the base64 strings at the Bytes places of sch
// replaced by their bytes, changing maps and lists in place. A string
// that is not base64 is left as it is.
func markBytes(v any, sch *schema.Schema) any {
	if sch == nil {
		return v
	}
	switch sch.Type {
	case schema.Bytes:
		if s, ok := v.(string); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				return b
			}
		}
	case schema.Object:
		if m, ok := v.(map[string]any); ok {
			for k, e := range m {
				if f := sch.Field(k); f != nil && hasBytes(f.Schema) {
					m[k] = markBytes(e, f.Schema)
				}
			}
		}
	case schema.Map:
		if m, ok := v.(map[string]any); ok && hasBytes(sch.Elem) {
			for k, e := range m {
				m[k] = markBytes(e, sch.Elem)
			}
		}
	case schema.Array:
		if l, ok := v.([]any); ok && hasBytes(sch.Elem) {
			for i, e := range l {
				l[i] = markBytes(e, sch.Elem)
			}
		}
	}
	return v
}

// cborStructs caches cborStructOf's type per schema.
var cborStructs sync.Map // *schema.Schema -> reflect.Type

// cborStructOf returns a new pointer to a struct shaped like sch, for the
// strict check of CBOR bodies: one field per member, named by its json
// tag; maps and lists of their item shapes; every leaf (and the part of a
// recursive schema below its first repetition) an interface, which takes
// any value, so that only unknown fields are found.
func cborStructOf(sch *schema.Schema) any {
	t, ok := cborStructs.Load(sch)
	if !ok {
		t = cborType(sch, map[*schema.Schema]bool{})
		cborStructs.Store(sch, t)
	}
	return reflect.New(t.(reflect.Type)).Interface()
}

var anyType = reflect.TypeFor[any]()

func cborType(sch *schema.Schema, building map[*schema.Schema]bool) reflect.Type {
	if sch == nil || building[sch] {
		return anyType
	}
	building[sch] = true
	defer delete(building, sch)
	switch sch.Type {
	case schema.Object:
		if sch.PreserveUnknown {
			return anyType
		}
		fields := make([]reflect.StructField, 0, len(sch.Fields))
		for i, f := range sch.Fields {
			if f.Name == "" || f.Inline {
				continue
			}
			fields = append(fields, reflect.StructField{
				Name: "F" + strconv.Itoa(i), Type: cborType(f.Schema, building),
				Tag: reflect.StructTag(`json:"` + f.Name + `"`),
			})
		}
		return reflect.StructOf(fields)
	case schema.Map:
		return reflect.MapOf(reflect.TypeFor[string](), cborType(sch.Elem, building))
	case schema.Array:
		return reflect.SliceOf(cborType(sch.Elem, building))
	}
	return anyType
}

// bytesSchemas caches hasBytes per schema; schemas are immutable once
// sealed, and there are a few thousand at most.
var bytesSchemas sync.Map // *schema.Schema -> bool

// hasBytes says whether a Bytes value may appear anywhere under sch.
func hasBytes(sch *schema.Schema) bool {
	if sch == nil {
		return false
	}
	if v, ok := bytesSchemas.Load(sch); ok {
		return v.(bool)
	}
	found := findBytes(sch, map[*schema.Schema]bool{})
	bytesSchemas.Store(sch, found)
	return found
}

// findBytes walks the (possibly cyclic) schema graph.
func findBytes(sch *schema.Schema, seen map[*schema.Schema]bool) bool {
	if sch == nil || seen[sch] {
		return false
	}
	seen[sch] = true
	switch sch.Type {
	case schema.Bytes:
		return true
	case schema.Object:
		for _, f := range sch.Fields {
			if findBytes(f.Schema, seen) {
				return true
			}
		}
	case schema.Map, schema.Array:
		return findBytes(sch.Elem, seen)
	}
	return false
}

package patch

import (
	"bytes"
	"encoding/json"
	"errors"

	jsonpatch "github.com/evanphx/json-patch"
)

// MergePatch applies an RFC 7386 merge patch to the JSON document original
// and returns the new document (a fresh slice; the arguments are not
// modified or retained). A patch that is not a JSON object or null is 400
// ErrMalformed with upstream's text ("error decoding patch: unexpected end
// of JSON input"); so is a null patch, which upstream's library refuses
// ("Invalid JSON Patch"). An original that is not JSON is ErrDocument.
func MergePatch(original []byte, patch []byte) ([]byte, error) {
	if err := checkObject(patch); err != nil {
		return nil, badRequest("error decoding patch: "+err.Error(), err)
	}
	out, err := jsonpatch.MergePatch(original, patch)
	if err != nil {
		if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
			return nil, badRequest(err.Error(), err)
		}
		return nil, &plainError{msg: err.Error(), kind: ErrDocument}
	}
	return out, nil
}

// checkObject reports why data is not a JSON object or null, in
// encoding/json's words. The common case (valid object) costs one scan.
func checkObject(data []byte) error {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) > 0 && (t[0] == '{' || t[0] == 'n') && json.Valid(data) {
		return nil
	}
	var m map[string]any
	return json.Unmarshal(data, &m)
}

// MergeText is the document a merge patch makes of original as upstream's
// errors quote it: the members of every object the merge opened (the
// top level, objects merged into, objects the patch adds) in sorted
// order, every other value as original or patch wrote it (escapes kept),
// compacted. Members set to null are removed. It serves messages only:
// MergePatch is the merge itself.
func MergeText(original, patch []byte) (string, error) {
	var doc, p map[string]json.RawMessage
	if err := json.Unmarshal(original, &doc); err != nil {
		return "", err
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return "", err
	}
	mergeMembers(doc, p, 1)
	out, err := json.Marshal(doc)
	return string(out), err
}

// openDepth bounds how deep MergeText opens values one level at a time,
// as upstream does: each level is parsed again, so a deeper value is
// decoded once instead, its strings written anew.
const openDepth = 32

func mergeMembers(doc, patch map[string]json.RawMessage, depth int) {
	for k, v := range patch {
		cur, ok := doc[k]
		switch {
		case isNull(v):
			delete(doc, k)
		case !ok || isNull(cur):
			doc[k] = withoutNulls(v, depth)
		default:
			doc[k] = mergeValue(cur, v, depth)
		}
	}
}

// mergeValue merges patch into cur when both are objects; otherwise the
// patch's value replaces cur.
func mergeValue(cur, patch json.RawMessage, depth int) json.RawMessage {
	var c map[string]json.RawMessage
	if depth >= openDepth || json.Unmarshal(cur, &c) != nil {
		return withoutNulls(patch, depth)
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(patch, &p) != nil {
		return patch
	}
	mergeMembers(c, p, depth+1)
	out, _ := json.Marshal(c)
	return out
}

// withoutNulls is v with the null members of its objects removed, within
// arrays too, each object's members sorted.
func withoutNulls(v json.RawMessage, depth int) json.RawMessage {
	if depth >= openDepth {
		return decodedWithoutNulls(v)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) == nil {
		for k, e := range m {
			if isNull(e) {
				delete(m, k)
			} else {
				m[k] = withoutNulls(e, depth+1)
			}
		}
		out, _ := json.Marshal(m)
		return out
	}
	var a []json.RawMessage
	if json.Unmarshal(v, &a) == nil {
		for i, e := range a {
			if !isNull(e) {
				a[i] = withoutNulls(e, depth+1)
			}
		}
		out, _ := json.Marshal(a)
		return out
	}
	return v
}

// decodedWithoutNulls is withoutNulls decoding v once, its numbers kept
// as written.
func decodedWithoutNulls(v json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return v
	}
	out, err := json.Marshal(dropNulls(x))
	if err != nil {
		return v
	}
	return out
}

func dropNulls(x any) any {
	switch x := x.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return x
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

package patch

import (
	"maps"
	"slices"
	"strings"

	"platd/server/schema"
)

// The strategic merge patch directives.
const (
	directiveMarker    = "$patch"
	deleteDirective    = "delete"
	replaceDirective   = "replace"
	mergeDirective     = "merge"
	retainKeysStrategy = "retainKeys"

	retainKeysDirective           = "$" + retainKeysStrategy
	deleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList"
	setElementOrderPrefix         = "$setElementOrder"
)

// StrategicMerge applies a strategic merge patch to original as upstream's
// server does, driven by the schema s of the object (nil or an Any schema
// means free-form: maps merge, lists replace, directives still apply).
//
// Maps merge member by member and a null member deletes; a list member
// whose field has patch strategy "merge" merges by its patch merge key
// (lists of scalars are unioned), other lists are replaced. The directives
// $patch (replace, delete), $retainKeys, $deleteFromPrimitiveList/<field>
// and $setElementOrder/<field> are honoured.
//
// StrategicMerge takes ownership of both maps: it modifies them and the
// result shares their values, so neither may be used afterwards. Errors
// wrap ErrMalformed (400), ErrRejected (422) or ErrStrategic (500, with
// upstream's text, such as "unknown patch type: x in map: ...").
func StrategicMerge(original map[string]any, patch map[string]any, s *schema.Schema) (map[string]any, error) {
	return mergeMap(original, patch, s)
}

// mergeMap merges patch into original (both consumed) under schema s.
func mergeMap(original, patch map[string]any, s *schema.Schema) (map[string]any, error) {
	if v, ok := patch[directiveMarker]; ok {
		return mapDirective(v, patch)
	}
	if original == nil {
		original = map[string]any{}
	}
	if err := applyRetainKeys(original, patch); err != nil {
		return nil, err
	}
	if err := applySetElementOrder(original, patch, s); err != nil {
		return nil, err
	}
	for _, k := range mergeOrder(patch) {
		pv := patch[k]
		isDeleteList := false
		if strings.HasPrefix(k, deleteFromPrimitiveListPrefix) {
			key, err := extractKey(k, deleteFromPrimitiveListPrefix)
			if err != nil {
				return nil, err
			}
			k, isDeleteList = key, true
		}
		if pv == nil {
			delete(original, k)
			continue
		}
		ov, found := original[k]
		if !found || kindOf(ov) != kindOf(pv) {
			if !isDeleteList {
				setClean(original, k, pv)
			}
			continue
		}
		var err error
		switch o := ov.(type) {
		case map[string]any:
			var m fieldMeta
			if m, err = memberMeta(s, k); err != nil {
				return nil, err
			}
			if m.strategy == replaceDirective {
				original[k] = pv
			} else {
				original[k], err = mergeMap(o, pv.(map[string]any), m.schema)
			}
		case []any:
			var m fieldMeta
			if m, err = memberMeta(s, k); err != nil {
				return nil, err
			}
			original[k], err = mergeList(o, pv.([]any), m, isDeleteList)
		default:
			setClean(original, k, pv)
		}
		if err != nil {
			return nil, err
		}
	}
	return original, nil
}

// mapDirective applies a $patch directive found in a patch map.
func mapDirective(v any, patch map[string]any) (map[string]any, error) {
	switch v {
	case replaceDirective:
		delete(patch, directiveMarker)
		return patch, nil
	case deleteDirective:
		return map[string]any{}, nil
	}
	return nil, strategicErr("unknown patch type: %s in map: %v", v, patch)
}

// setClean stores a patch value that has nothing to merge with: nulls
// inside it are dropped and maps carrying $patch removed.
func setClean(original map[string]any, k string, pv any) {
	discardNulls(pv)
	if v, keep := removeDirectives(pv); keep {
		original[k] = v
	} else {
		delete(original, k)
	}
}

// discardNulls drops null members from every map inside v.
func discardNulls(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if x == nil {
				delete(t, k)
			} else {
				discardNulls(x)
			}
		}
	case []any:
		for _, x := range t {
			discardNulls(x)
		}
	}
}

// removeDirectives drops every map that carries $patch from v and reports
// whether v itself survives.
func removeDirectives(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t[directiveMarker]; ok {
			return nil, false
		}
		for k, x := range t {
			if nx, keep := removeDirectives(x); keep {
				t[k] = nx
			} else {
				delete(t, k)
			}
		}
		return t, true
	case []any:
		if t == nil {
			return t, true
		}
		out := make([]any, 0, len(t))
		for _, x := range t {
			if nx, keep := removeDirectives(x); keep {
				out = append(out, nx)
			}
		}
		return out, true
	}
	return v, true
}

// extractKey returns the field named by a "<prefix>/<field>" directive key.
func extractKey(s, prefix string) (string, error) {
	head, field, ok := strings.Cut(s, "/")
	if !ok || head != prefix {
		if prefix == deleteFromPrimitiveListPrefix {
			return "", errBadPrimitiveList()
		}
		return "", errBadSetElementOrder()
	}
	return field, nil
}

// mergeOrder lists the keys of patch in the order mergeMap applies them:
// sorted, with parallel deletion lists last, so that a list and its
// $deleteFromPrimitiveList give the same result whatever the map order
// (additions first, then deletions, as a client's diff intends).
func mergeOrder(patch map[string]any) []string {
	keys := sortedKeys(patch)
	out := keys[:0:len(keys)]
	var deletions []string
	for _, k := range keys {
		if strings.HasPrefix(k, deleteFromPrimitiveListPrefix) {
			deletions = append(deletions, k)
		} else {
			out = append(out, k)
		}
	}
	return append(out, deletions...)
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

package patch

import (
	"fmt"
	"strings"

	"platd/server/schema"
)

// applyRetainKeys applies a $retainKeys directive of patch to original:
// members of original not listed are cleared. Every non-null member the
// patch sets must be listed.
func applyRetainKeys(original, patch map[string]any) error {
	rk, found := patch[retainKeysDirective]
	if !found {
		return nil
	}
	delete(patch, retainKeysDirective)
	list, ok := rk.([]any)
	if !ok {
		return errBadRetainKeys()
	}
	keep := make(map[string]bool, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			keep[s] = true
		}
	}
	for k, v := range patch {
		if v == nil || strings.HasPrefix(k, deleteFromPrimitiveListPrefix) || strings.HasPrefix(k, setElementOrderPrefix) {
			continue
		}
		if !keep[k] {
			return errBadRetainKeys()
		}
	}
	for k := range original {
		if !keep[k] {
			delete(original, k)
		}
	}
	return nil
}

// applySetElementOrder handles every $setElementOrder/<field> of patch: the
// field's list is merged (or taken from whichever side has it) and ordered
// by the directive, items it does not name keeping their original places
// as far as possible. The directive and the field are removed from patch.
func applySetElementOrder(original, patch map[string]any, s *schema.Schema) error {
	for _, key := range sortedKeys(patch) {
		if !strings.HasPrefix(key, setElementOrderPrefix) {
			continue
		}
		raw := patch[key]
		delete(patch, key)
		order, ok := raw.([]any)
		if !ok {
			return errBadArgType("[]interface {}", raw)
		}
		field, err := extractKey(key, setElementOrderPrefix)
		if err != nil {
			return err
		}
		ol, foundOriginal := original[field]
		pl, foundPatch := patch[field]
		var origList, patchList []any
		if foundOriginal {
			if origList, ok = ol.([]any); !ok {
				return errBadArgType("[]interface {}", ol)
			}
		}
		if foundPatch {
			if patchList, ok = pl.([]any); !ok {
				return errBadArgType("[]interface {}", pl)
			}
		}
		m, err := memberMeta(s, field)
		if err != nil {
			return err
		}
		if err := checkPatchOrder(patchList, order, m.mergeKey); err != nil {
			return err
		}
		var merged []any
		switch {
		case foundOriginal && !foundPatch:
			merged = origList
		case !foundOriginal && foundPatch:
			v, _ := removeDirectives(patchList)
			merged, _ = v.([]any)
		case foundOriginal && foundPatch:
			if merged, err = mergeList(origList, patchList, m, false); err != nil {
				return err
			}
		default:
			continue
		}
		named, rest, err := partition(merged, order, m.mergeKey)
		if err != nil {
			return err
		}
		kind, err := elementKind(origList, patchList)
		if err != nil {
			return err
		}
		sorted, err := normalizeOrder(named, rest, order, origList, m.mergeKey, kind)
		if err != nil {
			return err
		}
		original[field] = sorted
		delete(patch, field)
	}
	return nil
}

// checkPatchOrder verifies that the patch list's items (deletions and
// other directive items aside) appear in the order list, in its order.
func checkPatchOrder(patchList, order []any, mergeKey string) error {
	if len(order) == 0 || len(patchList) == 0 {
		return nil
	}
	items := patchList
	if mergeKey != "" {
		items = make([]any, 0, len(patchList))
		for _, v := range patchList {
			m, ok := v.(map[string]any)
			if !ok {
				return errBadArgType("map[string]interface {}", v)
			}
			if m[directiveMarker] != deleteDirective {
				items = append(items, v)
			}
		}
	}
	pi, oi := 0, 0
	for pi < len(items) && oi < len(order) {
		if m, ok := items[pi].(map[string]any); ok {
			if _, d := m[directiveMarker]; d {
				pi++
				continue
			}
		}
		same, err := sameMergeKey(items[pi], order[oi], mergeKey)
		if err != nil {
			return err
		}
		if same {
			pi++
		}
		oi++
	}
	if pi < len(items) && oi >= len(order) {
		return strategicErr("%s", fmt.Sprintf("the order in patch list:\n%v\n doesn't match %s list:\n%v", patchList, setElementOrderPrefix, order))
	}
	return nil
}

// sameMergeKey compares two list items by merge key, or by value when the
// list has none.
func sameMergeKey(a, b any, mergeKey string) (bool, error) {
	if mergeKey == "" {
		return equal(a, b), nil
	}
	ma, ok := a.(map[string]any)
	if !ok {
		return false, errBadArgType("map[string]interface {}", a)
	}
	mb, ok := b.(map[string]any)
	if !ok {
		return false, errBadArgType("map[string]interface {}", b)
	}
	ka, ok := ma[mergeKey]
	if !ok {
		return false, errNoMergeKey(ma, mergeKey)
	}
	kb, ok := mb[mergeKey]
	if !ok {
		return false, errNoMergeKey(mb, mergeKey)
	}
	return equal(ka, kb), nil
}

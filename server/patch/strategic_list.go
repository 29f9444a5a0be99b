package patch

import (
	"sort"

	"platd/server/schema"
)

// mergeList merges a patch list into the original list of a member with
// meta m. Lists without the merge strategy are replaced, except parallel
// deletion lists, which always subtract.
func mergeList(original, patch []any, m fieldMeta, isDeleteList bool) ([]any, error) {
	if m.strategy != mergeDirective && !isDeleteList {
		return patch, nil
	}
	return mergeSlice(original, patch, m.elem(), m.mergeKey, isDeleteList)
}

// mergeSlice merges two lists: scalars are unioned (or, for a deletion
// list, subtracted); maps are merged by mergeKey after the $patch items of
// the patch are applied. The result keeps the patch's order for the items
// it names and the original's for the rest, interleaved.
func mergeSlice(original, patch []any, elem *schema.Schema, mergeKey string, isDeleteList bool) ([]any, error) {
	if len(original) == 0 && len(patch) == 0 {
		return original, nil
	}
	kind, err := elementKind(original, patch)
	if err != nil {
		return nil, err
	}
	var merged []any
	if kind != kindMap {
		if isDeleteList {
			return subtract(original, patch), nil
		}
		merged = union(original, patch)
	} else {
		if mergeKey == "" {
			return nil, strategicErr("cannot merge lists without merge key for %s", kindName(elem))
		}
		if original, patch, err = applyListDirectives(original, patch, mergeKey); err != nil {
			return nil, err
		}
		if merged, err = mergeByKey(original, patch, mergeKey, elem); err != nil {
			return nil, err
		}
	}
	patchItems, serverOnly, err := partition(merged, patch, mergeKey)
	if err != nil {
		return nil, err
	}
	return normalizeOrder(patchItems, serverOnly, patch, original, mergeKey, kind)
}

// union is a followed by the items of b it lacks, without duplicates.
func union(a, b []any) []any {
	out := make([]any, 0, len(a)+len(b))
	for _, lst := range [][]any{a, b} {
		for _, v := range lst {
			if !contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// subtract is current without the items of toDelete.
func subtract(current, toDelete []any) []any {
	out := make([]any, 0, len(current))
	for _, v := range current {
		if !contains(toDelete, v) {
			out = append(out, v)
		}
	}
	return out
}

func contains(l []any, v any) bool {
	for _, x := range l {
		if equal(v, x) {
			return true
		}
	}
	return false
}

// applyListDirectives applies the $patch items of a merge list: delete
// removes the original items with that key, replace makes the patch's
// other items the whole list. It returns the new original and the patch
// without directive items.
func applyListDirectives(original, patch []any, mergeKey string) ([]any, []any, error) {
	plain := make([]any, 0, len(patch))
	replace := false
	for _, v := range patch {
		item := v.(map[string]any)
		d, ok := item[directiveMarker]
		if !ok {
			plain = append(plain, v)
			continue
		}
		switch d {
		case deleteDirective:
			kv, ok := item[mergeKey]
			if !ok {
				return nil, nil, errNoMergeKey(item, mergeKey)
			}
			var err error
			if original, err = deleteByKey(original, mergeKey, kv); err != nil {
				return nil, nil, err
			}
		case replaceDirective:
			replace = true
		case mergeDirective:
			return nil, nil, strategicErr("merging lists cannot yet be specified in the patch")
		default:
			return nil, nil, strategicErr("unknown patch type: %s in map: %v", d, item)
		}
	}
	if replace {
		return plain, nil, nil
	}
	return original, plain, nil
}

// deleteByKey removes every map of l whose mergeKey equals kv.
func deleteByKey(l []any, mergeKey string, kv any) ([]any, error) {
	out := l[:0:0]
	for i, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, strategicErr("value for key %v is not a map", i)
		}
		if x, ok := m[mergeKey]; ok && equal(x, kv) {
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

// findByKey returns the first map of l whose mergeKey equals kv.
func findByKey(l []any, mergeKey string, kv any) (map[string]any, int, error) {
	for i, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, 0, strategicErr("value for key %v is not a map", i)
		}
		if x, ok := m[mergeKey]; ok && equal(x, kv) {
			return m, i, nil
		}
	}
	return nil, -1, nil
}

// mergeByKey merges each patch item into the original item with the same
// merge key, appending items the original lacks.
func mergeByKey(original, patch []any, mergeKey string, elem *schema.Schema) ([]any, error) {
	for _, v := range patch {
		item := v.(map[string]any)
		kv, ok := item[mergeKey]
		if !ok {
			return nil, errNoMergeKey(item, mergeKey)
		}
		om, i, err := findByKey(original, mergeKey, kv)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			original = append(original, v)
			continue
		}
		if original[i], err = mergeMap(om, item, elem); err != nil {
			return nil, err
		}
	}
	return original, nil
}

// partition splits merged into the items named by the list by (by merge
// key, or by value for scalars) and the rest.
func partition(merged, by []any, mergeKey string) (named, rest []any, err error) {
	named = make([]any, 0, len(merged))
	rest = make([]any, 0, len(merged))
	for _, v := range merged {
		var in bool
		if mergeKey == "" {
			in = contains(by, v)
		} else {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, errBadArgType("map[string]interface {}", v)
			}
			kv, ok := m[mergeKey]
			if !ok {
				return nil, nil, errNoMergeKey(m, mergeKey)
			}
			_, i, err := findByKey(by, mergeKey, kv)
			if err != nil {
				return nil, nil, err
			}
			in = i >= 0
		}
		if in {
			named = append(named, v)
		} else {
			rest = append(rest, v)
		}
	}
	return named, rest, nil
}

// normalizeOrder sorts the patch-named items by patchOrder and the rest by
// serverOrder, then interleaves them: a server item goes before a patch item
// when the server order says so, otherwise the patch item goes first.
func normalizeOrder(patchItems, serverOnly, patchOrder, serverOrder []any, mergeKey string, kind valueKind) ([]any, error) {
	patchItems, err := sortByOrder(patchItems, patchOrder, mergeKey, kind)
	if err != nil {
		return nil, err
	}
	if serverOnly, err = sortByOrder(serverOnly, serverOrder, mergeKey, kind); err != nil {
		return nil, err
	}
	pos := newPositions(serverOrder, mergeKey, kind)
	out := make([]any, 0, len(patchItems)+len(serverOnly))
	i, j := 0, 0
	for i < len(serverOnly) || j < len(patchItems) {
		switch {
		case i >= len(serverOnly):
			out = append(out, patchItems[j])
			j++
		case j >= len(patchItems):
			out = append(out, serverOnly[i])
			i++
		default:
			li, ri := pos.of(serverOnly[i]), pos.of(patchItems[j])
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, serverOnly[i])
				i++
			} else {
				out = append(out, patchItems[j])
				j++
			}
		}
	}
	return out, nil
}

// sortByOrder stably sorts items by their position in order; for maps each
// item and order entry must carry the merge key, and items marked
// "$patch: delete" move to the end. Items missing from the order compare
// as upstream's comparison does, so results match it.
func sortByOrder(items, order []any, mergeKey string, kind valueKind) ([]any, error) {
	var toDelete []any
	if kind == kindMap {
		if err := requireMergeKey(mergeKey, items, order); err != nil {
			return nil, err
		}
		keep := make([]any, 0, len(items))
		for _, v := range items {
			if v.(map[string]any)[directiveMarker] == deleteDirective {
				toDelete = append(toDelete, v)
			} else {
				keep = append(keep, v)
			}
		}
		items = keep
	}
	pos := newPositions(order, mergeKey, kind)
	type ranked struct {
		v any
		p int
	}
	rs := make([]ranked, len(items))
	for i, v := range items {
		rs[i] = ranked{v, pos.of(v)}
	}
	sort.SliceStable(rs, func(a, b int) bool {
		if rs[a].p >= 0 && rs[b].p >= 0 {
			return rs[a].p < rs[b].p
		}
		return true
	})
	out := make([]any, 0, len(rs)+len(toDelete))
	for _, r := range rs {
		out = append(out, r.v)
	}
	return append(out, toDelete...), nil
}

// requireMergeKey checks that every item of the lists is a map carrying
// mergeKey.
func requireMergeKey(mergeKey string, lists ...[]any) error {
	for _, l := range lists {
		for _, v := range l {
			m, ok := v.(map[string]any)
			if !ok {
				return errBadArgType("map[string]interface {}", v)
			}
			if _, ok := m[mergeKey]; !ok {
				return errNoMergeKey(m, mergeKey)
			}
		}
	}
	return nil
}

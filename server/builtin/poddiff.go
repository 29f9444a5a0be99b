package builtin

import (
	"strconv"
	"strings"

	"platd/server/schema"
)

// semanticEqual compares two decoded values as upstream compares the Go
// values they decode into: an absent member equals its zero value, and an
// empty list or map equals none.
func semanticEqual(a, b any) bool {
	if isEmptyValue(a) || isEmptyValue(b) {
		return isEmptyValue(a) && isEmptyValue(b)
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			if !semanticEqual(v, y[k]) {
				return false
			}
		}
		for k, v := range y {
			if _, seen := x[k]; !seen && !isEmptyValue(v) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !semanticEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if n, ok := intOf(a); ok {
		m, ok := intOf(b)
		return ok && n == m
	}
	return a == b
}

// specDiff renders what an update changed in a spec, one line per changed
// value, in the layout of upstream's diff: "-" old, "+" new, members by
// their path.
func specDiff(old, cur map[string]any) string { return structDiff("core.PodSpec", old, cur) }

// structDiff is specDiff for a value upstream's diff names typ.
func structDiff(typ string, old, cur map[string]any) string {
	var lines []string
	diffValues(&lines, "", old, cur)
	return "  " + typ + "{\n" + strings.Join(lines, "") + "  }\n"
}

func diffValues(lines *[]string, path string, a, b any) {
	if semanticEqual(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if (aok || a == nil) && (bok || b == nil) && (aok || bok) {
		keys := map[string]any{}
		for k := range am {
			keys[k] = nil
		}
		for k := range bm {
			keys[k] = nil
		}
		for _, k := range sortedKeys(keys) {
			diffValues(lines, joinPath(path, k), am[k], bm[k])
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diffValues(lines, path+"["+strconv.Itoa(i)+"]", al[i], bl[i])
		}
		return
	}
	if !isEmptyValue(a) {
		*lines = append(*lines, "- \t"+path+": "+renderValue(a)+",\n")
	}
	if !isEmptyValue(b) {
		*lines = append(*lines, "+ \t"+path+": "+renderValue(b)+",\n")
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// renderValue prints a decoded value compactly: strings quoted, objects
// and lists as JSON.
func renderValue(v any) string {
	b, err := schema.AppendAny(nil, v)
	if err != nil {
		return "?"
	}
	return string(b)
}

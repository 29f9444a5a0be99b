package rest

import (
	"time"

	"platd/server/registry"
)

// Object is a decoded object.
type Object = registry.Object

// meta returns the metadata map of obj, creating it when create is set.
func meta(obj Object, create bool) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok && create {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

// metaString reads a string member of metadata.
func metaString(obj Object, field string) string {
	s, _ := meta(obj, false)[field].(string)
	return s
}

// setMeta writes a metadata member; nil or "" deletes it.
func setMeta(obj Object, field string, v any) {
	m := meta(obj, true)
	if v == nil || v == "" {
		delete(m, field)
		return
	}
	m[field] = v
}

// stringMap reads a map[string]string-shaped member such as labels.
func stringMap(m map[string]any, field string) map[string]any {
	v, _ := m[field].(map[string]any)
	return v
}

// finalizers returns metadata.finalizers.
func finalizers(obj Object) []string { return registry.Strings(meta(obj, false)["finalizers"]) }

// timestamp renders t the way metadata times are written.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

package rest

import (
	"crypto/rand"
	"fmt"
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

// nameSuffixAlphabet is what generateName suffixes are drawn from: no vowels
// and no look-alike characters, so generated names never spell words.
const nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// maxGeneratedNameBase is how much of generateName is kept, leaving room for
// the five-character suffix within a 63-character label.
const maxGeneratedNameBase = 58

// generateName appends a random suffix to base.
func generateName(base string) string {
	if len(base) > maxGeneratedNameBase {
		base = base[:maxGeneratedNameBase]
	}
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	out := []byte(base)
	for _, x := range b {
		out = append(out, nameSuffixAlphabet[int(x)%len(nameSuffixAlphabet)])
	}
	return string(out)
}

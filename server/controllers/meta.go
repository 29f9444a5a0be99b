package controllers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"platd/server/registry"
	"platd/server/rest"
)

// objectMeta is the part of a stored object's metadata the controllers
// read from watch events, without decoding the rest.
type objectMeta struct {
	Name                       string     `json:"name"`
	Namespace                  string     `json:"namespace"`
	UID                        string     `json:"uid"`
	DeletionTimestamp          string     `json:"deletionTimestamp"`
	DeletionGracePeriodSeconds *int64     `json:"deletionGracePeriodSeconds"`
	Finalizers                 []string   `json:"finalizers"`
	OwnerReferences            []ownerRef `json:"ownerReferences"`
}

// ownerRef is one metadata.ownerReferences entry.
type ownerRef struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion"`
}

// blocks reports whether the reference holds a foreground deletion of
// its owner.
func (r ownerRef) blocks() bool { return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion }

// parseMeta reads the metadata of stored object bytes (JSON).
func parseMeta(value []byte) (objectMeta, error) {
	// Only the metadata is read: encoding/json would otherwise scan the
	// whole object (a Pod's spec) twice, for every event of every object.
	if md, err := rest.StoredMetadata(value); err == nil {
		if m, ok := scanMeta(md); ok {
			return m, nil
		}
		var m objectMeta
		if err := json.Unmarshal(md, &m); err != nil {
			return objectMeta{}, fmt.Errorf("reading stored metadata: %w", err)
		}
		return m, nil
	}
	var obj struct {
		Metadata objectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(value, &obj); err != nil {
		return objectMeta{}, fmt.Errorf("reading stored metadata: %w", err)
	}
	return obj.Metadata, nil
}

// metaStrings are the string fields of objectMeta scanMeta reads itself.
var metaStrings = [...]string{"name", "namespace", "uid", "deletionTimestamp"}

// metaOthers are the other fields, which it hands to encoding/json.
var metaOthers = [...]string{"deletionGracePeriodSeconds", "finalizers", "ownerReferences"}

// scanMeta reads a stored object's metadata md (compact JSON, valid as
// the store holds it) without decoding the fields no controller reads
// (managedFields, labels, annotations): the garbage collector reads every
// object at its start. It reports false for anything it does not read
// exactly as encoding/json would (a key that differs from a field in case
// only, a string with escapes or bytes outside printable ASCII, a field of
// another JSON type), and the caller decodes md with encoding/json.
func scanMeta(md []byte) (objectMeta, bool) {
	var m objectMeta
	if len(md) < 2 || md[0] != '{' {
		return m, false
	}
	if md[1] == '}' {
		return m, len(md) == 2
	}
	for i := 1; ; {
		key, ok := plainString(md[i:])
		if !ok {
			return m, false
		}
		i += len(key) + 2
		if i >= len(md) || md[i] != ':' {
			return m, false
		}
		i++
		n := valueLen(md[i:])
		if n == 0 {
			return m, false
		}
		if !m.set(string(key), md[i:i+n]) {
			return m, false
		}
		i += n
		switch {
		case i < len(md) && md[i] == ',':
			i++
		case i == len(md)-1 && md[i] == '}':
			return m, true
		default:
			return m, false
		}
	}
}

// set stores the value v of key into m, reporting false where scanMeta
// would not read it as encoding/json does.
func (m *objectMeta) set(key string, v []byte) bool {
	var str *string
	switch key {
	case "name":
		str = &m.Name
	case "namespace":
		str = &m.Namespace
	case "uid":
		str = &m.UID
	case "deletionTimestamp":
		str = &m.DeletionTimestamp
	case "deletionGracePeriodSeconds":
		return json.Unmarshal(v, &m.DeletionGracePeriodSeconds) == nil
	case "finalizers":
		return json.Unmarshal(v, &m.Finalizers) == nil
	case "ownerReferences":
		return json.Unmarshal(v, &m.OwnerReferences) == nil
	default:
		// encoding/json also matches a key that differs in case only.
		for _, f := range metaStrings {
			if strings.EqualFold(key, f) {
				return false
			}
		}
		for _, f := range metaOthers {
			if strings.EqualFold(key, f) {
				return false
			}
		}
		return true
	}
	s, ok := plainString(v)
	if !ok || len(s)+2 != len(v) {
		return false
	}
	*str = string(s)
	return true
}

// plainString returns the contents of the JSON string v starts with when
// it holds only printable ASCII without escapes.
func plainString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			return v[1:i], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// valueLen is the length of the compact JSON value v starts with, 0 when
// it does not end inside v.
func valueLen(v []byte) int {
	if len(v) == 0 {
		return 0
	}
	depth, inString := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
				if depth == 0 {
					return i + 1
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the enclosing object
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return 0
}

func (m objectMeta) deleting() bool { return m.DeletionTimestamp != "" }

func (m objectMeta) hasFinalizer(f string) bool { return slices.Contains(m.Finalizers, f) }

// removeFinalizer takes f out of the finalizer list at m[key]
// (metadata.finalizers, or a namespace's spec.finalizers) and reports
// whether it was there. An emptied list is dropped, as upstream's omitempty
// encoding drops it.
func removeFinalizer(m map[string]any, key, f string) bool {
	fins := registry.Strings(m[key])
	if !slices.Contains(fins, f) {
		return false
	}
	fins = slices.DeleteFunc(fins, func(s string) bool { return s == f })
	if len(fins) == 0 {
		delete(m, key)
	} else {
		m[key] = registry.AnyList(fins)
	}
	return true
}

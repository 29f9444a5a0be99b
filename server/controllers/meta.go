package controllers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"platd/server/registry"
	"platd/server/schema"
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

// storedMetadataKey starts every stored object: the server writes the
// metadata first.
var storedMetadataKey = []byte(`{"metadata":`)

// parseMeta reads the metadata of stored object bytes (JSON).
func parseMeta(value []byte) (objectMeta, error) {
	// Only the members kept are decoded, in one scan of the metadata that
	// stops at its end: encoding/json would scan the whole object (a Pod's
	// spec) twice, for every event of every object.
	if bytes.HasPrefix(value, storedMetadataKey) {
		m, _, err := metadataMembers(value[len(storedMetadataKey):])
		if err != nil {
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

// metadataMembers decodes the members objectMeta keeps of the metadata
// object md starts with, skipping the others unread, and returns the
// object's length. Member names match as encoding/json matches objectMeta's
// tags: exactly, or else ignoring case.
func metadataMembers(md []byte) (objectMeta, int, error) {
	var m objectMeta
	n, err := schema.EachMember(md, func(name, raw []byte) error {
		key := string(name)
		if !isMetaMember(key) {
			key = foldedMetaMember(name)
		}
		var field any
		switch key {
		case "name":
			return setString(&m.Name, raw)
		case "namespace":
			return setString(&m.Namespace, raw)
		case "uid":
			return setString(&m.UID, raw)
		case "deletionTimestamp":
			return setString(&m.DeletionTimestamp, raw)
		case "deletionGracePeriodSeconds":
			field = &m.DeletionGracePeriodSeconds
		case "finalizers":
			field = &m.Finalizers
		case "ownerReferences":
			field = &m.OwnerReferences
		default:
			return nil
		}
		return json.Unmarshal(raw, field)
	})
	return m, n, err
}

// metaMembers are the metadata members objectMeta keeps.
var metaMembers = []string{"name", "namespace", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers", "ownerReferences"}

func isMetaMember(name string) bool {
	switch name {
	case "name", "namespace", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers", "ownerReferences":
		return true
	}
	return false
}

// foldedMetaMember is the kept member name equals ignoring case, "" for
// none.
func foldedMetaMember(name []byte) string {
	for _, m := range metaMembers {
		if bytes.EqualFold(name, []byte(m)) {
			return m
		}
	}
	return ""
}

// setString sets *dst to the JSON string raw holds; other values decode
// as encoding/json decodes them into a string (null keeps *dst).
func setString(dst *string, raw []byte) error {
	if len(raw) >= 2 && raw[0] == '"' {
		*dst = schema.Unquote(raw[1 : len(raw)-1])
		return nil
	}
	return json.Unmarshal(raw, dst)
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

package controllers

import (
	"encoding/json"
	"fmt"
	"slices"

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

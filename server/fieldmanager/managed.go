package fieldmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"platd/server/schema"
)

// Operations of a managedFields entry.
const (
	OpApply  = "Apply"
	OpUpdate = "Update"
)

// Manager names the server itself gives.
const (
	// BeforeFirstApply owns what an object held when it was first
	// applied to without any recorded ownership.
	BeforeFirstApply = "before-first-apply"
	// ancientChanges collects the oldest Update entries beyond maxUpdaters.
	ancientChanges = "ancient-changes"
	// maxUpdaters is upstream's cap on Update entries per object: past it
	// the oldest are folded into one ancientChanges entry per version.
	maxUpdaters = 10
)

// Managed is an object's field ownership: per manager identifier (see
// identity), the set it owns and the time of its last change (RFC 3339,
// "" when unknown).
type Managed struct {
	Fields fieldpath.ManagedFields
	Times  map[string]string
}

func emptyManaged() Managed {
	return Managed{Fields: fieldpath.ManagedFields{}, Times: map[string]string{}}
}

// ident is what tells managedFields entries apart: an Apply entry is one
// per manager and subresource whatever the version it applied in.
type ident struct {
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// entry is the managedFields entry of id owning the fields raw (FieldsV1),
// with its time when there is one.
func entry(id ident, raw []byte, time string) map[string]any {
	out := map[string]any{"manager": id.Manager, "operation": id.Operation, "apiVersion": id.APIVersion,
		"fieldsType": "FieldsV1", "fieldsV1": schema.RawJSON(raw)}
	if id.Subresource != "" {
		out["subresource"] = id.Subresource
	}
	if time != "" {
		out["time"] = time
	}
	return out
}

// key is the identifier structured-merge-diff sees, the entry's JSON
// without time and fields, so that sorting identifiers orders managers
// as upstream does in conflict messages.
func (i ident) key() string {
	if i.Operation == OpApply {
		i.APIVersion = ""
	}
	if k, ok := idents.keys.Load(i); ok {
		return k.(string)
	}
	b, _ := json.Marshal(i)
	k := string(b)
	idents.remember(i, k)
	return k
}

func parseIdent(key string) ident {
	if i, ok := idents.byKey.Load(key); ok {
		return i.(ident)
	}
	var i ident
	if err := json.Unmarshal([]byte(key), &i); err != nil {
		i.Manager = key
	}
	idents.remember(i, key)
	return i
}

// idents remembers the identifiers of the managers seen, both ways: every
// write encodes and decodes its object's few, and they recur.
var idents identCache

// maxIdents bounds identCache: manager names come from clients.
const maxIdents = 4096

type identCache struct {
	keys, byKey sync.Map
	n           atomic.Int32
}

func (c *identCache) remember(i ident, key string) {
	if c.n.Load() >= maxIdents {
		return
	}
	if _, loaded := c.byKey.LoadOrStore(key, i); !loaded {
		c.n.Add(1)
		c.keys.Store(i, key)
	}
}

// Decode reads metadata.managedFields entries in their decoded form. Any
// malformed entry makes the whole list invalid, as upstream.
func Decode(entries []any) (Managed, error) {
	m := Managed{Fields: make(fieldpath.ManagedFields, len(entries)), Times: make(map[string]string, len(entries))}
	for i, e := range entries {
		em, _ := e.(map[string]any)
		if em == nil {
			return Managed{}, fmt.Errorf("managed fields entry %d is not an object", i)
		}
		id := ident{Manager: str(em, "manager"), Operation: str(em, "operation"), APIVersion: str(em, "apiVersion"), Subresource: str(em, "subresource")}
		if id.Operation != OpApply && id.Operation != OpUpdate {
			return Managed{}, errors.New("operation must be `Apply` or `Update`")
		}
		if id.APIVersion == "" {
			return Managed{}, errors.New("apiVersion must not be empty")
		}
		switch ft := str(em, "fieldsType"); ft {
		case "FieldsV1":
		case "":
			return Managed{}, fmt.Errorf("missing fieldsType in managed fields entry %d", i)
		default:
			return Managed{}, fmt.Errorf("invalid fieldsType %q in managed fields entry %d", ft, i)
		}
		set, err := FieldsToSet(em["fieldsV1"])
		if err != nil {
			return Managed{}, fmt.Errorf("error decoding versioned set from entry %d: %w", i, err)
		}
		key := id.key()
		m.Fields[key] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(id.APIVersion), id.Operation == OpApply)
		if t := str(em, "time"); t != "" {
			m.Times[key] = t
		} else {
			delete(m.Times, key)
		}
	}
	return m, nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// FieldsToSet reads a FieldsV1 trie in its decoded form (nil is the empty
// set).
func FieldsToSet(fields any) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if fields == nil {
		return set, nil
	}
	raw, ok := fields.(schema.RawJSON)
	if !ok {
		var err error
		if raw, err = schema.AppendAny(nil, fields); err != nil {
			return nil, err
		}
	}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return set, nil
}

// Encode renders m as metadata.managedFields entries, in upstream's order:
// Apply before Update, then by time, manager, version and subresource. An
// empty m is nil: the object then has no managedFields.
func Encode(m Managed) ([]any, error) {
	if len(m.Fields) == 0 {
		return nil, nil
	}
	type row struct {
		id   ident
		secs int64
		out  map[string]any
	}
	rows := make([]row, 0, len(m.Fields))
	for key, vs := range m.Fields {
		id := parseIdent(key)
		id.APIVersion = string(vs.APIVersion())
		id.Operation = OpUpdate
		if vs.Applied() {
			id.Operation = OpApply
		}
		// The trie is kept as encoded: its keyed items are in key value
		// order, which sorting its members as text would change.
		raw, err := vs.Set().ToJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding the fields of %s: %w", id.Manager, err)
		}
		t := m.Times[key]
		r := row{id: id, out: entry(id, raw, t)}
		if t != "" {
			r.secs = unixSeconds(t)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		p, q := rows[i], rows[j]
		switch {
		case p.id.Operation != q.id.Operation:
			return p.id.Operation < q.id.Operation
		case p.secs != q.secs:
			return p.secs < q.secs
		case p.id.Manager != q.id.Manager:
			return p.id.Manager < q.id.Manager
		case p.id.APIVersion != q.id.APIVersion:
			return p.id.APIVersion < q.id.APIVersion
		}
		return p.id.Subresource < q.id.Subresource
	})
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r.out
	}
	return out, nil
}

// unixSeconds reads an RFC 3339 time for ordering; an unreadable one
// sorts first, as a missing one.
func unixSeconds(t string) int64 {
	ts, err := time.Parse(time.RFC3339, t)
	if err != nil {
		return 0
	}
	return ts.Unix()
}

// capUpdaters folds the oldest Update entries into one ancient-changes
// entry per version until at most maxUpdaters remain.
func capUpdaters(m Managed) {
	var updaters []string
	for key, vs := range m.Fields {
		if !vs.Applied() {
			updaters = append(updaters, key)
		}
	}
	if len(updaters) <= maxUpdaters {
		return
	}
	sort.Slice(updaters, func(i, j int) bool {
		si, sj := unixSeconds(m.Times[updaters[i]]), unixSeconds(m.Times[updaters[j]])
		if si != sj {
			return si < sj
		}
		return updaters[i] < updaters[j]
	})
	first := map[string]string{}
	for i, n := 0, len(updaters); i < len(updaters) && n > maxUpdaters; i++ {
		key := updaters[i]
		vs := m.Fields[key]
		version := string(vs.APIVersion())
		bucket := ident{Manager: ancientChanges, Operation: OpUpdate, APIVersion: version}.key()
		f, seen := first[version]
		if !seen {
			first[version] = key
			continue
		}
		if _, ok := m.Fields[bucket]; !ok {
			m.Fields[bucket] = m.Fields[f]
			delete(m.Fields, f)
		}
		m.Fields[bucket] = fieldpath.NewVersionedSet(vs.Set().Union(m.Fields[bucket].Set()), vs.APIVersion(), false)
		delete(m.Fields, key)
		n--
		if t, ok := m.Times[key]; ok {
			m.Times[bucket] = t
		} else {
			delete(m.Times, bucket)
		}
	}
}

// isReset says whether a written managedFields value asks to drop all
// ownership: an empty list, or a list of one empty entry.
func isReset(v any, present bool) bool {
	if !present || v == nil {
		return false
	}
	list, ok := v.([]any)
	if !ok {
		return false
	}
	switch len(list) {
	case 0:
		return true
	case 1:
		e, _ := list[0].(map[string]any)
		if e == nil {
			return false
		}
		for _, x := range e {
			if !isZero(x) {
				return false
			}
		}
		return true
	}
	return false
}

// isZero says whether an entry member holds its type's zero value; an
// empty fieldsV1 object is a value (a non-nil FieldsV1 upstream), so an
// entry holding one is not a reset.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	}
	return false
}

package rest

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync/atomic"

	"platd/bolt"
	"platd/codec"
	"platd/server/registry"
	"platd/server/schema"
)

// Stored objects are compact JSON without kind and apiVersion, metadata
// first, so that a list is the stored bytes joined and a single object is
// the stored bytes behind a kind/apiVersion prefix. (The objects of a type
// with a Converter name their version in their last member; they are never
// served as stored: versioned.go.)

var rvKey = []byte(`"resourceVersion":"`)

// errNoResourceVersion means an object reached the store without the
// metadata.resourceVersion member every stored object carries.
var errNoResourceVersion = errors.New("stored object has no metadata.resourceVersion")

// Stamp writes rev into the first resourceVersion member, which in stored
// bytes is always metadata's: metadata is encoded first and the members
// before resourceVersion (name, generateName, namespace, uid) cannot
// contain an unescaped quote.
func Stamp(value []byte, rev int64) ([]byte, error) {
	start, end, ok := rvSpan(value)
	if !ok {
		return nil, errNoResourceVersion
	}
	out := make([]byte, 0, len(value)+20)
	out = append(out, value[:start]...)
	out = strconv.AppendInt(out, rev, 10)
	out = append(out, value[end:]...)
	return out, nil
}

// rvSpan is the position of the resourceVersion value in stored bytes
// (see Stamp); ok is false when there is none.
func rvSpan(value []byte) (start, end int, ok bool) {
	i := bytes.Index(value, rvKey)
	if i < 0 {
		return 0, 0, false
	}
	start = i + len(rvKey)
	end = bytes.IndexByte(value[start:], '"')
	if end < 0 {
		return 0, 0, false
	}
	return start, start + end, true
}

// equalApartFromRV reports whether two stored states are equal apart from
// their resourceVersion values. It compares in place: a large object is
// not copied twice to tell that an update changed nothing.
func equalApartFromRV(a, b []byte) bool {
	as, ae, aok := rvSpan(a)
	bs, be, bok := rvSpan(b)
	if !aok || !bok {
		return aok == bok && bytes.Equal(a, b)
	}
	return bytes.Equal(a[:as], b[:bs]) && bytes.Equal(a[ae:], b[be:])
}

// storedRevision reads the revision stamped in stored bytes (see Stamp);
// 0 when there is none.
func storedRevision(value []byte) int64 {
	i := bytes.Index(value, rvKey)
	if i < 0 {
		return 0
	}
	start := i + len(rvKey)
	end := bytes.IndexByte(value[start:], '"')
	if end < 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(value[start:start+end]), 10, 64)
	return n
}

// stale reports whether stored bytes of d predate its stored form's
// current schema (Descriptor.CurrentSince).
func stale(d *registry.Descriptor, stored []byte) bool {
	sd := storedForm(d)
	return sd.CurrentSince > 0 && storedRevision(stored) < sd.CurrentSince
}

// storedForm is the descriptor whose schema encodes d's stored bytes.
func storedForm(d *registry.Descriptor) *registry.Descriptor {
	if d.Storage != nil {
		return d.Storage.Descriptor
	}
	return d
}

// encodeStored encodes obj, an object in d's served form, for the store:
// converted to the stored form, without kind/apiVersion (but for the
// version of a type whose objects keep theirs, see storedVersion), with a
// resourceVersion placeholder the committer overwrites. obj is left as it
// was. Only a Converter's conversion fails.
func encodeStored(d *registry.Descriptor, obj Object) ([]byte, error) {
	return encodeStoredForm(d, obj, true)
}

// encodeDryRun is encodeStored for an object that is not stored: no
// resourceVersion, as a dry-run create answers.
func encodeDryRun(d *registry.Descriptor, obj Object) ([]byte, error) {
	return encodeStoredForm(d, obj, false)
}

// encodeHints holds the capacity a stored encoding starts with: the size
// of the last one of its descriptor's slot and an eighth. Objects of a
// type are alike in size, and growing from a small buffer would copy a
// large object's bytes several times over. Types share a slot by the hash
// of their descriptor, so the table stays small whatever is registered; a
// shared slot only makes a hint less apt.
var (
	encodeHints    [64]atomic.Int32
	encodeHintSeed = maphash.MakeSeed()
)

// The capacity a stored encoding starts with is at least minEncodeHint
// and at most maxEncodeHint: a hint from a huge object must not make
// every later one allocate as much.
const minEncodeHint, maxEncodeHint = 512, 64 << 10

func encodeHint(d *registry.Descriptor) *atomic.Int32 {
	return &encodeHints[maphash.Comparable(encodeHintSeed, d)%uint64(len(encodeHints))]
}

func encodeStoredForm(d *registry.Descriptor, obj Object, placeholder bool) ([]byte, error) {
	if cv := converter(d); cv != nil {
		return encodeVersioned(d, cv, obj, placeholder)
	}
	if d.Storage != nil {
		obj = d.Storage.ToStorage(deepCopyObject(obj))
	}
	kind, hasKind := obj["kind"]
	apiVersion, hasAPIVersion := obj["apiVersion"]
	delete(obj, "kind")
	delete(obj, "apiVersion")
	m := meta(obj, true)
	rv, hadRV := m["resourceVersion"]
	if placeholder && !hadRV {
		m["resourceVersion"] = "0"
	}
	hint := encodeHint(d)
	out := schema.Encode(make([]byte, 0, max(hint.Load(), minEncodeHint)), obj, storedForm(d).Schema)
	hint.Store(int32(min(len(out)+len(out)/8, maxEncodeHint)))
	if hadRV {
		m["resourceVersion"] = rv
	} else {
		delete(m, "resourceVersion")
	}
	if hasKind {
		obj["kind"] = kind
	}
	if hasAPIVersion {
		obj["apiVersion"] = apiVersion
	}
	return out, nil
}

// decodeStored decodes stored bytes into d's served form, without kind
// and apiVersion.
func decodeStored(d *registry.Descriptor, value []byte) (Object, error) {
	return decodeStoredWith(schema.DecodeStored, d, value)
}

// decodeCurrent is decodeStored for the state an update replaces: a large
// one's strings share the stored value, which is immutable and alive while
// the update runs, instead of a copy of it. Small states are decoded as by
// decodeStored, so their strings never keep a whole value alive.
func decodeCurrent(d *registry.Descriptor, value []byte) (Object, error) {
	if len(value) >= largeObjectBytes {
		return decodeStoredWith(schema.DecodeStoredAliased, d, value)
	}
	return decodeStored(d, value)
}

// decodeTransient is decodeStored for an object dropped once rendered or
// matched: its strings share one copy of value (schema.DecodeStoredShared).
func decodeTransient(d *registry.Descriptor, value []byte) (Object, error) {
	return decodeStoredWith(schema.DecodeStoredShared, d, value)
}

func decodeStoredWith(decode func([]byte, *schema.Schema) (map[string]any, error), d *registry.Descriptor, value []byte) (Object, error) {
	if cv := converter(d); cv != nil {
		obj, err := decodeVersioned(decode, d, cv, value)
		if err != nil {
			return nil, err
		}
		if obj["apiVersion"] != d.GroupVersion() {
			if obj, err = cv.Convert(conversionContext(), obj, d.GroupVersion()); err != nil {
				return nil, err
			}
		}
		delete(obj, "kind")
		delete(obj, "apiVersion")
		return obj, nil
	}
	sd := storedForm(d)
	obj, err := decode(value, sd.Schema)
	if err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", sd.Kind, err)
	}
	// Decoding pruned what the schema no longer declares; an object older
	// than the schema gets its defaults too, those of the stored form, as
	// upstream defaults an object read from storage with its storage
	// version's schema before converting it.
	if stale(d, value) {
		schema.ApplyDefaults(obj, sd.Schema)
	}
	if d.Storage != nil {
		obj = d.Storage.FromStorage(obj)
		delete(obj, "kind")
		delete(obj, "apiVersion")
	}
	return obj, nil
}

// decodeServed decodes a JSON object of d's served form (a response body).
func decodeServed(d *registry.Descriptor, body []byte) (Object, error) {
	dec, err := schema.Decode(body, d.Schema)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", d.Kind, err)
	}
	return dec.Object, nil
}

// servedJSON returns stored bytes in d's served form: the bytes themselves
// unless d converts. dst is reused for a conversion.
func servedJSON(dst []byte, d *registry.Descriptor, stored []byte) ([]byte, error) {
	if d.Storage == nil && !stale(d, stored) {
		return stored, nil
	}
	if converter(d) != nil {
		if b, ok := servedAsStored(dst, d, stored); ok {
			return b, nil
		}
	}
	obj, err := decodeTransient(d, stored)
	if err != nil {
		return nil, err
	}
	return schema.Encode(dst[:0], obj, d.Schema), nil
}

// typePrefix is `{"kind":"<Kind>","apiVersion":"<gv>",`.
func typePrefix(dst []byte, kind, apiVersion string) []byte {
	dst = append(dst, `{"kind":`...)
	dst = codec.AppendJSONString(dst, kind)
	dst = append(dst, `,"apiVersion":`...)
	dst = codec.AppendJSONString(dst, apiVersion)
	return append(dst, ',')
}

// objectJSON is the full JSON of a stored object: kind and apiVersion
// first, as every single-object response and watch event carries them.
func objectJSON(dst []byte, d *registry.Descriptor, stored []byte) []byte {
	dst = typePrefix(dst, d.Kind, d.GroupVersion())
	if len(stored) < 2 {
		return append(dst[:len(dst)-1], '}')
	}
	return append(dst, stored[1:]...)
}

// storedKV is the unit list and watch code passes around.
type storedKV = bolt.KV

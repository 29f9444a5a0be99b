package rest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"platd/codec"
	"platd/server/registry"
	"platd/server/schema"
)

// Objects of a type with a Converter (registry.Storage.Converter) keep the
// version they were written in. Their stored bytes name it in their last
// member, after everything else:
//
//	{"metadata":{...},...,"apiVersion":"<group>/<version>"}
//
// so that it is found, and cut when the bytes are served, by looking at
// their end only. Encoded objects never have a top-level apiVersion of
// their own (it is dropped before encoding), and a string cannot hold an
// unescaped quote, so bytes ending in `"apiVersion":"<gv>"}` name their
// version there and nowhere else. Bytes without it were stored before
// their type named versions: they are of the version
// registry.Storage.Unversioned names.

// versionKey is the version member's key and colon.
var versionKey = []byte(`"apiVersion":"`)

// converter is d's Converter, nil when its objects convert in place or
// not at all.
func converter(d *registry.Descriptor) registry.Converter {
	if d.Storage == nil {
		return nil
	}
	return d.Storage.Converter
}

// conversionContext is the context conversions run in: as upstream's, a
// conversion is not cut short by the end of the request it serves; the
// converter bounds its own calls.
func conversionContext() context.Context { return context.Background() }

// storedVersion is the apiVersion stored bytes name, "" when they name
// none.
func storedVersion(value []byte) string {
	_, _, gv := versionMember(value)
	return string(gv)
}

// versionMember finds where stored bytes name their version:
// value[start:end] is the member with its leading comma, if any (the
// bytes without it are value[:start] and value[end:] joined), gv its
// value. gv is nil when they name none.
func versionMember(value []byte) (start, end int, gv []byte) {
	n := len(value)
	if n < len(versionKey)+4 || value[n-1] != '}' || value[n-2] != '"' {
		return 0, 0, nil
	}
	q := bytes.LastIndexByte(value[:n-2], '"')
	if q < len(versionKey) || !bytes.HasSuffix(value[:q+1], versionKey) {
		return 0, 0, nil
	}
	gv = value[q+1 : n-2]
	if bytes.IndexByte(gv, '\\') >= 0 {
		return 0, 0, nil
	}
	key := q + 1 - len(versionKey)
	switch value[key-1] {
	case ',':
		return key - 1, n - 1, gv
	case '{':
		// The only member.
		return key, n - 1, gv
	}
	return 0, 0, nil
}

// servedAsStored returns stored bytes of a type with a Converter that are
// current and in d's version without their version member: d's served
// form, copied into dst but not decoded. ok is false for any other bytes.
func servedAsStored(dst []byte, d *registry.Descriptor, stored []byte) (_ []byte, ok bool) {
	start, end, ok := servedSpan(d, stored)
	if !ok {
		return nil, false
	}
	// Copied even when there is nothing to cut: dst is the caller's to
	// reuse, the stored bytes never are.
	dst = append(dst[:0], stored[:start]...)
	return append(dst, stored[end:]...), true
}

// servedSpan is where the version member of stored bytes of a type with
// a Converter is (start == end when they name none), when the bytes are
// current and in d's version: stored[:start] and stored[end:] joined are
// d's served form. ok is false for any other bytes.
func servedSpan(d *registry.Descriptor, stored []byte) (start, end int, ok bool) {
	if stale(d, stored) {
		return 0, 0, false
	}
	start, end, gv := versionMember(stored)
	if gv == nil {
		// Stored before the type named versions.
		return 0, 0, unversionedIn(d) == d.GroupVersion()
	}
	return start, end, string(gv) == d.GroupVersion()
}

// storedIn is the apiVersion the stored bytes of d's type are in.
func storedIn(d *registry.Descriptor, value []byte) string {
	if gv := storedVersion(value); gv != "" {
		return gv
	}
	return unversionedIn(d)
}

// isStoredIn reports whether the stored bytes of d's type are in gv: as
// storedIn(d, value) == gv, without a copy of the version.
func isStoredIn(d *registry.Descriptor, value []byte, gv string) bool {
	if _, _, named := versionMember(value); named != nil {
		return string(named) == gv
	}
	return unversionedIn(d) == gv
}

// unversionedIn is the apiVersion of the stored bytes of d's type that
// name none.
func unversionedIn(d *registry.Descriptor) string {
	if d.Storage != nil && d.Storage.Unversioned != "" {
		return d.Group + "/" + d.Storage.Unversioned
	}
	return storedForm(d).GroupVersion()
}

// decodeVersioned decodes stored bytes of d's type in the version they
// were written in, with that version's schema (and its defaults, when
// they predate the type's current definition). The object carries its
// apiVersion and kind.
func decodeVersioned(decode func([]byte, *schema.Schema) (map[string]any, error), d *registry.Descriptor, cv registry.Converter, value []byte) (Object, error) {
	kind := storedForm(d).Kind
	gv := storedIn(d, value)
	var s *schema.Schema
	if version, ok := strings.CutPrefix(gv, d.Group+"/"); ok {
		s = cv.Schema(version)
	}
	if s == nil {
		return nil, fmt.Errorf("decoding stored %s: %s is not a version of its type", kind, gv)
	}
	obj, err := decode(value, s)
	if err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", kind, err)
	}
	if stale(d, value) {
		schema.ApplyDefaults(obj, s)
	}
	obj["apiVersion"], obj["kind"] = gv, kind
	return obj, nil
}

// encodeVersioned is encodeStoredForm for a type with a Converter: obj,
// of d's version, converted to the stored form's version and encoded
// with it.
func encodeVersioned(d *registry.Descriptor, cv registry.Converter, obj Object, placeholder bool) ([]byte, error) {
	st := storedForm(d)
	in := deepCopyObject(obj)
	in["apiVersion"], in["kind"] = d.GroupVersion(), d.Kind
	out, err := cv.Convert(conversionContext(), in, st.GroupVersion())
	if err != nil {
		return nil, err
	}
	return encodeInVersion(st.Schema, out, st.GroupVersion(), placeholder), nil
}

// encodeInVersion encodes obj, of version gv, with s and names gv in its
// last member. It takes obj over.
func encodeInVersion(s *schema.Schema, obj Object, gv string, placeholder bool) []byte {
	delete(obj, "kind")
	delete(obj, "apiVersion")
	m := meta(obj, true)
	if _, ok := m["resourceVersion"]; placeholder && !ok {
		m["resourceVersion"] = "0"
	}
	b := schema.Encode(nil, obj, s)
	if len(b) < 2 {
		return b
	}
	b = b[:len(b)-1]
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, versionKey[:len(versionKey)-1]...)
	b = codec.AppendJSONString(b, gv)
	return append(b, '}')
}

// convertItems returns the items of a list of d's objects with those
// stored in another version converted to d's, all in one exchange with
// d's Converter; items themselves when none is (or d has none). Each
// converted value is stored bytes of d's version.
func convertItems(d *registry.Descriptor, items []storedKV) ([]storedKV, error) {
	cv := converter(d)
	if cv == nil {
		return items, nil
	}
	gv := d.GroupVersion()
	var at []int
	var objs []Object
	for i := range items {
		if isStoredIn(d, items[i].Value, gv) {
			continue
		}
		obj, err := decodeVersioned(schema.DecodeStoredShared, d, cv, items[i].Value)
		if err != nil {
			return nil, err
		}
		at = append(at, i)
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return items, nil
	}
	out, err := cv.ConvertList(conversionContext(), objs, gv)
	if err != nil {
		return nil, err
	}
	converted := slices.Clone(items)
	for j, i := range at {
		converted[i].Value = encodeInVersion(d.Schema, out[j], gv, false)
	}
	return converted, nil
}

// inVersion returns stored bytes of d's type in d's version: value itself
// when it is (or d has no Converter), else value converted by d's
// Converter and encoded as stored, version member and all.
func inVersion(d *registry.Descriptor, value []byte) ([]byte, error) {
	cv := converter(d)
	gv := d.GroupVersion()
	if cv == nil || isStoredIn(d, value, gv) {
		return value, nil
	}
	obj, err := decodeVersioned(schema.DecodeStoredShared, d, cv, value)
	if err != nil {
		return nil, err
	}
	if obj, err = cv.Convert(conversionContext(), obj, gv); err != nil {
		return nil, err
	}
	return encodeInVersion(d.Schema, obj, gv, false), nil
}

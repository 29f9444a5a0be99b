// Package fieldmanager records who owns which fields of an object
// (metadata.managedFields) and merges server-side apply configurations,
// with structured-merge-diff doing the set arithmetic. Its typed schema is
// derived from the schema catalog, so every type, built in or custom,
// gets the list and map semantics its schema declares.
package fieldmanager

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"platd/server/schema"
)

// The types every converted schema carries for values whose shape is
// known only at run time: deduced keeps maps granular (preserve unknown
// fields), untyped makes whatever sits below it atomic.
const (
	deducedName = "__untyped_deduced_"
	untypedName = "__untyped_atomic_"
)

var (
	deducedRef = smdschema.TypeRef{NamedType: ptr(deducedName)}
	untypedRef = smdschema.TypeRef{NamedType: ptr(untypedName)}
)

func ptr[T any](v T) *T { return &v }

func runtimeTypes() []smdschema.TypeDef {
	return []smdschema.TypeDef{
		{Name: deducedName, Atom: smdschema.Atom{
			Scalar: ptr(smdschema.Untyped),
			List:   &smdschema.List{ElementType: untypedRef, ElementRelationship: smdschema.Atomic},
			Map:    &smdschema.Map{ElementType: deducedRef, ElementRelationship: smdschema.Separable},
		}},
		{Name: untypedName, Atom: smdschema.Atom{
			Scalar: ptr(smdschema.Untyped),
			List:   &smdschema.List{ElementType: untypedRef, ElementRelationship: smdschema.Atomic},
			Map:    &smdschema.Map{ElementType: untypedRef, ElementRelationship: smdschema.Atomic},
		}},
	}
}

// Type is one resource type's schema in structured-merge-diff's terms.
type Type struct {
	schema *smdschema.Schema
	root   smdschema.TypeRef
	// atoms holds what schema.Resolve returns for each named reference
	// the conversion made, by the reference's name pointer: the create
	// walk resolves a reference per node, and looking the name up hashes
	// it whole.
	atoms map[*string]smdschema.Atom
}

// resolve is t.schema.Resolve(ref), from atoms when ref is one of them.
func (t *Type) resolve(ref smdschema.TypeRef) (smdschema.Atom, bool) {
	if ref.NamedType != nil && ref.ElementRelationship == nil {
		if a, ok := t.atoms[ref.NamedType]; ok {
			return a, true
		}
	}
	return t.schema.Resolve(ref)
}

// typeCache holds the converted Type of each catalog schema: conversion
// walks the whole reachable graph, so it is done once per root, on first
// use rather than at start.
var typeCache sync.Map // *schema.Schema -> *Type

// Forget drops the converted form of s: a schema that is no longer served
// (a custom resource's replaced version) must not stay reachable.
func Forget(s *schema.Schema) { typeCache.Delete(s) }

// TypeOf returns the structured-merge-diff form of s.
func TypeOf(s *schema.Schema) *Type {
	if t, ok := typeCache.Load(s); ok {
		return t.(*Type)
	}
	c := &converter{names: map[*schema.Schema]string{}}
	root := c.ref(s, nil)
	c.defs = append(c.defs, runtimeTypes()...)
	t := &Type{schema: &smdschema.Schema{Types: c.defs}, root: root}
	t.atoms = make(map[*string]smdschema.Atom, len(c.named)+2)
	for _, name := range append(c.named, deducedRef.NamedType, untypedRef.NamedType) {
		if a, ok := t.schema.Resolve(smdschema.TypeRef{NamedType: name}); ok {
			t.atoms[name] = a
		}
	}
	actual, _ := typeCache.LoadOrStore(s, t)
	return actual.(*Type)
}

// Typed checks obj against the type and wraps it for merging and
// comparison. obj is not copied: callers must not change it while the
// result is in use. Objects already written or being written by a
// non-apply request pass typed.AllowDuplicates: validation may accept a
// list that repeats a key (a pod's env), and ownership must still be
// recorded for it.
func (t *Type) Typed(obj map[string]any, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return typed.AsTyped(value.NewValueInterface(obj), t.schema, t.root, opts...)
}

// trusted wraps an object the server decoded with this type's schema
// without checking it first: comparing and merging check what they walk,
// so a mismatch still fails there.
func (t *Type) trusted(obj map[string]any) *typed.TypedValue {
	return typed.AsTypedUnvalidated(value.NewValueInterface(obj), t.schema, t.root)
}

// converter turns a schema graph into named structured-merge-diff types.
type converter struct {
	names map[*schema.Schema]string
	defs  []smdschema.TypeDef
	anon  int
	// named are the name pointers of the references made.
	named []*string
}

// ref returns a reference to s's type, defining it on first sight. f is
// the field holding s, whose patch strategy decides an undeclared list's
// semantics.
func (c *converter) ref(s *schema.Schema, f *schema.Field) smdschema.TypeRef {
	if s == nil {
		return deducedRef
	}
	switch s.Type {
	case schema.Any:
		return deducedRef
	case schema.String, schema.Time, schema.MicroTime, schema.Bytes:
		return scalarRef(smdschema.String)
	case schema.Integer, schema.Number:
		return scalarRef(smdschema.Numeric)
	case schema.Boolean:
		return scalarRef(smdschema.Boolean)
	case schema.IntOrString, schema.Quantity:
		return scalarRef(smdschema.Untyped)
	case schema.Array:
		return smdschema.TypeRef{Inlined: smdschema.Atom{List: c.list(s, f)}}
	}
	if name, ok := c.names[s]; ok {
		return c.namedRef(name)
	}
	name := s.Name
	if name == "" {
		c.anon++
		name = "__anonymous_" + strconv.Itoa(c.anon)
	}
	c.names[s] = name
	i := len(c.defs)
	c.defs = append(c.defs, smdschema.TypeDef{Name: name})
	m := c.mapAtom(s)
	c.defs[i].Atom = smdschema.Atom{Map: m}
	return c.namedRef(name)
}

// namedRef returns a new reference to the type named name.
func (c *converter) namedRef(name string) smdschema.TypeRef {
	p := ptr(name)
	c.named = append(c.named, p)
	return smdschema.TypeRef{NamedType: p}
}

func scalarRef(k smdschema.Scalar) smdschema.TypeRef {
	return smdschema.TypeRef{Inlined: smdschema.Atom{Scalar: ptr(k)}}
}

// mapAtom converts an Object (fixed fields, perhaps also unknown ones) or
// a Map (one value schema).
func (c *converter) mapAtom(s *schema.Schema) *smdschema.Map {
	m := &smdschema.Map{}
	if s.MapType == "atomic" {
		m.ElementRelationship = smdschema.Atomic
	}
	if s.Type == schema.Map {
		m.ElementType = c.ref(s.Elem, nil)
		return m
	}
	for _, f := range s.Fields {
		if f.Name == "" {
			continue // an inline field's members are listed in s itself
		}
		sf := smdschema.StructField{Name: f.Name, Type: c.ref(f.Schema, f)}
		if len(f.Default) > 0 {
			// A default lets an applied list item omit a key field that
			// has one (a port's protocol).
			sf.Default, _ = schema.DecodeAny(f.Default)
		}
		m.Fields = append(m.Fields, sf)
	}
	if s.PreserveUnknown {
		m.ElementType = deducedRef
	}
	return m
}

// list converts an array: its declared list type, else what its field's
// patch strategy says (a merge list is keyed by its merge key), else
// atomic.
func (c *converter) list(s *schema.Schema, f *schema.Field) *smdschema.List {
	l := &smdschema.List{ElementType: c.ref(s.Elem, nil), ElementRelationship: smdschema.Atomic}
	switch s.ListType {
	case "set":
		l.ElementRelationship = smdschema.Associative
	case "map":
		l.ElementRelationship = smdschema.Associative
		l.Keys = s.ListMapKeys
	case "":
		if f != nil && hasStrategy(f.PatchStrategy, "merge") {
			l.ElementRelationship = smdschema.Associative
			if f.PatchMergeKey != "" {
				l.Keys = []string{f.PatchMergeKey}
			}
		}
	}
	return l
}

func hasStrategy(strategies, want string) bool {
	for _, p := range strings.Split(strategies, ",") {
		if p == want {
			return true
		}
	}
	return false
}

// String names the type for error messages.
func (t *Type) String() string {
	if t.root.NamedType != nil {
		return *t.root.NamedType
	}
	return fmt.Sprint(t.root.Inlined)
}

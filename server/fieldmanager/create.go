package fieldmanager

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// A create's manager owns every field the new object sets that its
// type's zero object does not already hold: the set a comparison of the
// zero object with the new one calls added or modified. The general
// comparison builds three field sets over both objects and then encodes
// the result; a create needs one walk of the new object, writing the
// FieldsV1 trie as it goes. The walk follows the comparison's rules
// exactly (which paths are leaves, when a map or list is owned itself,
// duplicate list keys) and gives up on anything it does not expect, so
// that the general path decides those; TestCreatedFieldsEqualCompare
// holds the two to the same bytes.

// Fields the server keeps, which nobody owns (stripSet and the create
// walk both read them here).
var (
	strippedTop  = []string{"apiVersion", "kind", "metadata"}
	strippedMeta = []string{"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion"}
)

// jsonConfig is the JSON configuration structured-merge-diff writes
// FieldsV1 with; the walk escapes through it whatever is not plain.
var jsonConfig = jsoniter.ConfigCompatibleWithStandardLibrary

// createWalker writes the FieldsV1 trie of one create.
type createWalker struct {
	typ   *Type
	reset []string
	out   *jsoniter.Stream
	keys  []string
	items []listItem
	// plain and keyVals hold the items of the lists plainListNode walks.
	plain   []plainItem
	keyVals []any
	failed  bool
}

// listItem is one element of an associative list with its path element.
type listItem struct {
	pe fieldpath.PathElement
	v  any
}

// maxPooledTrie bounds the buffer a pooled walker keeps: a huge object's
// trie should not stay in memory after its create.
const maxPooledTrie = 64 << 10

var walkers = sync.Pool{New: func() any { return &createWalker{out: jsonConfig.BorrowStream(nil)} }}

// createdFields returns the FieldsV1 trie a create of obj records for its
// manager (nil when it owns nothing); ok is false when obj holds
// something the walk leaves to the general comparison.
func (r *Resource) createdFields(obj map[string]any) (raw []byte, ok bool) {
	w := walkers.Get().(*createWalker)
	defer func() {
		buf := w.out.Buffer()[:0]
		if cap(buf) > maxPooledTrie {
			buf = nil
		}
		w.out.SetBuffer(buf)
		w.keys, w.items, w.failed = w.keys[:0], w.items[:0], false
		// The values are the request's: a pooled walker must not keep
		// them reachable.
		clear(w.plain[:cap(w.plain)])
		clear(w.keyVals[:cap(w.keyVals)])
		w.plain, w.keyVals = w.plain[:0], w.keyVals[:0]
		walkers.Put(w)
	}()
	w.typ, w.reset = r.typ, r.o.Reset
	w.out.SetBuffer(w.out.Buffer()[:0])
	wrote := w.node(r.zero, true, obj, r.typ.root, levelTop, false)
	if w.failed {
		return nil, false
	}
	if !wrote {
		return nil, true
	}
	return slices.Clone(w.out.Buffer()), true
}

// level tells where a node sits, for the fields nobody owns.
type level int

const (
	levelOther level = iota
	levelTop
	levelMeta
)

// node writes the value of one path's trie, its key already written, and
// says whether it wrote one: a path that owns nothing writes nothing. lz
// is the zero object's value at the path (present says whether it has
// one), v the new object's; a kept path (see stripSet) is not owned
// itself, only what is below it.
func (w *createWalker) node(lz any, present bool, v any, ref smdschema.TypeRef, lvl level, kept bool) bool {
	if w.failed {
		return false
	}
	atom, ok := w.typ.resolve(ref)
	if !ok {
		return w.fail()
	}
	// A path is owned itself when the zero object lacks it, or, for a
	// leaf, holds another value there.
	added := !present && !kept
	switch x := v.(type) {
	case nil:
		if atom.Map == nil && atom.List == nil && atom.Scalar == nil {
			return w.fail()
		}
		if present && nonEmptyCollection(lz) {
			// What the zero object holds below is removed, not owned.
			return false
		}
		return w.leaf(added || present && lz != nil && !kept)
	case map[string]any:
		if atom.Map == nil {
			return w.fail()
		}
		lm, ok := lz.(map[string]any)
		if lz != nil && !ok {
			return w.fail()
		}
		if atom.Map.ElementRelationship == smdschema.Atomic || len(lm) == 0 && len(x) == 0 {
			return w.leaf(added || present && !kept && !equal(lz, v))
		}
		return w.mapNode(atom.Map, lm, x, added, lvl)
	case []any:
		if atom.List == nil {
			return w.fail()
		}
		if lz != nil {
			if ll, ok := lz.([]any); !ok || len(ll) > 0 {
				return w.fail()
			}
		}
		if atom.List.ElementRelationship == smdschema.Atomic || len(x) == 0 {
			return w.leaf(added || present && !kept && !equal(lz, v))
		}
		if atom.List.ElementRelationship != smdschema.Associative {
			return w.fail()
		}
		return w.listNode(atom.List, x, added)
	case string, bool, int64, float64:
		if atom.Scalar == nil || !scalarFits(*atom.Scalar, x) {
			return w.fail()
		}
		return w.leaf(added || present && !kept && !equal(lz, v))
	}
	return w.fail()
}

func (w *createWalker) fail() bool {
	w.failed = true
	return false
}

// nonEmptyCollection reports whether v is a map or a list holding
// something.
func nonEmptyCollection(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return false
}

// equal is the comparison's value equality, for the few paths the zero
// object holds.
func equal(a, b any) bool {
	return value.Equals(value.NewValueInterface(a), value.NewValueInterface(b))
}

func scalarFits(k smdschema.Scalar, v any) bool {
	switch v.(type) {
	case string:
		return k == smdschema.String || k == smdschema.Untyped
	case bool:
		return k == smdschema.Boolean || k == smdschema.Untyped
	default:
		return k == smdschema.Numeric || k == smdschema.Untyped
	}
}

// leaf writes a path owned as a whole, or nothing.
func (w *createWalker) leaf(owned bool) bool {
	if owned {
		w.out.WriteEmptyObject()
	}
	return owned
}

// open starts a node whose children follow; self says whether the path is
// itself owned, which its trie records as "." before any child.
type openNode struct {
	start    int
	self     bool
	children int
}

func (w *createWalker) open(self bool) openNode {
	n := openNode{start: len(w.out.Buffer()), self: self}
	w.out.WriteObjectStart()
	return n
}

// child writes the separator before a child's key.
func (w *createWalker) child(n *openNode) {
	if n.children == 0 && n.self {
		w.out.WriteObjectField(".")
		w.out.WriteEmptyObject()
		w.out.WriteMore()
	} else if n.children > 0 {
		w.out.WriteMore()
	}
}

// closeNode ends n and says whether it wrote anything; a node with no
// owned child that is not owned itself is taken back.
func (w *createWalker) closeNode(n openNode) bool {
	if n.children == 0 {
		if !n.self {
			w.out.SetBuffer(w.out.Buffer()[:n.start])
			return false
		}
		w.out.SetBuffer(w.out.Buffer()[:n.start])
		w.out.WriteEmptyObject()
		return true
	}
	w.out.WriteObjectEnd()
	return true
}

// mapNode writes a granular map's children in field name order.
func (w *createWalker) mapNode(t *smdschema.Map, lm, m map[string]any, self bool, lvl level) bool {
	n := w.open(self)
	base := len(w.keys)
	for k := range m {
		w.keys = append(w.keys, k)
	}
	keys := w.keys[base:]
	slices.Sort(keys)
	for _, k := range keys {
		// A field the write does not own (status, through its
		// subresource) is still walked: what would fail the comparison
		// there fails the walk too.
		reset := lvl == levelTop && slices.Contains(w.reset, k)
		ref := t.ElementType
		if sf, ok := t.FindField(k); ok {
			ref = sf.Type
		}
		childLvl, kept := levelOther, false
		switch lvl {
		case levelTop:
			kept = slices.Contains(strippedTop, k)
			if k == "metadata" {
				childLvl = levelMeta
			}
		case levelMeta:
			kept = slices.Contains(strippedMeta, k)
		}
		lz, present := lm[k]
		mark := len(w.out.Buffer())
		w.child(&n)
		w.fieldKey(k)
		wrote := w.node(lz, present, m[k], ref, childLvl, kept)
		if w.failed {
			return false
		}
		if wrote && !reset {
			n.children++
		} else {
			w.out.SetBuffer(w.out.Buffer()[:mark])
		}
	}
	w.keys = w.keys[:base]
	return w.closeNode(n)
}

// fieldKey writes a field's key as structured-merge-diff serializes it.
func (w *createWalker) fieldKey(name string) {
	if plain(name) {
		buf := append(w.out.Buffer(), `"f:`...)
		buf = append(buf, name...)
		buf = append(buf, `":`...)
		w.out.SetBuffer(buf)
		return
	}
	w.out.WriteObjectField("f:" + name)
}

// plain says whether s is written in JSON as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// listNode writes an associative list's items in path element order. An
// element repeated is owned as a whole, without its fields.
func (w *createWalker) listNode(t *smdschema.List, list []any, self bool) bool {
	if wrote, ok := w.plainListNode(t, list, self); ok {
		return wrote
	}
	base := len(w.items)
	for _, e := range list {
		pe, ok := w.itemElement(t, e)
		if !ok {
			return w.fail()
		}
		w.items = append(w.items, listItem{pe: pe, v: e})
	}
	items := w.items[base:]
	slices.SortStableFunc(items, func(a, b listItem) int { return a.pe.Compare(b.pe) })
	n := w.open(self)
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].pe.Compare(items[i].pe) == 0 {
			if !items[j].pe.Equals(items[i].pe) {
				return w.fail()
			}
			j++
		}
		mark := len(w.out.Buffer())
		w.child(&n)
		if !w.itemKey(items[i].pe) {
			return w.fail()
		}
		var wrote bool
		if j-i > 1 {
			wrote = w.leaf(true)
		} else {
			wrote = w.node(nil, false, items[i].v, t.ElementType, levelOther, false)
		}
		if w.failed {
			return false
		}
		if wrote {
			n.children++
		} else {
			w.out.SetBuffer(w.out.Buffer()[:mark])
		}
		i = j
	}
	w.items = w.items[:base]
	return w.closeNode(n)
}

// plainItem is an item of a list plainListNode walks: its key values are
// keyVals[off:off+len(keys)], in key name order.
type plainItem struct {
	off int
	v   any
}

// plainListNode is listNode for the usual keyed list: every item a map
// that sets every key field, each to a plain string (see appendKeyValue)
// or an integer, the same kind for a key in every item, the keys named
// plainly and in name order. Its path elements then order, compare and
// print as their key values do, so they are not built. ok is false, with
// nothing written, for any other list: listNode walks it.
func (w *createWalker) plainListNode(t *smdschema.List, list []any, self bool) (wrote, ok bool) {
	keys := t.Keys
	if len(keys) == 0 || !slices.IsSorted(keys) {
		return false, false
	}
	for _, k := range keys {
		if !plain(k) {
			return false, false
		}
	}
	if a, ok := w.typ.resolve(t.ElementType); !ok || a.Map == nil {
		return false, false
	}
	base, valsBase := len(w.plain), len(w.keyVals)
	undo := func() (bool, bool) {
		w.plain, w.keyVals = w.plain[:base], w.keyVals[:valsBase]
		return false, false
	}
	for i, e := range list {
		m, isMap := e.(map[string]any)
		if !isMap {
			return undo()
		}
		w.plain = append(w.plain, plainItem{off: len(w.keyVals), v: e})
		for j, k := range keys {
			v, present := m[k]
			switch x := v.(type) {
			case string:
				if !plain(x) || strings.ContainsAny(x, "<>&") {
					return undo()
				}
			case int64:
			default:
				return undo()
			}
			if !present || i > 0 && !sameKind(v, w.keyVals[valsBase+j]) {
				return undo()
			}
			w.keyVals = append(w.keyVals, v)
		}
	}
	items, vals := w.plain[base:], w.keyVals
	compare := func(a, b plainItem) int {
		for j := range keys {
			var c int
			switch x := vals[a.off+j].(type) {
			case string:
				c = strings.Compare(x, vals[b.off+j].(string))
			case int64:
				c = cmp.Compare(x, vals[b.off+j].(int64))
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	slices.SortStableFunc(items, compare)
	n := w.open(self)
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && compare(items[j], items[i]) == 0 {
			j++
		}
		mark := len(w.out.Buffer())
		w.child(&n)
		buf := append(w.out.Buffer(), `"k:{`...)
		for k, name := range keys {
			if k > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `\"`...)
			buf = append(buf, name...)
			buf = append(buf, `\":`...)
			buf, _ = appendPlainValue(buf, vals[items[i].off+k])
		}
		w.out.SetBuffer(append(buf, `}":`...))
		if j-i > 1 {
			wrote = w.leaf(true)
		} else {
			wrote = w.node(nil, false, items[i].v, t.ElementType, levelOther, false)
		}
		if w.failed {
			return false, true
		}
		if wrote {
			n.children++
		} else {
			w.out.SetBuffer(w.out.Buffer()[:mark])
		}
		i = j
	}
	w.plain, w.keyVals = w.plain[:base], w.keyVals[:valsBase]
	return w.closeNode(n), true
}

// sameKind reports whether a and b, each a string or an int64, are of
// the same type.
func sameKind(a, b any) bool {
	_, as := a.(string)
	_, bs := b.(string)
	return as == bs
}

// itemKey writes a list item's key as structured-merge-diff serializes
// it: the path element's text as a JSON string. Keys of plain strings and
// integers, nearly all of them, are written here; the rest by the
// library.
func (w *createWalker) itemKey(pe fieldpath.PathElement) bool {
	buf := w.out.Buffer()
	switch {
	case pe.Key != nil:
		buf = append(buf, `"k:{`...)
		for i, f := range *pe.Key {
			if i > 0 {
				buf = append(buf, ',')
			}
			if !plain(f.Name) {
				return w.serializedKey(pe)
			}
			buf = append(buf, `\"`...)
			buf = append(buf, f.Name...)
			buf = append(buf, `\":`...)
			var ok bool
			if buf, ok = appendKeyValue(buf, f.Value); !ok {
				return w.serializedKey(pe)
			}
		}
		buf = append(buf, `}":`...)
	case pe.Value != nil:
		buf = append(buf, `"v:`...)
		var ok bool
		if buf, ok = appendKeyValue(buf, *pe.Value); !ok {
			return w.serializedKey(pe)
		}
		buf = append(buf, `":`...)
	default:
		return w.serializedKey(pe)
	}
	w.out.SetBuffer(buf)
	return true
}

// appendKeyValue appends a key value's JSON as it reads inside a JSON
// string, when it is an integer or a string with nothing to escape.
func appendKeyValue(buf []byte, v value.Value) ([]byte, bool) {
	return appendPlainValue(buf, v.Unstructured())
}

// appendPlainValue is appendKeyValue of a decoded value.
func appendPlainValue(buf []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		if !plain(x) || strings.ContainsAny(x, "<>&") {
			return buf, false
		}
		buf = append(buf, `\"`...)
		buf = append(buf, x...)
		return append(buf, `\"`...), true
	case int64:
		return strconv.AppendInt(buf, x, 10), true
	}
	return buf, false
}

// serializedKey writes pe's key through the library's serialization.
func (w *createWalker) serializedKey(pe fieldpath.PathElement) bool {
	key, err := fieldpath.SerializePathElement(pe)
	if err != nil {
		return false
	}
	w.out.WriteObjectField(key)
	return true
}

// itemElement is the path element of a list item: its key fields (a
// missing one takes its default), or its value in a set.
func (w *createWalker) itemElement(t *smdschema.List, e any) (fieldpath.PathElement, bool) {
	if len(t.Keys) == 0 {
		switch e.(type) {
		case string, bool, int64, float64:
			v := value.NewValueInterface(e)
			return fieldpath.PathElement{Value: &v}, true
		}
		return fieldpath.PathElement{}, false
	}
	m, ok := e.(map[string]any)
	if !ok {
		return fieldpath.PathElement{}, false
	}
	var elem *smdschema.Map
	if a, ok := w.typ.resolve(t.ElementType); ok {
		elem = a.Map
	}
	if elem == nil {
		return fieldpath.PathElement{}, false
	}
	keys := make(value.FieldList, 0, len(t.Keys))
	for _, k := range t.Keys {
		if v, ok := m[k]; ok {
			keys = append(keys, value.Field{Name: k, Value: value.NewValueInterface(v)})
		} else if f, ok := elem.FindField(k); ok && f.Default != nil {
			keys = append(keys, value.Field{Name: k, Value: value.NewValueInterface(f.Default)})
		}
	}
	if len(keys) == 0 {
		return fieldpath.PathElement{}, false
	}
	keys.Sort()
	return fieldpath.PathElement{Key: &keys}, true
}

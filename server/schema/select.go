package schema

import (
	"slices"
	"unsafe"
)

// A Selection names the parts of an object a reader looks at, so that
// DecodeStoredSelected builds only those: a printer's columns read a few
// members of an object whose bulk (data, a pod's spec, managedFields) they
// never look at. The zero Selection selects nothing; build one with Add
// and Count before use, and do not change it after: it is then safe for
// concurrent use.
type Selection struct {
	// members maps a selected member (or map key) to what of it is read.
	members map[string]*Selection
	// whole reads the value entirely.
	whole bool
	// count reads only how many members or elements the value has.
	count bool
}

// Add selects the whole value at path (member names, from the object's
// top). An empty path selects everything.
func (s *Selection) Add(path ...string) *Selection {
	n := s.at(path)
	n.whole, n.count, n.members = true, false, nil
	return s
}

// Count selects only the size of the value at path: a map's or an
// array's decoded value then has its members or elements, with nil
// values, so that its length is what the whole value's would be.
func (s *Selection) Count(path ...string) *Selection {
	n := s.at(path)
	switch {
	case n.whole:
	case n.members != nil:
		// Some members are read too: only the whole value has them all.
		n.whole, n.members = true, nil
	default:
		n.count = true
	}
	return s
}

// Merge adds what o selects to s.
func (s *Selection) Merge(o *Selection) *Selection {
	switch {
	case o.whole:
		s.Add()
	case s.whole:
	case o.count:
		s.Count()
	default:
		for k, m := range o.members {
			s.at([]string{k}).Merge(m)
		}
	}
	return s
}

// at returns the node of path, creating it; a node under a whole one is
// not recorded.
func (s *Selection) at(path []string) *Selection {
	n := s
	for _, p := range path {
		if n.whole {
			return &Selection{}
		}
		if n.count {
			// A counted value read further is decoded as a selection of it;
			// its size stays right only if it is read whole.
			n.count, n.whole = false, true
			return &Selection{}
		}
		if n.members == nil {
			n.members = map[string]*Selection{}
		}
		c := n.members[p]
		if c == nil {
			c = &Selection{}
			n.members[p] = c
		}
		n = c
	}
	return n
}

// DecodeStoredSelected is DecodeStoredAliased building only what sel
// selects: an unselected member is skipped, not decoded. Every selected
// path holds what DecodeStored would put there, so a reader of those paths
// cannot tell the difference. Skipped values are only checked for JSON
// syntax, not against the schema. On any error it decodes everything as
// DecodeStored does. Strings share data, which must never be written
// again.
func DecodeStoredSelected(data []byte, s *Schema, sel *Selection) (map[string]any, error) {
	if len(data) == 0 || sel == nil || sel.whole {
		return DecodeStoredAliased(data, s)
	}
	d := &decoder{scanner: scanner{data: data, text: unsafe.String(&data[0], len(data)), maxDepth: anyMaxDepth}, trusted: true}
	v, err := d.selected(s, sel, 0, structName(s))
	if err == nil {
		err = d.end()
	}
	if err != nil || d.typeErr != nil {
		return DecodeStored(data, s)
	}
	obj, _ := v.(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, nil
}

// selected is value for the part of a value sel selects.
func (d *decoder) selected(s *Schema, sel *Selection, depth int, owner string) (any, error) {
	if sel.whole || s == nil {
		return d.value(s, depth, owner)
	}
	c, err := d.expectValue()
	if err != nil {
		return nil, err
	}
	switch {
	case c == 'n':
	case s.Type == Object && c == '{' && !sel.count:
		d.pos++
		return d.objectSelected(s, sel, depth, owner)
	case s.Type == Map && c == '{':
		d.pos++
		return d.mapSelected(s, sel, depth, owner)
	case s.Type == Array && c == '[' && sel.count:
		d.pos++
		n := 0
		err := d.eachElem(func(int) error { n++; return d.skipAt(depth + 1) })
		return make([]any, n), err
	}
	// Anything else is built whole, as DecodeStored builds it.
	return d.value(s, depth, owner)
}

// objectSelected is object keeping only the selected members.
func (d *decoder) objectSelected(s *Schema, sel *Selection, depth int, owner string) (any, error) {
	if depth > anyMaxDepth {
		return nil, errDepth()
	}
	out := make(map[string]any, len(sel.members))
	if n := structName(s); n != "" {
		owner = n
	}
	err := d.eachMember(func(key []byte, esc bool) error {
		if !esc && sel.members[string(key)] == nil {
			// An unescaped key is its member's name: not selected.
			return d.skipAt(depth + 1)
		}
		f, name := s.memberOf(key, esc)
		child := sel.members[name]
		if child == nil {
			return d.skipAt(depth + 1)
		}
		if f == nil {
			if depth == 0 && (name == "kind" || name == "apiVersion") {
				v, err := d.value(&Schema{Type: String}, depth+1, owner)
				if v != nil {
					out[name] = v
				}
				return err
			}
			if s.PreserveUnknown {
				v, err := d.anyValue()
				out[name] = v
				return err
			}
			return d.skip()
		}
		v, err := d.selected(f.Schema, child, depth+1, owner)
		if err != nil {
			return err
		}
		if v == nil {
			if s.Loose && f.Schema != nil && f.Schema.Nullable {
				out[name] = nil
				return nil
			}
			delete(out, name)
			return nil
		}
		if prev, dup := out[name]; dup {
			v = mergeDuplicate(prev, v, f.Schema)
		}
		out[name] = v
		return nil
	})
	return out, err
}

// mapSelected is mapValue keeping only the selected keys, or only the
// keys (with nil values) when sel counts them.
func (d *decoder) mapSelected(s *Schema, sel *Selection, depth int, owner string) (any, error) {
	if depth > anyMaxDepth {
		return nil, errDepth()
	}
	out := map[string]any{}
	err := d.eachMember(func(key []byte, esc bool) error {
		name := d.stringOf(key, esc)
		if sel.count {
			if dropped, err := d.skipDroppedNull(s); dropped || err != nil {
				return err
			}
			out[name] = nil
			return d.skipAt(depth + 1)
		}
		child := sel.members[name]
		if child == nil {
			return d.skipAt(depth + 1)
		}
		v, err := d.selected(s.Elem, child, depth+1, owner)
		if err != nil {
			return err
		}
		putMember(out, s, name, v)
		return nil
	})
	return out, err
}

// FieldPath names one value a reader of an object takes: the value at
// Path (member names from the object's top), or with Count only how many
// members or elements it has.
type FieldPath struct {
	Path  []string
	Count bool
	// Raw reads the value's JSON text as data holds it, into ScanStored's
	// raw rather than out; other paths may go on below it.
	Raw bool
}

// Fields is a set of paths whose values ScanStored reads straight from
// stored bytes, without building the object. It is read-only once made:
// safe for concurrent use.
type Fields struct {
	root  fieldNode
	paths []FieldPath
	// values and raws count the paths that are not Raw and that are.
	values, raws int
}

type fieldNode struct {
	// leaf is 1 + the index in out of the path ending here, 0 for none;
	// raw is 1 + that in raw of a Raw path.
	leaf, raw int
	count     bool
	children  []fieldChild
}

type fieldChild struct {
	name string
	node *fieldNode
}

// maxFieldChildren bounds the members selected in one object: the
// duplicate check keeps one bit per member.
const maxFieldChildren = 64

// NewFields makes the Fields of paths; value i of ScanStored is paths[i].
// It returns nil when paths cannot be scanned that way: an empty path,
// a path that ends where another passes or ends, or too many members
// selected in one object.
func NewFields(paths []FieldPath) *Fields {
	f := &Fields{paths: slices.Clone(paths)}
	for _, p := range paths {
		if len(p.Path) == 0 {
			return nil
		}
		n := &f.root
		for _, name := range p.Path {
			if n.leaf != 0 {
				return nil
			}
			var next *fieldNode
			for _, c := range n.children {
				if c.name == name {
					next = c.node
				}
			}
			if next == nil {
				if len(n.children) == maxFieldChildren {
					return nil
				}
				next = &fieldNode{}
				n.children = append(n.children, fieldChild{name, next})
			}
			n = next
		}
		switch {
		case n.leaf != 0 || n.raw != 0:
			return nil
		case p.Raw:
			f.raws++
			n.raw = f.raws
		case len(n.children) > 0:
			return nil
		default:
			f.values++
			n.leaf, n.count = f.values, p.Count
		}
	}
	return f
}

// With returns the Fields of f's paths and then p, or nil as NewFields.
func (f *Fields) With(p FieldPath) *Fields {
	return NewFields(append(slices.Clone(f.paths), p))
}

// Len is the number of values ScanStored reads into out, RawLen that of
// Raw paths it reads into raw.
func (f *Fields) Len() int    { return f.values }
func (f *Fields) RawLen() int { return f.raws }

// ScanStored reads the values at f's paths in data, a stored object of
// schema s, into out (of f.Len() values, in the order of the paths that
// are not Raw): each is what the path holds in DecodeStored's object (nil
// when nothing), and a count is that value's number of members or
// elements as an int64 (0 when it is neither a map nor an array). The
// Raw paths' JSON texts go to raw (of f.RawLen(), nil when not found),
// each a subslice of data. Strings share data, which must never be
// written again. It reports false, and out and raw are not to be used,
// when data does not decode, or repeats a member on a path (DecodeStored
// merges those): the caller decodes instead. Values off the paths are
// checked for JSON syntax only.
func ScanStored(data []byte, s *Schema, f *Fields, out []any, raw [][]byte) bool {
	if len(data) == 0 || len(out) != f.values || len(raw) != f.raws {
		return false
	}
	i := 0
	for _, p := range f.paths {
		switch {
		case p.Raw:
		case p.Count:
			out[i] = int64(0)
			i++
		default:
			out[i] = nil
			i++
		}
	}
	clear(raw)
	d := &decoder{scanner: scanner{data: data, text: unsafe.String(&data[0], len(data)), maxDepth: anyMaxDepth}, trusted: true}
	sc := scanOut{vals: out, raws: raw}
	if err := d.scanValue(s, &f.root, 0, structName(s), false, &sc); err != nil {
		return false
	}
	return d.end() == nil && d.typeErr == nil
}

// scanOut is where a scan puts what it reads.
type scanOut struct {
	vals []any
	raws [][]byte
}

// errRepeated stops a scan at a member repeated on a path.
var errRepeated = &wrapped{msg: "member repeated on a selected path", kind: ErrSyntax}

// scanValue reads the value of node n, of schema s; inMap says it is the
// value of a map that keeps a JSON null as the zero value of s.
func (d *decoder) scanValue(s *Schema, n *fieldNode, depth int, owner string, inMap bool, out *scanOut) error {
	if depth > anyMaxDepth {
		return errDepth()
	}
	c, err := d.expectValue()
	if err != nil {
		return err
	}
	if n.raw != 0 {
		start := d.pos
		if n.leaf == 0 && len(n.children) == 0 {
			err = d.skipAt(depth)
		} else {
			err = d.scanRead(c, s, n, depth, owner, inMap, out)
		}
		out.raws[n.raw-1] = d.data[start:d.pos]
		return err
	}
	return d.scanRead(c, s, n, depth, owner, inMap, out)
}

// scanRead is scanValue of a value starting with c.
func (d *decoder) scanRead(c byte, s *Schema, n *fieldNode, depth int, owner string, inMap bool, out *scanOut) error {
	if n.leaf != 0 && n.count && s != nil && c != 'n' {
		switch {
		case s.Type == Map && c == '{':
			d.pos++
			k, err := d.countMembers(s, depth)
			out.vals[n.leaf-1] = int64(k)
			return err
		case s.Type == Array && c == '[':
			d.pos++
			k := 0
			err := d.eachElem(func(int) error { k++; return d.skipAt(depth + 1) })
			out.vals[n.leaf-1] = int64(k)
			return err
		}
	}
	if n.leaf == 0 && s != nil && c == '{' {
		switch s.Type {
		case Object:
			d.pos++
			return d.scanObject(s, n, depth, owner, out)
		case Map:
			d.pos++
			return d.scanMap(s, n, depth, owner, out)
		}
	}
	// Anything else is decoded as DecodeStored decodes it, and its paths
	// read from that.
	v, err := d.value(s, depth, owner)
	if err != nil {
		return err
	}
	if v == nil && inMap {
		v = zeroValue(s)
	}
	if !fillFields(v, n, out) {
		return errRaw
	}
	return nil
}

// errRaw stops a scan at a Raw path inside a value decoded whole.
var errRaw = &wrapped{msg: "raw path inside a decoded value", kind: ErrSyntax}

// fillFields sets the values of the paths under n from v, n's decoded
// value; false when one is a Raw path, which a decoded value cannot give.
func fillFields(v any, n *fieldNode, out *scanOut) bool {
	if n.raw != 0 {
		return false
	}
	if n.leaf != 0 {
		if !n.count {
			out.vals[n.leaf-1] = v
			return true
		}
		switch x := v.(type) {
		case map[string]any:
			out.vals[n.leaf-1] = int64(len(x))
		case []any:
			out.vals[n.leaf-1] = int64(len(x))
		}
		return true
	}
	m, _ := v.(map[string]any)
	for _, c := range n.children {
		var cv any
		if m != nil {
			cv = m[c.name]
		}
		if !fillFields(cv, c.node, out) {
			return false
		}
	}
	return true
}

// child returns the index of n's child name, or -1.
func (n *fieldNode) child(name []byte) int {
	for i := range n.children {
		if n.children[i].name == string(name) {
			return i
		}
	}
	return -1
}

// visit finds the child of n a member's key names (-1 for none) and marks
// it in seen; a child met twice is errRepeated.
func (n *fieldNode) visit(key []byte, esc bool, seen *uint64) (name []byte, i int, err error) {
	name = key
	if esc {
		name = []byte(unquote(key))
	}
	if i = n.child(name); i < 0 {
		return name, i, nil
	}
	if *seen&(1<<i) != 0 {
		return name, i, errRepeated
	}
	*seen |= 1 << i
	return name, i, nil
}

func (d *decoder) scanObject(s *Schema, n *fieldNode, depth int, owner string, out *scanOut) error {
	if sn := structName(s); sn != "" {
		owner = sn
	}
	var seen uint64
	return d.eachMember(func(key []byte, esc bool) error {
		name, i, err := n.visit(key, esc, &seen)
		switch {
		case err != nil:
			return err
		case i < 0:
			return d.skipAt(depth + 1)
		}
		var fs *Schema
		switch f := s.Field(string(name)); {
		case f != nil:
			fs = f.Schema
		case depth == 0 && (string(name) == "kind" || string(name) == "apiVersion"):
			fs = &Schema{Type: String}
		case s.PreserveUnknown:
			// Decoded whole, without a schema.
		default:
			return d.skip() // dropped
		}
		return d.scanValue(fs, n.children[i].node, depth+1, owner, false, out)
	})
}

func (d *decoder) scanMap(s *Schema, n *fieldNode, depth int, owner string, out *scanOut) error {
	var seen uint64
	return d.eachMember(func(key []byte, esc bool) error {
		_, i, err := n.visit(key, esc, &seen)
		switch {
		case err != nil:
			return err
		case i < 0:
			return d.skipAt(depth + 1)
		}
		return d.scanValue(s.Elem, n.children[i].node, depth+1, owner, !s.Loose, out)
	})
}

// skipDroppedNull reads past a map member's null that DecodeStored drops
// (a loose map of non-nullable values), reporting whether it did; any
// other value is left to read.
func (d *decoder) skipDroppedNull(s *Schema) (bool, error) {
	c, err := d.expectValue()
	if err != nil || c != 'n' || !s.Loose || s.Elem == nil || s.Elem.Nullable {
		return false, err
	}
	_, err = d.literal()
	return true, err
}

// countMembers counts the keys of a map whose '{' was consumed as
// DecodeStored keeps them: each once, without the nulls a loose map of
// non-nullable values drops.
func (d *decoder) countMembers(s *Schema, depth int) (int, error) {
	// A short list finds the repeats of a few keys; past that a set does,
	// so a map of many keys costs no more than decoding it.
	var small [16]string
	keys := small[:0]
	var set map[string]struct{}
	err := d.eachMember(func(key []byte, esc bool) error {
		if dropped, err := d.skipDroppedNull(s); dropped || err != nil {
			return err
		}
		name := d.stringOf(key, esc)
		switch {
		case set != nil:
			set[name] = struct{}{}
		case slices.Contains(keys, name):
		case len(keys) < len(small):
			keys = append(keys, name)
		default:
			set = make(map[string]struct{}, 2*len(small))
			for _, k := range keys {
				set[k] = struct{}{}
			}
			set[name] = struct{}{}
		}
		return d.skipAt(depth + 1)
	})
	if set != nil {
		return len(set), err
	}
	return len(keys), err
}

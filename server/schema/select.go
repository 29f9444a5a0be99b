package schema

import "unsafe"

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
		var f *Field
		var name string
		if esc {
			name = unquote(key)
			f = s.Field(name)
		} else if s.index != nil {
			f = s.index[string(key)]
		} else {
			f = s.Field(string(key))
		}
		if f != nil {
			name = f.Name
		} else if !esc {
			name = string(key)
		}
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
			c, err := d.expectValue()
			if err != nil {
				return err
			}
			if c == 'n' && s.Loose && s.Elem != nil && !s.Elem.Nullable {
				// DecodeStored drops this member.
				_, err := d.literal()
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
		if v == nil && s.Loose {
			if s.Elem == nil || s.Elem.Nullable {
				out[name] = nil
			}
			return nil
		}
		if v == nil {
			v = zeroValue(s.Elem)
		}
		out[name] = v
		return nil
	})
	return out, err
}

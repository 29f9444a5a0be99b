package jsonschema

import (
	"fmt"
	"reflect"
	"strings"
)

// correlation pairs a value being validated on an update with its old
// value, as upstream's validation ratcheting does: object members are
// paired by name, the items of x-kubernetes-list-type map lists by their
// keys, and nothing else (atomic and set lists are compared whole). A nil
// correlation is a value with no old counterpart. A correlation is used
// by one validation, not concurrently.
type correlation struct {
	old, cur any
	p        *Props
	children map[any]*correlation
	eq       *bool
	mapList  map[any]any // old items of a map list by key, once built
	isMap    bool        // mapList was built
}

func newCorrelation(cur, old any, p *Props) *correlation {
	return &correlation{cur: cur, old: old, p: p}
}

// typeMeta members of the root are never paired: upstream does not track
// their old values.
func typeMeta(field string) bool { return field == "apiVersion" || field == "kind" }

// key pairs the member field of an object at path.
func (c *correlation) key(path, field string) *correlation {
	if c == nil || c.p == nil || path == "" && typeMeta(field) {
		return nil
	}
	return c.child(field)
}

func (c *correlation) child(field string) *correlation {
	if x, ok := c.children[field]; ok {
		return x
	}
	oldMap, ok1 := c.old.(map[string]any)
	curMap, ok2 := c.cur.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	o, ok1 := oldMap[field]
	n, ok2 := curMap[field]
	if !ok1 || !ok2 {
		return nil
	}
	sub, ok := c.p.property(field)
	if !ok {
		if sub = c.p.ValueSchema(); sub == nil {
			return nil
		}
	}
	x := &correlation{old: o, cur: n, p: sub}
	c.remember(field, x)
	return x
}

func (c *correlation) remember(k any, x *correlation) {
	if c.children == nil {
		c.children = map[any]*correlation{}
	}
	c.children[k] = x
}

// index pairs item i of a list.
func (c *correlation) index(i int) *correlation {
	if c == nil || c.p == nil {
		return nil
	}
	if x, ok := c.children[i]; ok {
		return x
	}
	cur, ok := c.cur.([]any)
	if !ok || i >= len(cur) {
		return nil
	}
	o := c.oldItem(cur[i])
	if o == nil {
		return nil
	}
	item := c.p.ItemSchema()
	if item == nil {
		return nil
	}
	x := &correlation{old: o, cur: cur[i], p: item}
	c.remember(i, x)
	return x
}

// oldItem finds the first old item of a map list with the same keys as
// item.
func (c *correlation) oldItem(item any) any {
	old, ok := c.old.([]any)
	keys := c.p.XListMapKeys
	if !ok || c.p.ListType() != "map" {
		return nil
	}
	if !c.isMap {
		c.isMap = true
		c.mapList = map[any]any{}
		if c.p.Type != typeArray || len(keys) == 0 {
			old = nil
		}
		for _, e := range old {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if k, ok := mapListKey(keys, m); ok {
				if _, dup := c.mapList[k]; !dup {
					c.mapList[k] = m
				}
			}
		}
	}
	m, ok := item.(map[string]any)
	if !ok {
		return nil
	}
	k, ok := mapListKey(keys, m)
	if !ok {
		return nil
	}
	return c.mapList[k]
}

// mapListKey is the identity of a map list item, as upstream keys them:
// the value of a single key, or the key values joined (numbers with six
// decimals), every key present and scalar.
func mapListKey(keys []string, m map[string]any) (any, bool) {
	if len(keys) == 1 {
		switch v := m[keys[0]].(type) {
		case bool, float64, int64, string:
			return v, true
		}
		return nil, false
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteByte(0)
		switch v := m[k].(type) {
		case bool:
			fmt.Fprintf(&b, "%t", v)
		case float64:
			fmt.Fprintf(&b, "%f", v)
		case int64:
			fmt.Fprintf(&b, "%d", v)
		case string:
			fmt.Fprintf(&b, "%q", v)
		default:
			return nil, false
		}
	}
	return b.String(), true
}

// equal reports whether the value equals its old value, comparing paired
// children where they pair: an object member that does not pair makes the
// objects differ.
func (c *correlation) equal() (res bool) {
	if c == nil {
		return false
	}
	if c.eq != nil {
		return *c.eq
	}
	defer func() { c.eq = &res }()
	if c.cur == nil || c.old == nil {
		return c.cur == nil && c.old == nil
	}
	oldList, oldIsList := c.old.([]any)
	curList, curIsList := c.cur.([]any)
	oldMap, oldIsMap := c.old.(map[string]any)
	curMap, curIsMap := c.cur.(map[string]any)
	if oldIsList != curIsList || oldIsMap != curIsMap {
		return false
	}
	switch {
	case curIsList:
		if len(oldList) != len(curList) {
			return false
		}
		for i := range curList {
			x := c.index(i)
			if x == nil {
				if !c.isMap {
					return reflect.DeepEqual(oldList, curList)
				}
				return false
			}
			if !x.equal() {
				return false
			}
		}
		return true
	case curIsMap:
		if len(oldMap) != len(curMap) {
			return false
		}
		for k := range curMap {
			x := c.child(k)
			if x == nil || !x.equal() {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(c.old, c.cur)
}

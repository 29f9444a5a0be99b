package patch

import (
	"fmt"
	"reflect"
)

// valueKind is the JSON shape of a value; values of different kinds never
// merge.
type valueKind uint8

const (
	kindNull valueKind = iota
	kindMap
	kindList
	kindString
	kindInt
	kindFloat
	kindBool
	kindOther
)

func kindOf(v any) valueKind {
	switch v.(type) {
	case nil:
		return kindNull
	case map[string]any:
		return kindMap
	case []any:
		return kindList
	case string:
		return kindString
	case int64:
		return kindInt
	case float64:
		return kindFloat
	case bool:
		return kindBool
	}
	return kindOther
}

// hashable reports whether v may be a Go map key.
func hashable(v any) bool {
	switch v.(type) {
	case nil, string, int64, float64, bool, int:
		return true
	}
	return false
}

// equal compares two JSON values without panicking on uncomparable ones:
// scalars compare as Go values (so int64 1 differs from float64 1, as
// upstream), lists and maps deeply.
func equal(a, b any) bool {
	if hashable(a) {
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// elementKind is the common kind of the items of the given lists. Mixed
// kinds, lists of lists and empty input are errors.
func elementKind(lists ...[]any) (valueKind, error) {
	first := true
	var k valueKind
	for _, l := range lists {
		for _, v := range l {
			vk := kindOf(v)
			if first {
				if vk == kindList {
					return 0, errNoListOfLists()
				}
				k, first = vk, false
				continue
			}
			if vk != k {
				return 0, strategicErr("list element types are not identical: %v", fmt.Sprint(lists))
			}
		}
	}
	if first {
		return 0, strategicErr("no elements in any of the given slices")
	}
	return k, nil
}

// typeName names the Go type of v for error texts.
func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	return reflect.TypeOf(v).String()
}

func errBadArgType(expected string, actual any) error {
	return strategicErr("expected a %s, but received a %s", expected, typeName(actual))
}

func errNoMergeKey(m map[string]any, key string) error {
	return strategicErr("map: %v does not contain declared merge key: %s", m, key)
}

// positions finds the index of an item's identity (its merge key value,
// or the item itself for scalars) in an order list.
type positions struct {
	mergeKey string
	maps     bool
	index    map[any]int
	slow     []any // identities that cannot be map keys, by index
}

func newPositions(order []any, mergeKey string, kind valueKind) *positions {
	p := &positions{mergeKey: mergeKey, maps: kind == kindMap, index: make(map[any]int, len(order))}
	for i, v := range order {
		id := p.identity(v)
		if hashable(id) {
			if _, dup := p.index[id]; !dup {
				p.index[id] = i
			}
			continue
		}
		if p.slow == nil {
			p.slow = make([]any, len(order))
		}
		p.slow[i] = id
	}
	return p
}

func (p *positions) identity(v any) any {
	if !p.maps {
		return v
	}
	m, _ := v.(map[string]any)
	return m[p.mergeKey]
}

// of returns the first index of v's identity in the order, or -1.
func (p *positions) of(v any) int {
	id := p.identity(v)
	if hashable(id) {
		if i, ok := p.index[id]; ok {
			return i
		}
		return -1
	}
	for i, s := range p.slow {
		if s != nil && equal(id, s) {
			return i
		}
	}
	return -1
}

package protobuf

import (
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/schema"
)

// plan is what Transcode derives once per schema: how JSON members map to
// slots and in which order the message's fields are written. Plans of a
// schema graph link to each other, so transcoding follows pointers rather
// than looking schemas up.
type plan struct {
	s    *schema.Schema
	kind special
	// index maps a member name to its slot: its position in s.Fields, the
	// field Decode files the member under.
	index map[string]int32
	// keys answers most lookups of index without hashing the name: an
	// entry per hash of length, first and last byte (keyHash), holding the
	// one name of that hash, or keyNone, or keyClash to ask index.
	keys [keyTable]keySlot
	// steps are the message's fields in ascending number order.
	steps []step
	// check lists the slots of members Marshal never reads but Decode
	// type-checks (kind, apiVersion): present, they are checked for the
	// errors Decode would report.
	check []int32
	elem  *plan
	// unsupported is set for objects whose layout the transcoder does not
	// follow (an inline message inside an inline message, an inline member
	// the parent files elsewhere); Transcode answers ErrUnsupported.
	unsupported bool
}

// keySlot is an entry of plan.keys.
type keySlot struct {
	name string
	slot int32
}

const (
	keyTable = 64
	keyNone  = -1
	keyClash = -2
)

// keyHash spreads member names over plan.keys; a non-empty name only.
func keyHash(k []byte) int {
	return (len(k)*7 + int(k[0])*3 + int(k[len(k)-1])) & (keyTable - 1)
}

// lookup returns the slot of the member named key (raw, unescaped).
func (p *plan) lookup(key []byte) (int32, bool) {
	if len(key) == 0 {
		i, ok := p.index[""]
		return i, ok
	}
	e := &p.keys[keyHash(key)]
	switch {
	case e.slot == keyClash:
		i, ok := p.index[string(key)]
		return i, ok
	case e.slot >= 0 && e.name == string(key):
		return e.slot, true
	}
	return 0, false
}

// step writes one field.
type step struct {
	f   *schema.Field
	num protowire.Number
	// pos is the slot holding the member's value, -1 if the object never
	// holds one.
	pos int32
	sub *plan // plan of f.Schema
	// inline are the steps of an Inline field's embedded message; their
	// slots are the parent object's.
	inline []step
}

var (
	// plans caches complete plan graphs for the life of the process, one
	// per schema pointer; the catalog bounds it.
	plans sync.Map // *schema.Schema → *plan
	// planMu serialises building, so only complete graphs are published.
	planMu sync.Mutex
)

// planOf returns the plan of s, building and publishing the graph of every
// schema s reaches that has none yet.
func planOf(s *schema.Schema) *plan {
	if p, ok := plans.Load(s); ok {
		return p.(*plan)
	}
	planMu.Lock()
	defer planMu.Unlock()
	building := map[*schema.Schema]*plan{}
	p := buildPlan(s, building)
	for k, v := range building {
		plans.Store(k, v)
	}
	return p
}

func buildPlan(s *schema.Schema, building map[*schema.Schema]*plan) *plan {
	if s == nil {
		return nil
	}
	if p, ok := plans.Load(s); ok {
		return p.(*plan)
	}
	if p, ok := building[s]; ok {
		return p
	}
	p := &plan{s: s, kind: specialOf(s)}
	for i := range p.keys {
		p.keys[i].slot = keyNone
	}
	building[s] = p
	p.elem = buildPlan(s.Elem, building)
	if len(s.Fields) == 0 {
		return p
	}
	p.index = make(map[string]int32, len(s.Fields))
	for i, f := range s.Fields {
		if f.Name != "" {
			p.index[f.Name] = int32(i)
		}
	}
	for name, i := range p.index {
		e := &p.keys[keyHash([]byte(name))]
		if e.slot == keyNone {
			e.name, e.slot = name, i
		} else {
			e.name, e.slot = "", keyClash
		}
	}
	emitted := make([]bool, len(s.Fields))
	// slot finds where Decode files member name; the field it files it
	// under must be want, or Marshal would read another field's value.
	slot := func(name string, want *schema.Field) int32 {
		i, ok := p.index[name]
		if !ok {
			if s.PreserveUnknown {
				p.unsupported = true // Decode keeps the member as unknown JSON
			}
			return -1
		}
		if s.Fields[i] != want && s.Fields[i].Schema != want.Schema {
			p.unsupported = true
		}
		emitted[i] = true
		return i
	}
	for _, f := range layoutOf(s).ordered {
		st := step{f: f, num: protowire.Number(f.ProtoNumber), pos: -1, sub: buildPlan(f.Schema, building)}
		if f.Inline {
			for _, g := range layoutOf(f.Schema).ordered {
				if g.Inline {
					p.unsupported = true
					continue
				}
				st.inline = append(st.inline, step{f: g, num: protowire.Number(g.ProtoNumber),
					pos: slot(g.Name, g), sub: buildPlan(g.Schema, building)})
			}
		} else {
			st.pos = slot(f.Name, f)
		}
		p.steps = append(p.steps, st)
	}
	for i, f := range s.Fields {
		if !emitted[i] && f.Name != "" && p.index[f.Name] == int32(i) {
			p.check = append(p.check, int32(i))
		}
	}
	return p
}

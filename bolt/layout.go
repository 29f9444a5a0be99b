package bolt

import (
	"encoding/binary"
	"fmt"
)

// File layout. Three top-level buckets:
//
//	meta     "revision" -> 8-byte big-endian global revision counter
//	         "compacted" -> 8-byte big-endian compacted revision
//	         "format"   -> 8-byte big-endian layout version
//	         "tag"      -> Options.Tag of the first open (absent in older files)
//	state    object key -> stateRecord (current state of every object)
//	history  8-byte big-endian revision -> eventRecord (the watch history)
//
// Integers inside records are varints so small revisions cost few bytes.
var (
	bucketMeta    = []byte("meta")
	bucketState   = []byte("state")
	bucketHistory = []byte("history")

	metaRevision  = []byte("revision")
	metaCompacted = []byte("compacted")
	metaFormat    = []byte("format")
	metaTag       = []byte("tag")
)

// formatVersion is the layout written by this code; Open refuses others so
// a future layout is never misread. Version 2 added eventJoined; a version 1
// file is a valid version 2 file and Open upgrades it by rewriting the
// number, so older code refuses the file instead of failing on a
// transaction's event.
const (
	formatVersion   = 2
	formatVersionV1 = 1
)

// eventJoined is set in an event record's type byte when the event belongs
// to the same transaction as the event at the revision before it.
const eventJoined = 0x80

func u64key(v int64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(v))
	return b
}

func readU64(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: integer of %d bytes", ErrCorrupt, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// stateRecord: varint CreateRevision, varint ModRevision, value bytes.
func appendState(dst []byte, kv *KV) []byte {
	dst = binary.AppendVarint(dst, kv.CreateRevision)
	dst = binary.AppendVarint(dst, kv.ModRevision)
	return append(dst, kv.Value...)
}

// decodeState parses a state record. The returned Value aliases rec.
func decodeState(key string, rec []byte) (KV, error) {
	kv := KV{Key: key}
	var n int
	if kv.CreateRevision, n = binary.Varint(rec); n <= 0 {
		return KV{}, fmt.Errorf("%w: state %q create revision", ErrCorrupt, key)
	}
	rec = rec[n:]
	if kv.ModRevision, n = binary.Varint(rec); n <= 0 {
		return KV{}, fmt.Errorf("%w: state %q mod revision", ErrCorrupt, key)
	}
	kv.Value = rec[n:]
	return kv, nil
}

// eventRecord: type byte (with eventJoined), varint commit time (unix ns), uvarint key length,
// key, varint CreateRevision, varint ModRevision, uvarint value length,
// value, then a byte 1 followed by varint CreateRevision, varint
// ModRevision and the previous value to the end, or a byte 0 when there is
// no previous state. Prev shares the event's key.
func appendEvent(dst []byte, ev *Event, at int64, joined bool) []byte {
	t := byte(ev.Type)
	if joined {
		t |= eventJoined
	}
	dst = append(dst, t)
	dst = binary.AppendVarint(dst, at)
	dst = binary.AppendUvarint(dst, uint64(len(ev.KV.Key)))
	dst = append(dst, ev.KV.Key...)
	dst = binary.AppendVarint(dst, ev.KV.CreateRevision)
	dst = binary.AppendVarint(dst, ev.KV.ModRevision)
	dst = binary.AppendUvarint(dst, uint64(len(ev.KV.Value)))
	dst = append(dst, ev.KV.Value...)
	if ev.Prev == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = binary.AppendVarint(dst, ev.Prev.CreateRevision)
	dst = binary.AppendVarint(dst, ev.Prev.ModRevision)
	return append(dst, ev.Prev.Value...)
}

// decodeEvent parses an event record of revision rev. Values alias rec.
func decodeEvent(rev int64, rec []byte) (histEvent, error) {
	bad := func(what string) (histEvent, error) {
		return histEvent{}, fmt.Errorf("%w: event %d: %s", ErrCorrupt, rev, what)
	}
	r := reader{b: rec}
	var h histEvent
	ev := &h.Event
	ev.Revision = rev
	t := r.byte()
	h.joined = t&eventJoined != 0
	t &^= eventJoined
	if t != byte(Put) && t != byte(Delete) {
		return bad("type")
	}
	ev.Type = EventType(t)
	h.at = r.varint()
	ev.KV.Key = string(r.bytes(r.uvarint()))
	ev.KV.CreateRevision = r.varint()
	ev.KV.ModRevision = r.varint()
	ev.KV.Value = r.bytes(r.uvarint())
	hasPrev := r.byte()
	if r.err {
		return bad("truncated")
	}
	switch hasPrev {
	case 0:
		if len(r.b) != 0 {
			return bad("trailing bytes")
		}
	case 1:
		prev := &KV{Key: ev.KV.Key}
		prev.CreateRevision = r.varint()
		prev.ModRevision = r.varint()
		if r.err {
			return bad("truncated previous state")
		}
		prev.Value = r.b
		ev.Prev = prev
	default:
		return bad("previous-state flag")
	}
	if ev.KV.ModRevision != rev {
		return bad("mod revision differs from key")
	}
	return h, nil
}

// reader decodes a record, latching the first error.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.err = true
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

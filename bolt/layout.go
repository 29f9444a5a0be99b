package bolt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unsafe"
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
// Every state and event record ends with a 4-byte big-endian CRC-32C of the
// record's bbolt key followed by the record's other bytes (version 3):
// bbolt checks its meta pages only, so a flipped bit in a value would
// otherwise be served as it is.
var (
	bucketMeta    = []byte("meta")
	bucketState   = []byte("state")
	bucketHistory = []byte("history")

	metaRevision  = []byte("revision")
	metaCompacted = []byte("compacted")
	metaFormat    = []byte("format")
	metaTag       = []byte("tag")
	metaUpgrade   = []byte("upgrade")
)

// formatVersion is the layout written by this code; Open refuses others so
// a future layout is never misread. Version 2 added eventJoined (a version
// 1 file is a valid version 2 file). Version 3 added the record checksum:
// Open rewrites the records of a version 1 or 2 file in place (upgrade.go),
// after which older code refuses the file instead of misreading its records.
const (
	formatVersion   = 3
	formatVersionV2 = 2
	formatVersionV1 = 1
)

// checksumSize is the length of a record's trailing CRC-32C.
const checksumSize = 4

// castagnoli is the CRC-32C table; the polynomial has hardware support on
// amd64 and arm64, so checking every record at Open costs little.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordSum is the checksum of the record body under its bbolt key.
func recordSum(key, body []byte) uint32 {
	return crc32.Update(crc32.Update(0, castagnoli, key), castagnoli, body)
}

// strBytes is s as bytes, without a copy; the result must not be written.
func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// sealRecord appends the checksum of the record dst[start:] under key.
func sealRecord(dst []byte, start int, key []byte) []byte {
	return binary.BigEndian.AppendUint32(dst, recordSum(key, dst[start:]))
}

// openRecord verifies the checksum of rec under key and returns the body.
func openRecord(key, rec []byte) ([]byte, error) {
	if len(rec) < checksumSize {
		return nil, fmt.Errorf("%w: record of %d bytes", ErrChecksum, len(rec))
	}
	body := rec[:len(rec)-checksumSize]
	if stored, sum := binary.BigEndian.Uint32(rec[len(body):]), recordSum(key, body); stored != sum {
		return nil, fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, stored, sum)
	}
	return body, nil
}

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

// stateRecord: varint CreateRevision, varint ModRevision, value bytes,
// checksum.
func appendState(dst []byte, kv *KV) []byte {
	start := len(dst)
	dst = binary.AppendVarint(dst, kv.CreateRevision)
	dst = binary.AppendVarint(dst, kv.ModRevision)
	dst = append(dst, kv.Value...)
	return sealRecord(dst, start, strBytes(kv.Key))
}

// decodeState verifies and parses a state record. The returned Value
// aliases rec. A checksum failure wraps ErrChecksum as well as ErrCorrupt.
func decodeState(key string, rec []byte) (KV, error) {
	body, err := openRecord(strBytes(key), rec)
	if err != nil {
		return KV{}, fmt.Errorf("%w: state %q: %w", ErrCorrupt, key, err)
	}
	return parseState(key, body)
}

// parseState parses a state record without its checksum (layout 2).
func parseState(key string, rec []byte) (KV, error) {
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
// ModRevision and the previous value, or a byte 0 when there is no
// previous state; then the checksum under the revision's key. Prev shares
// the event's key.
func appendEvent(dst []byte, ev *Event, at int64, joined bool) []byte {
	start := len(dst)
	dst = appendEventBody(dst, ev, at, joined)
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], uint64(ev.Revision))
	return sealRecord(dst, start, key[:])
}

func appendEventBody(dst []byte, ev *Event, at int64, joined bool) []byte {
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

// decodeEvent verifies and parses an event record of revision rev. Values
// alias rec. A checksum failure wraps ErrChecksum as well as ErrCorrupt.
func decodeEvent(rev int64, rec []byte) (histEvent, error) {
	return decodeEventIn(rev, rec, nil)
}

// decodeEventIn is decodeEvent with the key copied into keys, when not nil.
func decodeEventIn(rev int64, rec []byte, keys *slab) (histEvent, error) {
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], uint64(rev))
	body, err := openRecord(key[:], rec)
	if err != nil {
		return histEvent{}, fmt.Errorf("%w: event %d: %w", ErrCorrupt, rev, err)
	}
	return parseEventIn(rev, body, keys)
}

// parseEvent parses an event record without its checksum (layout 2).
func parseEvent(rev int64, rec []byte) (histEvent, error) {
	return parseEventIn(rev, rec, nil)
}

func parseEventIn(rev int64, rec []byte, keys *slab) (histEvent, error) {
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
	if key := r.bytes(r.uvarint()); keys != nil {
		ev.KV.Key = keys.string(key)
	} else {
		ev.KV.Key = string(key)
	}
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

package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// protobufMagic starts every protobuf body: three ASCII letters naming the
// encoding family and a zero byte meaning "runtime.Unknown follows".
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// Field numbers of runtime.Unknown and runtime.TypeMeta. TypeMeta here
// numbers apiVersion 1 and kind 2, the reverse of the object TypeMeta.
const (
	unknownTypeMeta        protowire.Number = 1
	unknownRaw             protowire.Number = 2
	unknownContentEncoding protowire.Number = 3
	unknownContentType     protowire.Number = 4
	typeMetaAPIVersion     protowire.Number = 1
	typeMetaKind           protowire.Number = 2
)

var (
	errNoMagic   = fmt.Errorf("provided data does not appear to be a protobuf message, expected prefix %v", protobufMagic)
	errEmptyData = errors.New("empty data")
	errEmptyBody = errors.New("empty body")
)

// WrapProtobuf appends to dst a complete protobuf body: the magic prefix
// and a runtime.Unknown carrying apiVersion, kind and raw (the object's own
// message), with the empty contentEncoding and contentType upstream always
// writes. The output is byte-identical to upstream's. raw is only read.
func WrapProtobuf(dst []byte, apiVersion, kind string, raw []byte) []byte {
	tmLen := sizeString(typeMetaAPIVersion, apiVersion) + sizeString(typeMetaKind, kind)
	dst = growFor(dst, len(protobufMagic)+tmLen+len(raw)+24)
	dst = append(dst, protobufMagic...)
	dst = protowire.AppendTag(dst, unknownTypeMeta, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(tmLen))
	dst = appendString(dst, typeMetaAPIVersion, apiVersion)
	dst = appendString(dst, typeMetaKind, kind)
	dst = protowire.AppendTag(dst, unknownRaw, protowire.BytesType)
	dst = protowire.AppendBytes(dst, raw)
	dst = appendString(dst, unknownContentEncoding, "")
	dst = appendString(dst, unknownContentType, "")
	return dst
}

// ProtobufHeadroom is the room to reserve in front of a raw message that
// WrapProtobufAt will wrap: the envelope's head for the largest raw length.
func ProtobufHeadroom(apiVersion, kind string) int {
	tmLen := sizeString(typeMetaAPIVersion, apiVersion) + sizeString(typeMetaKind, kind)
	return len(protobufMagic) + protowire.SizeTag(unknownTypeMeta) + protowire.SizeBytes(tmLen) +
		protowire.SizeTag(unknownRaw) + binary.MaxVarintLen64
}

// WrapProtobufAt turns buf — headroom reserved bytes (ProtobufHeadroom)
// followed by a raw message — into the body WrapProtobuf would build for
// that raw, without copying the raw: the head is written right-aligned
// into the reserved bytes and the result starts where it begins. buf is
// modified and shares its array with the result.
func WrapProtobufAt(buf []byte, headroom int, apiVersion, kind string) []byte {
	var room [64]byte
	head := AppendProtobufHead(room[:0], apiVersion, kind, len(buf)-headroom)
	off := headroom - len(head)
	copy(buf[off:], head)
	return AppendProtobufTail(buf)[off:]
}

// AppendProtobufHead appends what WrapProtobuf writes before a raw
// message of rawLen bytes; the raw and then AppendProtobufTail complete
// the body. It lets a body be written in pieces.
func AppendProtobufHead(dst []byte, apiVersion, kind string, rawLen int) []byte {
	tmLen := sizeString(typeMetaAPIVersion, apiVersion) + sizeString(typeMetaKind, kind)
	dst = append(dst, protobufMagic...)
	dst = protowire.AppendTag(dst, unknownTypeMeta, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(tmLen))
	dst = appendString(dst, typeMetaAPIVersion, apiVersion)
	dst = appendString(dst, typeMetaKind, kind)
	dst = protowire.AppendTag(dst, unknownRaw, protowire.BytesType)
	return protowire.AppendVarint(dst, uint64(rawLen))
}

// AppendProtobufTail appends what WrapProtobuf writes after the raw
// message: the empty contentEncoding and contentType.
func AppendProtobufTail(dst []byte) []byte {
	dst = appendString(dst, unknownContentEncoding, "")
	return appendString(dst, unknownContentType, "")
}

// UnwrapProtobuf parses a protobuf body made by WrapProtobuf (or upstream).
// raw aliases b. A body that is empty, lacks the magic prefix, or holds only
// the prefix fails with upstream's message; malformed fields fail too. All
// errors wrap ErrProtobuf. Unknown fields are skipped; a repeated field
// keeps its last value.
func UnwrapProtobuf(b []byte) (apiVersion, kind string, raw []byte, err error) {
	switch {
	case len(b) == 0:
		return "", "", nil, wrap(ErrProtobuf, errEmptyData)
	case !bytes.HasPrefix(b, protobufMagic):
		return "", "", nil, wrap(ErrProtobuf, errNoMagic)
	case len(b) == len(protobufMagic):
		return "", "", nil, wrap(ErrProtobuf, errEmptyBody)
	}
	err = walkFields(b[len(protobufMagic):], unknownContentType, func(num protowire.Number, v []byte) error {
		switch num {
		case unknownTypeMeta:
			return walkFields(v, typeMetaKind, func(num protowire.Number, v []byte) error {
				switch num {
				case typeMetaAPIVersion:
					apiVersion = string(v)
				case typeMetaKind:
					kind = string(v)
				}
				return nil
			})
		case unknownRaw:
			raw = v
		}
		return nil
	})
	if err != nil {
		return "", "", nil, wrap(ErrProtobuf, fmt.Errorf("unable to decode protobuf envelope: %w", err))
	}
	return apiVersion, kind, raw, nil
}

// walkFields calls fn for each length-delimited field of the message in b.
// Fields numbered 1..lastKnown are strings or messages, so another wire type
// there is an error; other fields of other wire types are skipped.
func walkFields(b []byte, lastKnown protowire.Number, fn func(num protowire.Number, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if num <= lastKnown {
				return fmt.Errorf("wrong wire type %d for field %d", typ, num)
			}
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}

// sizeString is the encoded size of a string field.
func sizeString(num protowire.Number, s string) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

// appendString appends a string field, written even when empty.
func appendString(dst []byte, num protowire.Number, s string) []byte {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendString(dst, s)
}

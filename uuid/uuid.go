// Package uuid makes random (version 4) UUIDs: object uids, user uids and
// audit IDs share the form.
package uuid

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// New returns a UUID from the system's cryptographic generator, for
// identities that must not be guessable (object and user uids).
func New() string {
	var u [16]byte
	_, _ = crand.Read(u[:]) // crypto/rand.Read never fails
	return format(u)
}

// Fast returns a UUID from the runtime's ChaCha8 generator, seeded from
// the system's: unique and unguessable enough for an ID made on every
// request (the audit ID), at a tenth of the cost of New.
func Fast() string {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	return format(u)
}

// format sets the version and variant bits and writes the 8-4-4-4-12
// hex form.
func format(u [16]byte) string {
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

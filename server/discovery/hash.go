package discovery

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// storageVersionHashBytes is how much of the SHA-256 digest the hash keeps:
// clients only compare it for equality, and eight bytes is what upstream
// publishes.
const storageVersionHashBytes = 8

// storageVersionHash is the opaque token clients use to notice a change of
// storage version: base64 of the first bytes of SHA-256("<group>/<version>/<kind>").
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:storageVersionHashBytes])
}

// etagOf is the quoted upper-case hex SHA-512 of b.
func etagOf(b []byte) string {
	sum := sha512.Sum512(b)
	return `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
}

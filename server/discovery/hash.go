package discovery

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"platd/server/registry"
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

// storageVersionHashOf is the storage version hash d is listed with: that
// of the group, version and kind its objects are stored as, so that every
// version stored in one form shares it (events of both groups, both
// versions of a custom resource). Only stored resources have one.
func storageVersionHashOf(d *registry.Descriptor) string {
	if !d.Stored() || d.Storage != nil && d.Storage.NoVersionHash {
		return ""
	}
	s := d.StorageForm()
	return storageVersionHash(s.Group, s.Version, s.Kind)
}

// etagOf is the quoted upper-case hex SHA-512 of b.
func etagOf(b []byte) string {
	sum := sha512.Sum512(b)
	return `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
}

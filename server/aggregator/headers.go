package aggregator

import (
	"net/http"
	"strings"

	"platd/security"
)

// The headers an extension API server reads the front proxy's user from
// (upstream's requestheader defaults, published in the authentication
// ConfigMap).
const (
	headerUser        = "X-Remote-User"
	headerUID         = "X-Remote-Uid"
	headerGroup       = "X-Remote-Group"
	headerExtraPrefix = "X-Remote-Extra-"
)

// headerAuditID carries a request's audit ID: the server answers it, and
// the proxy tells it to the extension server.
const headerAuditID = "Audit-Id"

// setUserHeaders replaces every X-Remote-* header of h with the user u:
// its name, its uid when withUID, one X-Remote-Group per group and one
// X-Remote-Extra-<key> per extra value, the key escaped as upstream does.
func setUserHeaders(h http.Header, u *security.User, withUID bool) {
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-remote-") {
			delete(h, k)
		}
	}
	h.Set(headerUser, u.Name)
	if withUID && u.UID != "" {
		h.Set(headerUID, u.UID)
	}
	for _, g := range u.Groups {
		h.Add(headerGroup, g)
	}
	for k, vs := range u.Extra {
		for _, v := range vs {
			h.Add(headerExtraPrefix+escapeExtraKey(k), v)
		}
	}
}

// escapeExtraKey percent-encodes the bytes of an extra key that may not
// appear in a header name, and '%' itself, so that the receiving server's
// unescaping gives the key back.
func escapeExtraKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '%' || !tokenByte(c) {
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// tokenByte reports whether c may appear in a header name (an RFC 7230
// token).
func tokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

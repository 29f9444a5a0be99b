package security

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"

	"platd/config"
)

// NewTokenFile returns a TokenAuthenticator over the static token file
// records. Lookup is an exact match; a later record with the same token
// replaces an earlier one. The records are copied.
func NewTokenFile(tokens []config.Token) TokenAuthenticator {
	m := make(tokenFile, len(tokens))
	for _, t := range tokens {
		if t.Token == "" {
			continue
		}
		m[t.Token] = &User{Name: t.User, UID: t.UID, Groups: append([]string(nil), t.Groups...)}
	}
	return m
}

type tokenFile map[string]*User

func (f tokenFile) AuthenticateToken(_ context.Context, token string) (*User, bool, error) {
	u, ok := f[token]
	if !ok {
		return nil, false, nil
	}
	return u.clone(), true, nil
}

// loopbackToken authenticates the server's own client. The comparison is
// constant-time because the token grants full privileges.
type loopbackToken struct {
	token string
	uid   string
}

func newLoopbackToken(token string) loopbackToken {
	return loopbackToken{token: token, uid: randomUUID()}
}

func (l loopbackToken) AuthenticateToken(_ context.Context, token string) (*User, bool, error) {
	if subtle.ConstantTimeCompare([]byte(token), []byte(l.token)) != 1 {
		return nil, false, nil
	}
	return &User{Name: APIServerUser, UID: l.uid, Groups: []string{AllAuthenticated, SystemPrivilegedGroup}}, true, nil
}

// randomUUID returns a random version-4 UUID in its canonical text form.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

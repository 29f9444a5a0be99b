package security

import (
	"context"
	"crypto/subtle"

	"platd/config"
	"platd/uuid"
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
	return loopbackToken{token: token, uid: uuid.New()}
}

func (l loopbackToken) AuthenticateToken(_ context.Context, token string) (*User, bool, error) {
	if subtle.ConstantTimeCompare([]byte(token), []byte(l.token)) != 1 {
		return nil, false, nil
	}
	return &User{Name: APIServerUser, UID: l.uid, Groups: []string{AllAuthenticated, SystemPrivilegedGroup}}, true, nil
}

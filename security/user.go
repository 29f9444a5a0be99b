package security

import "slices"

// Well-known user and group names. They are the same in every brand.
const (
	// Anonymous is the user name of requests without credentials.
	Anonymous = "system:anonymous"
	// AllUnauthenticated is the group of anonymous requests.
	AllUnauthenticated = "system:unauthenticated"
	// AllAuthenticated is the group added to every authenticated user.
	AllAuthenticated = "system:authenticated"
	// SystemPrivilegedGroup members bypass authorization.
	SystemPrivilegedGroup = "system:masters"
	// APIServerUser is the identity of the server's own loopback client.
	APIServerUser = "system:apiserver"
)

// User is an authenticated identity. A User returned by an Authenticator is
// owned by the caller; authenticators never hand out a value they keep.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
	// Audiences, set by authenticators that check them, are those of the
	// requested audiences the credential is valid for. They describe the
	// credential, not the identity: impersonation and reviews of the user
	// leave them out.
	Audiences []string
}

// InGroup reports whether the user is a member of group.
func (u *User) InGroup(group string) bool {
	return u != nil && slices.Contains(u.Groups, group)
}

// IsAnonymous reports whether u is the anonymous identity, by name or by
// the unauthenticated group.
func (u *User) IsAnonymous() bool {
	return u != nil && (u.Name == Anonymous || u.InGroup(AllUnauthenticated))
}

// clone returns a copy that shares nothing mutable with u.
func (u *User) clone() *User {
	c := &User{Name: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups), Audiences: slices.Clone(u.Audiences)}
	if u.Extra != nil {
		c.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			c.Extra[k] = slices.Clone(v)
		}
	}
	return c
}

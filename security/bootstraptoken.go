package security

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Bootstrap token secret data keys and names. They are the same in every
// brand; only the secret type and the namespace are branded.
const (
	BootstrapTokenIDKey          = "token-id"
	BootstrapTokenSecretKey      = "token-secret"
	BootstrapTokenExpirationKey  = "expiration"
	BootstrapTokenDescriptionKey = "description"
	BootstrapTokenExtraGroupsKey = "auth-extra-groups"
	// BootstrapTokenUsagePrefix starts every usage key; a usage is on
	// when its key holds exactly "true".
	BootstrapTokenUsagePrefix = "usage-bootstrap-"
	BootstrapUsageSigning     = "signing"
	BootstrapUsageAuth        = "authentication"

	// BootstrapTokenSecretPrefix names a token's secret: the prefix and
	// the token id.
	BootstrapTokenSecretPrefix = "bootstrap-token-"
	// BootstrapUserPrefix and the token id name the authenticated user.
	BootstrapUserPrefix = "system:bootstrap:"
	// BootstrapDefaultGroup is the group of every bootstrap token user.
	BootstrapDefaultGroup = "system:bootstrappers"
	// BootstrapGroupPattern is what an auth-extra-groups entry must match.
	BootstrapGroupPattern = `\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`
	// BootstrapTokenIDPattern and BootstrapTokenPattern are the formats
	// of a token id and of a whole token.
	BootstrapTokenIDPattern = `\A([a-z0-9]{6})\z`
	BootstrapTokenPattern   = `\A([a-z0-9]{6})\.([a-z0-9]{16})\z`
)

// KnownBootstrapUsages lists the usages a token can be given.
var KnownBootstrapUsages = []string{BootstrapUsageSigning, BootstrapUsageAuth}

// Lengths of a token's two halves.
const (
	bootstrapIDLen     = 6
	bootstrapSecretLen = 16
)

// ParseBootstrapToken splits a token of the form <id>.<secret> (six and
// sixteen characters of [a-z0-9]) and reports whether it has that form.
func ParseBootstrapToken(token string) (id, secret string, ok bool) {
	if len(token) != bootstrapIDLen+1+bootstrapSecretLen || token[bootstrapIDLen] != '.' {
		return "", "", false
	}
	id, secret = token[:bootstrapIDLen], token[bootstrapIDLen+1:]
	if !ValidBootstrapTokenID(id) || !ValidBootstrapTokenSecret(secret) {
		return "", "", false
	}
	return id, secret, true
}

// ValidBootstrapTokenID reports whether id is six characters of [a-z0-9].
func ValidBootstrapTokenID(id string) bool { return len(id) == bootstrapIDLen && lowerAlnum(id) }

// ValidBootstrapTokenSecret reports whether s is sixteen characters of
// [a-z0-9].
func ValidBootstrapTokenSecret(s string) bool {
	return len(s) == bootstrapSecretLen && lowerAlnum(s)
}

func lowerAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// BootstrapTokenSecretName is the name of the secret holding token id.
func BootstrapTokenSecretName(id string) string { return BootstrapTokenSecretPrefix + id }

// ParseBootstrapTokenSecretName returns the token id a secret name
// carries, and whether the name has the bootstrap-token-<id> form.
func ParseBootstrapTokenSecretName(name string) (string, bool) {
	id, ok := strings.CutPrefix(name, BootstrapTokenSecretPrefix)
	if !ok || !ValidBootstrapTokenID(id) {
		return "", false
	}
	return id, true
}

// BootstrapTokenExpiration reads an expiration value at now: absent ("")
// never expires; an unparseable value counts as expired; otherwise the
// token is expired once no time remains. remaining is zero when expired
// or when there is no expiration.
func BootstrapTokenExpiration(value string, now time.Time) (remaining time.Duration, expired bool) {
	if value == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return 0, true
	}
	remaining = t.Sub(now)
	if remaining <= 0 {
		return 0, true
	}
	return remaining, false
}

// ValidateBootstrapGroup checks an auth-extra-groups entry.
func ValidateBootstrapGroup(g string) error {
	rest, ok := strings.CutPrefix(g, BootstrapDefaultGroup+":")
	valid := ok && len(rest) >= 1 && len(rest) <= 256 && lowerAlnum(rest[len(rest)-1:])
	for i := 0; valid && i < len(rest); i++ {
		c := rest[i]
		valid = c == ':' || c == '-' || lowerAlnum(rest[i:i+1])
	}
	if !valid {
		return fmt.Errorf("bootstrap group %q is invalid (must match %s)", g, BootstrapGroupPattern)
	}
	return nil
}

// BootstrapTokenGroups returns the groups of a token user: the default
// group and each entry of the comma-separated extra list, without
// duplicates and sorted. An invalid entry is an error.
func BootstrapTokenGroups(extra string) ([]string, error) {
	groups := []string{BootstrapDefaultGroup}
	if extra != "" {
		for _, g := range strings.Split(extra, ",") {
			if err := ValidateBootstrapGroup(g); err != nil {
				return nil, err
			}
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), nil
}

// BootstrapTokenSecret is what the authenticator reads of a bootstrap
// token secret.
type BootstrapTokenSecret struct {
	// Type is the secret's type.
	Type string
	// Deleting is true once the secret has a deletion timestamp.
	Deleting bool
	// Data holds the decoded data; nil when the secret has none.
	Data map[string][]byte
}

// BootstrapTokenSecrets finds bootstrap token secrets by name in the
// system namespace. It returns nil and no error when there is no such
// secret. It is called concurrently.
type BootstrapTokenSecrets interface {
	BootstrapTokenSecret(ctx context.Context, name string) (*BootstrapTokenSecret, error)
}

// NewBootstrapTokenAuthenticator authenticates bootstrap tokens against
// their secrets, of type secretType. Every rejection is silent (ok=false
// and no error, logged at debug level) so that the bearer union answers
// with its own error; only a failed lookup is an error. now is the clock
// (time.Now when nil).
func NewBootstrapTokenAuthenticator(secrets BootstrapTokenSecrets, secretType string, now func() time.Time, log *slog.Logger) TokenAuthenticator {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &bootstrapTokens{secrets: secrets, secretType: secretType, now: now, log: log}
}

type bootstrapTokens struct {
	secrets    BootstrapTokenSecrets
	secretType string
	now        func() time.Time
	log        *slog.Logger
}

func (b *bootstrapTokens) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	id, secret, ok := ParseBootstrapToken(token)
	if !ok {
		return nil, false, nil
	}
	name := BootstrapTokenSecretName(id)
	s, err := b.secrets.BootstrapTokenSecret(ctx, name)
	if err != nil {
		return nil, false, fmt.Errorf("reading bootstrap token secret %s: %w", name, err)
	}
	reject := func(why string) (*User, bool, error) {
		b.log.Debug("bootstrap token rejected", "secret", name, "reason", why)
		return nil, false, nil
	}
	switch {
	case s == nil:
		return reject("no secret")
	case s.Deleting:
		return reject("secret is being deleted")
	case s.Type != b.secretType || s.Data == nil:
		return reject("secret has the wrong type or no data")
	case subtle.ConstantTimeCompare(s.Data[BootstrapTokenSecretKey], []byte(secret)) != 1:
		return reject("token secret does not match")
	case string(s.Data[BootstrapTokenIDKey]) != id:
		return reject("token id does not match")
	}
	if _, expired := BootstrapTokenExpiration(string(s.Data[BootstrapTokenExpirationKey]), b.now()); expired {
		return reject("expired")
	}
	if string(s.Data[BootstrapTokenUsagePrefix+BootstrapUsageAuth]) != "true" {
		return reject("not usable for authentication")
	}
	groups, err := BootstrapTokenGroups(string(s.Data[BootstrapTokenExtraGroupsKey]))
	if err != nil {
		return reject(err.Error())
	}
	return &User{Name: BootstrapUserPrefix + id, Groups: groups}, true, nil
}

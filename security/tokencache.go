package security

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"
	"time"
)

// maxCachedTokens bounds a token cache. Past it, expired entries are
// dropped, and if that is not enough the cache is emptied: the cost is
// only repeated lookups, never a wrong answer.
const maxCachedTokens = 4096

// NewCachedTokenAuthenticator remembers next's answers per token and
// request audiences: acceptances for successTTL, rejections without error
// for failureTTL (a TTL of zero caches nothing of that kind). Errors are
// never cached. Concurrent lookups of the same key share one call to next.
// Cache keys are keyed hashes, so the cache never holds a token.
func NewCachedTokenAuthenticator(next TokenAuthenticator, successTTL, failureTTL time.Duration) TokenAuthenticator {
	return newTokenCache(next, successTTL, failureTTL, time.Now)
}

type tokenCacheKey [sha256.Size]byte

type tokenCacheEntry struct {
	user    *User
	ok      bool
	expires time.Time
}

type tokenCall struct {
	done chan struct{}
	user *User
	ok   bool
	err  error
}

type tokenCache struct {
	next                   TokenAuthenticator
	successTTL, failureTTL time.Duration
	now                    func() time.Time
	mac                    sync.Pool

	mu       sync.Mutex
	entries  map[tokenCacheKey]tokenCacheEntry
	inflight map[tokenCacheKey]*tokenCall
}

func newTokenCache(next TokenAuthenticator, successTTL, failureTTL time.Duration, now func() time.Time) *tokenCache {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	c := &tokenCache{
		next: next, successTTL: successTTL, failureTTL: failureTTL, now: now,
		entries: map[tokenCacheKey]tokenCacheEntry{}, inflight: map[tokenCacheKey]*tokenCall{},
	}
	c.mac.New = func() any { return hmac.New(sha256.New, secret) }
	return c
}

// key hashes the length-prefixed token, the number of audiences and each
// length-prefixed audience, so no two inputs share a key by concatenation.
func (c *tokenCache) key(token string, auds []string) tokenCacheKey {
	h := c.mac.Get().(hash.Hash)
	defer c.mac.Put(h)
	h.Reset()
	var n [8]byte
	put := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(token)
	binary.BigEndian.PutUint64(n[:], uint64(len(auds)))
	h.Write(n[:])
	for _, a := range auds {
		put(a)
	}
	var k tokenCacheKey
	h.Sum(k[:0])
	return k
}

func (c *tokenCache) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	auds, _ := AudiencesFrom(ctx)
	k := c.key(token, auds)
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		if c.now().Before(e.expires) {
			c.mu.Unlock()
			return cloneUser(e.user), e.ok, nil
		}
		delete(c.entries, k)
	}
	if call, ok := c.inflight[k]; ok {
		c.mu.Unlock()
		select {
		case <-call.done:
			return cloneUser(call.user), call.ok, call.err
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	call := &tokenCall{done: make(chan struct{})}
	c.inflight[k] = call
	c.mu.Unlock()

	// The lookup serves every caller waiting on it, so one client going
	// away must not fail the others: it runs detached from the first
	// caller's cancellation, bounded by the authenticator's own timeouts.
	call.user, call.ok, call.err = c.next.AuthenticateToken(context.WithoutCancel(ctx), token)
	if !call.ok {
		call.user = nil
	}
	c.mu.Lock()
	delete(c.inflight, k)
	ttl := c.failureTTL
	if call.ok {
		ttl = c.successTTL
	}
	if call.err == nil && ttl > 0 {
		c.store(k, tokenCacheEntry{user: cloneUser(call.user), ok: call.ok, expires: c.now().Add(ttl)})
	}
	c.mu.Unlock()
	close(call.done)
	return cloneUser(call.user), call.ok, call.err
}

// store adds e; the caller holds mu.
func (c *tokenCache) store(k tokenCacheKey, e tokenCacheEntry) {
	if len(c.entries) >= maxCachedTokens {
		now := c.now()
		for key, old := range c.entries {
			if !now.Before(old.expires) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= maxCachedTokens {
			clear(c.entries)
		}
	}
	c.entries[k] = e
}

func cloneUser(u *User) *User {
	if u == nil {
		return nil
	}
	return u.clone()
}

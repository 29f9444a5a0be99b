// Package encrypt is encryption at rest: the providers of an
// EncryptionConfiguration (aesgcm, aescbc, secretbox, identity), chosen per
// resource, as a transformer of the values the storage engine writes.
//
// A stored value is the brand's prefix, the provider and version, the key
// name, then the provider's output: "k8s:enc:aesgcm:v1:key1:" + nonce +
// ciphertext, as upstream writes it, so a value reads the same in both.
package encrypt

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"platd/config"
)

// Observer is told of every transformation: op is "to_storage" or
// "from_storage", resource the key's resource ("secrets",
// "deployments.apps"), prefix the provider's prefix
// ("k8s:enc:aesgcm:v1:", "" for identity), err its outcome. It must be
// cheap and safe for concurrent use.
type Observer func(op, resource, prefix string, err error)

// Transformer encrypts and decrypts stored values by their key's resource.
// Keys are storage keys ("/secrets/ns/name", "/deployments.apps/ns/name"):
// their first segment is the resource as the configuration spells it. It
// satisfies bolt.Transformer and is safe for concurrent use.
type Transformer struct {
	brandPrefix []byte
	observe     Observer
	// mu guards cfg and chains, which Swap replaces together. chains
	// caches the chain of each resource segment; every segment maps to a
	// chain (for uncovered resources, one that only reads plain values).
	mu     sync.RWMutex
	cfg    *config.EncryptionConfiguration
	chains map[string]*chain
}

// chain is the keys of a resource's providers, in order: the first
// writes, all are tried for reads by prefix.
type chain struct {
	keys []keyed
}

// uncovered is the chain of resources the configuration does not name:
// values stay plain, and an encrypted one is an error.
var uncovered = &chain{keys: []keyed{{provider: config.ProviderIdentity}}}

// New builds the transformer of a validated configuration. It fails only
// for keys a provider refuses (which validation already rules out).
func New(cfg *config.EncryptionConfiguration, b config.Brand, observe Observer) (*Transformer, error) {
	t := &Transformer{brandPrefix: []byte(b.StorageValuePrefix), observe: observe}
	if err := t.Swap(cfg); err != nil {
		return nil, err
	}
	return t, nil
}

// Swap makes cfg the configuration of later transformations (a reloaded
// file). Every listed resource's chain is built first, so a bad key
// leaves the old configuration in place.
func (t *Transformer) Swap(cfg *config.EncryptionConfiguration) error {
	chains := map[string]*chain{}
	for _, rc := range cfg.Resources {
		for _, r := range rc.Resources {
			g, res := config.GroupResource(r)
			c, err := t.build(cfg, g, res)
			if err != nil {
				return fmt.Errorf("%w: %v", config.ErrEncryptionConfig, err)
			}
			if g != "*" && res != "*" {
				chains[r] = c
			}
		}
	}
	t.mu.Lock()
	t.cfg, t.chains = cfg, chains
	t.mu.Unlock()
	return nil
}

func (t *Transformer) build(cfg *config.EncryptionConfiguration, group, resource string) (*chain, error) {
	providers, ok := cfg.ProvidersFor(group, resource)
	if !ok {
		return uncovered, nil
	}
	c := &chain{}
	for _, p := range providers {
		keys, err := keysOf(p, string(t.brandPrefix))
		if err != nil {
			return nil, err
		}
		c.keys = append(c.keys, keys...)
	}
	return c, nil
}

// chainOf returns key's resource and its chain.
func (t *Transformer) chainOf(key string) (string, *chain, error) {
	seg := segment(key)
	t.mu.RLock()
	c := t.chains[seg]
	t.mu.RUnlock()
	if c != nil {
		return seg, c, nil
	}
	g, r := config.GroupResource(seg)
	t.mu.Lock()
	defer t.mu.Unlock()
	c, err := t.build(t.cfg, g, r)
	if err != nil {
		return seg, nil, err
	}
	t.chains[seg] = c
	return seg, c, nil
}

// segment is the first segment of a storage key: "secrets" of
// "/secrets/ns/name".
func segment(key string) string {
	k := strings.TrimPrefix(key, "/")
	if i := strings.IndexByte(k, '/'); i >= 0 {
		return k[:i]
	}
	return k
}

// ToStorage encrypts value with the first provider of key's resource.
func (t *Transformer) ToStorage(key string, value []byte) ([]byte, error) {
	res, c, err := t.chainOf(key)
	if err != nil {
		return nil, err
	}
	k := &c.keys[0]
	if k.s == nil {
		t.record("to_storage", res, k, nil)
		return value, nil
	}
	dst := make([]byte, len(k.prefix), len(k.prefix)+len(value)+64)
	copy(dst, k.prefix)
	out, err := k.s.seal(dst, value, []byte(key))
	t.record("to_storage", res, k, err)
	return out, err
}

// FromStorage decrypts stored with the first provider whose prefix it
// carries; stale says it is not the provider that writes. The identity
// provider matches every value but steps aside for an encrypted one, so a
// chain listing identity first still reads values encrypted before it was
// put there.
func (t *Transformer) FromStorage(key string, stored []byte) ([]byte, bool, error) {
	res, c, err := t.chainOf(key)
	if err != nil {
		return nil, false, err
	}
	// Several keys may share a prefix (a key name reused across the
	// lists naming a resource): one that fails to open the value leaves
	// it to the next, as upstream never stops at a failed match.
	var failed error
	for i := range c.keys {
		k := &c.keys[i]
		if k.s == nil {
			if bytes.HasPrefix(stored, t.brandPrefix) {
				if c == uncovered {
					t.record("from_storage", res, k, ErrEncryptedData)
					return nil, false, ErrEncryptedData
				}
				continue
			}
			t.record("from_storage", res, k, nil)
			return slices.Clone(stored), i != 0, nil
		}
		if bytes.HasPrefix(stored, k.prefix) {
			out, err := k.s.open(stored[len(k.prefix):], []byte(key))
			t.record("from_storage", res, k, err)
			if err != nil {
				if failed == nil {
					failed = err
				}
				continue
			}
			return out, i != 0, nil
		}
	}
	if failed != nil {
		return nil, false, failed
	}
	return nil, false, ErrNoMatch
}

// StaleStored reports, from its prefix alone, whether stored (the bytes
// of key in the file) was written by another provider or key than the
// one that writes now: a rewrite would change it. Cheap, so a reload can
// look at every stored value.
func (t *Transformer) StaleStored(key string, stored []byte) bool {
	_, c, err := t.chainOf(key)
	if err != nil {
		return false
	}
	if k := &c.keys[0]; k.s != nil {
		return !bytes.HasPrefix(stored, k.prefix)
	}
	return bytes.HasPrefix(stored, t.brandPrefix)
}

func (t *Transformer) record(op, resource string, k *keyed, err error) {
	if t.observe != nil {
		t.observe(op, resource, k.label, err)
	}
}

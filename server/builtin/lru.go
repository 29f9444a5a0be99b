package builtin

import (
	"container/list"
	"sync"
)

// lru holds the values of at most size keys, dropping the least recently
// used key when a new one comes: the bounded caches of admission plugins
// (EventRateLimit's buckets, ImagePolicyWebhook's answers). Safe for
// concurrent use.
type lru[V any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *lruEntry[V], most recently used first
	byKey map[string]*list.Element
}

type lruEntry[V any] struct {
	key   string
	value V
}

func newLRU[V any](size int) *lru[V] {
	return &lru[V]{size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns key's value, now the most recently used.
func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*lruEntry[V]).value, true
	}
	var zero V
	return zero, false
}

// getOrAdd returns key's value, made by make and added when the cache
// has none, in one step: two callers of a new key get the same value.
func (c *lru[V]) getOrAdd(key string, make func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*lruEntry[V]).value
	}
	v := make()
	c.addLocked(key, v)
	return v
}

// add sets key's value, the most recently used.
func (c *lru[V]) add(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value.(*lruEntry[V]).value = v
		c.order.MoveToFront(el)
		return
	}
	c.addLocked(key, v)
}

func (c *lru[V]) addLocked(key string, v V) {
	c.byKey[key] = c.order.PushFront(&lruEntry[V]{key: key, value: v})
	for c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*lruEntry[V]).key)
	}
}

// remove drops key.
func (c *lru[V]) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.Remove(el)
		delete(c.byKey, key)
	}
}

// len is the number of keys held.
func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

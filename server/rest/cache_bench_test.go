package rest

import (
	"fmt"
	"testing"
)

// BenchmarkWatchCaches measures what watchers of one resource share: the
// lookups and additions of the event encoding cache, and the conversion
// cache when a state is already converted (hit) and when each state is
// new (miss, the conversion itself included).
func BenchmarkWatchCaches(b *testing.B) {
	keys := make([]eventKey, 2*eventCacheSize)
	for i := range keys {
		keys[i] = eventKey{key: fmt.Sprintf("/ns/a%d", i), rev: int64(i + 1)}
	}
	enc := make([]byte, 512)
	b.Run("events/hit", func(b *testing.B) {
		c := newEventCache()
		for _, k := range keys[:eventCacheSize] {
			c.put(k, enc)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, ok := c.get(keys[i%eventCacheSize]); !ok {
				b.Fatal("not cached")
			}
		}
	})
	b.Run("events/put", func(b *testing.B) {
		c := newEventCache()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			c.put(keys[i%len(keys)], enc)
		}
	})
	b.Run("events/parallel", func(b *testing.B) {
		c := newEventCache()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				k := keys[i%len(keys)]
				if _, ok := c.get(k); !ok {
					c.put(k, enc)
				}
				i++
			}
		})
	})

	_, v2 := versionedDescriptors(&countingConverter{})
	const states = 1024
	stored := make([][]byte, states)
	for i := range stored {
		stored[i] = fmt.Appendf(nil, `{"metadata":{"name":"a%d","resourceVersion":"%d"},"spec":"x","apiVersion":"g/v1"}`, i, i+1)
	}
	b.Run("conversions/hit", func(b *testing.B) {
		c := newConversionCache()
		for i, s := range stored {
			if _, err := c.inVersion(v2, keys[i].key, keys[i].rev, s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			j := i % states
			if _, err := c.inVersion(v2, keys[j].key, keys[j].rev, stored[j]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("conversions/miss", func(b *testing.B) {
		c := newConversionCache()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			j := i % states
			if _, err := c.inVersion(v2, keys[j].key, int64(i+1), stored[j]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

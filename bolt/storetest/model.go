package storetest

import (
	"slices"
	"strings"
	"testing"

	"platd/bolt"
)

// model mirrors the expected state of a store and remembers it at every
// revision it saw, so lists at past revisions can be checked exactly.
type model struct {
	cur   map[string]bolt.KV
	snaps map[int64]map[string]bolt.KV
}

func newModel() *model {
	return &model{cur: map[string]bolt.KV{}, snaps: map[int64]map[string]bolt.KV{}}
}

// put records a create or update returned by the store.
func (m *model) put(kv bolt.KV) { m.cur[kv.Key] = kv; m.snap(kv.ModRevision) }

// del records a delete returned by the store.
func (m *model) del(kv bolt.KV) { delete(m.cur, kv.Key); m.snap(kv.ModRevision) }

func (m *model) snap(rev int64) {
	c := make(map[string]bolt.KV, len(m.cur))
	for k, v := range m.cur {
		c[k] = v
	}
	m.snaps[rev] = c
}

// list is the expected, sorted content under prefix at rev (0: current).
func (m *model) list(t *testing.T, prefix string, rev int64) []bolt.KV {
	t.Helper()
	state := m.cur
	if rev != 0 {
		var ok bool
		if state, ok = m.snaps[rev]; !ok {
			t.Fatalf("model has no snapshot at %d", rev)
		}
	}
	var out []bolt.KV
	for k, v := range state {
		if strings.HasPrefix(k, prefix) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b bolt.KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// revisions is every revision the model saw, ascending.
func (m *model) revisions() []int64 {
	var out []int64
	for r := range m.snaps {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

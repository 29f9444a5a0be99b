package bolt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestIndexAgainstModel applies random puts and removes to the index and
// to a sorted slice, and compares every query after each step.
func TestIndexAgainstModel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		keys  int
		steps int
	}{
		{"few keys", 10, 300},
		{"several chunks", 3 * chunkMax, 4000},
		{"many chunks", 20 * chunkMax, 12000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(tc.keys), 7))
			ix := newIndex()
			model := map[string]int64{}
			for step := 1; step <= tc.steps; step++ {
				key := fmt.Sprintf("/r/ns%d/k%05d", rng.IntN(4), rng.IntN(tc.keys))
				if rng.IntN(3) == 0 {
					ix.remove(key)
					delete(model, key)
				} else {
					ix.put(KV{Key: key, ModRevision: int64(step)})
					model[key] = int64(step)
				}
				if step%97 == 0 || step == tc.steps {
					compareIndex(t, ix, model, rng)
				}
			}
		})
	}
}

func compareIndex(t *testing.T, ix *index, model map[string]int64, rng *rand.Rand) {
	t.Helper()
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if ix.len() != len(keys) {
		t.Fatalf("len %d, want %d", ix.len(), len(keys))
	}
	for ci, ch := range ix.chunks {
		if len(ch) == 0 || len(ch) > chunkMax {
			t.Fatalf("chunk %d has %d entries", ci, len(ch))
		}
	}
	var all []string
	ix.ascend("", func(kv *KV) bool {
		if kv.ModRevision != model[kv.Key] {
			t.Fatalf("%s at %d, want %d", kv.Key, kv.ModRevision, model[kv.Key])
		}
		all = append(all, kv.Key)
		return true
	})
	if !slices.Equal(all, keys) {
		t.Fatalf("ascend order differs from the model")
	}
	// Ranges between any two keys, present or not, across chunks or
	// within one.
	for range 20 {
		from := fmt.Sprintf("/r/ns%d/k%05d", rng.IntN(5), rng.IntN(20*chunkMax))
		to := fmt.Sprintf("/r/ns%d/k%05d", rng.IntN(5), rng.IntN(20*chunkMax))
		want := 0
		for _, k := range keys {
			if from <= k && k < to {
				want++
			}
		}
		if n := ix.countRange(from, to); n != want {
			t.Fatalf("countRange [%s, %s) = %d, want %d", from, to, n, want)
		}
	}
	for _, prefix := range []string{"/", "/r/", "/r/ns0/", "/r/ns3/", "/r/ns9/"} {
		end := prefixEnd(prefix)
		var want []string
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		if n := ix.countRange(prefix, end); n != len(want) {
			t.Fatalf("countRange %s = %d, want %d", prefix, n, len(want))
		}
		limit := rng.IntN(len(want) + 2)
		got, more := ix.appendRange(nil, prefix, end, limit)
		wantPage := want
		if limit > 0 && limit < len(want) {
			wantPage = want[:limit]
		}
		if !slices.Equal(keysOfKVs(got), wantPage) || more != (limit > 0 && limit < len(want)) {
			t.Fatalf("appendRange %s limit %d: %d keys more=%v, want %d", prefix, limit, len(got), more, len(wantPage))
		}
	}
}

func keysOfKVs(kvs []KV) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}

func TestIndexAppendSortedThenInsert(t *testing.T) {
	t.Parallel()
	ix := newIndex()
	model := map[string]int64{}
	for i := 0; i < 5*chunkMax; i += 2 {
		k := fmt.Sprintf("/k/%06d", i)
		ix.appendSorted(KV{Key: k, ModRevision: 1})
		model[k] = 1
	}
	ix.mapKeys()
	for i := 1; i < 5*chunkMax; i += 2 {
		k := fmt.Sprintf("/k/%06d", i)
		ix.put(KV{Key: k, ModRevision: 2})
		model[k] = 2
	}
	compareIndex(t, ix, model, rand.New(rand.NewPCG(1, 1)))
}

package bolt

import (
	"errors"
	"testing"
)

func TestEventRecordRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ev     Event
		joined bool
	}{
		{"create", Event{Type: Put, Revision: 7, KV: KV{Key: "/a/b", Value: []byte("v@7"), CreateRevision: 7, ModRevision: 7}}, false},
		{"update", Event{Type: Put, Revision: 9, KV: KV{Key: "/a/b", Value: []byte("w@9"), CreateRevision: 7, ModRevision: 9},
			Prev: &KV{Key: "/a/b", Value: []byte("v@7"), CreateRevision: 7, ModRevision: 7}}, false},
		{"delete", Event{Type: Delete, Revision: 1 << 40, KV: KV{Key: "/a/b", Value: []byte{}, CreateRevision: 7, ModRevision: 1 << 40},
			Prev: &KV{Key: "/a/b", Value: nil, CreateRevision: 7, ModRevision: 9}}, false},
		{"create in a transaction", Event{Type: Put, Revision: 8, KV: KV{Key: "/a/c", Value: []byte("v@8"), CreateRevision: 8, ModRevision: 8}}, true},
		{"delete in a transaction", Event{Type: Delete, Revision: 10, KV: KV{Key: "/a/b", Value: []byte("w@10"), CreateRevision: 7, ModRevision: 10},
			Prev: &KV{Key: "/a/b", Value: []byte("w@9"), CreateRevision: 7, ModRevision: 9}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := appendEvent(nil, &tc.ev, 12345, tc.joined)
			h, err := decodeEvent(tc.ev.Revision, rec)
			if err != nil {
				t.Fatal(err)
			}
			got := h.Event
			if h.at != 12345 || h.joined != tc.joined || got.Type != tc.ev.Type || !sameKV(&got.KV, &tc.ev.KV) {
				t.Fatalf("decoded %+v at %d joined %v, want %+v", got, h.at, h.joined, tc.ev)
			}
			if (got.Prev == nil) != (tc.ev.Prev == nil) || (got.Prev != nil && !sameKV(got.Prev, tc.ev.Prev)) {
				t.Fatalf("prev %+v, want %+v", got.Prev, tc.ev.Prev)
			}
			for cut := 0; cut < len(rec); cut++ {
				if tc.ev.Prev != nil && cut >= len(rec)-len(tc.ev.Prev.Value) {
					break // a shorter previous value is still well formed
				}
				if _, err := decodeEvent(tc.ev.Revision, rec[:cut]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("truncated to %d: error %v", cut, err)
				}
			}
			if _, err := decodeEvent(tc.ev.Revision+1, rec); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("record under the wrong revision: %v", err)
			}
		})
	}
}

func TestStateRecordRoundTrip(t *testing.T) {
	t.Parallel()
	kv := KV{Key: "/x/y", Value: []byte(`{"a":1}`), CreateRevision: 3, ModRevision: 300}
	got, err := decodeState(kv.Key, appendState(nil, &kv))
	if err != nil || !sameKV(&got, &kv) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := decodeState("/x/y", []byte{0x80}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated state: %v", err)
	}
}

func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	tests := []struct{ prefix, end string }{
		{"/", "0"},
		{"/pods/", "/pods0"},
		{"/pods/ns/", "/pods/ns0"},
	}
	for _, tc := range tests {
		if got := prefixEnd(tc.prefix); got != tc.end {
			t.Errorf("prefixEnd(%q) = %q, want %q", tc.prefix, got, tc.end)
		}
		if !(tc.prefix+"\xff" < prefixEnd(tc.prefix)) {
			t.Errorf("%q: keys under the prefix sort after its end", tc.prefix)
		}
	}
}

// FuzzDecodeEvent feeds arbitrary records to the decoder: it must refuse
// them with ErrCorrupt or return an event that encodes back to the same.
func FuzzDecodeEvent(f *testing.F) {
	prev := &KV{Key: "/a/b", Value: []byte("v@7"), CreateRevision: 7, ModRevision: 7}
	for _, seed := range []struct {
		ev     Event
		joined bool
	}{
		{Event{Type: Put, Revision: 7, KV: KV{Key: "/a/b", Value: []byte("v@7"), CreateRevision: 7, ModRevision: 7}}, false},
		{Event{Type: Put, Revision: 9, KV: KV{Key: "/a/b", Value: []byte("w@9"), CreateRevision: 7, ModRevision: 9}, Prev: prev}, true},
		{Event{Type: Delete, Revision: 9, KV: KV{Key: "/a/b", Value: []byte("v@9"), CreateRevision: 7, ModRevision: 9}, Prev: prev}, false},
	} {
		f.Add(seed.ev.Revision, appendEvent(nil, &seed.ev, 1234, seed.joined))
	}
	f.Fuzz(func(t *testing.T, rev int64, rec []byte) {
		h, err := decodeEvent(rev, rec)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := decodeEvent(rev, appendEvent(nil, &h.Event, h.at, h.joined))
		if err != nil {
			t.Fatalf("re-encoded event does not decode: %v", err)
		}
		if again.at != h.at || again.joined != h.joined || again.Type != h.Type || !sameKV(&again.KV, &h.KV) ||
			(again.Prev == nil) != (h.Prev == nil) || (h.Prev != nil && !sameKV(again.Prev, h.Prev)) {
			t.Fatalf("round trip changed %+v into %+v", h, again)
		}
	})
}

package bolt

import (
	"errors"
	"testing"
)

func TestEventRecordRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   Event
	}{
		{"create", Event{Type: Put, Revision: 7, KV: KV{Key: "/a/b", Value: []byte("v@7"), CreateRevision: 7, ModRevision: 7}}},
		{"update", Event{Type: Put, Revision: 9, KV: KV{Key: "/a/b", Value: []byte("w@9"), CreateRevision: 7, ModRevision: 9},
			Prev: &KV{Key: "/a/b", Value: []byte("v@7"), CreateRevision: 7, ModRevision: 7}}},
		{"delete", Event{Type: Delete, Revision: 1 << 40, KV: KV{Key: "/a/b", Value: []byte{}, CreateRevision: 7, ModRevision: 1 << 40},
			Prev: &KV{Key: "/a/b", Value: nil, CreateRevision: 7, ModRevision: 9}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := appendEvent(nil, &tc.ev, 12345)
			got, at, err := decodeEvent(tc.ev.Revision, rec)
			if err != nil {
				t.Fatal(err)
			}
			if at != 12345 || got.Type != tc.ev.Type || !sameKV(&got.KV, &tc.ev.KV) {
				t.Fatalf("decoded %+v at %d, want %+v", got, at, tc.ev)
			}
			if (got.Prev == nil) != (tc.ev.Prev == nil) || (got.Prev != nil && !sameKV(got.Prev, tc.ev.Prev)) {
				t.Fatalf("prev %+v, want %+v", got.Prev, tc.ev.Prev)
			}
			for cut := 0; cut < len(rec); cut++ {
				if tc.ev.Prev != nil && cut >= len(rec)-len(tc.ev.Prev.Value) {
					break // a shorter previous value is still well formed
				}
				if _, _, err := decodeEvent(tc.ev.Revision, rec[:cut]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("truncated to %d: error %v", cut, err)
				}
			}
			if _, _, err := decodeEvent(tc.ev.Revision+1, rec); !errors.Is(err, ErrCorrupt) {
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

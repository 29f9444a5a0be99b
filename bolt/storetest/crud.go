package storetest

import (
	"context"
	"testing"

	"platd/bolt"
)

func testCreateGet(t *testing.T, h Harness) {
	s := h.Store
	base := s.Revision()
	kv := mustCreate(t, s, "/things/ns/a", "alpha")
	if kv.ModRevision <= base || kv.CreateRevision != kv.ModRevision {
		t.Fatalf("created at %d/%d, base %d", kv.CreateRevision, kv.ModRevision, base)
	}
	if got, want := string(kv.Value), stamped("alpha", kv.ModRevision); got != want {
		t.Fatalf("value %q, want %q", got, want)
	}
	if s.Revision() != kv.ModRevision {
		t.Fatalf("Revision %d, want %d", s.Revision(), kv.ModRevision)
	}
	got, err := s.Get("/things/ns/a")
	if err != nil {
		t.Fatal(err)
	}
	sameKVs(t, "Get", []bolt.KV{got}, []bolt.KV{kv})

	_, err = s.Create(ctx(t), "/things/ns/a", []byte("again"))
	wantErr(t, "second Create", err, bolt.ErrExists)
	if s.Revision() != kv.ModRevision {
		t.Fatalf("failed Create consumed a revision: %d", s.Revision())
	}
	_, err = s.Get("/things/ns/missing")
	wantErr(t, "Get missing", err, bolt.ErrNotFound)
	if n := s.Count("/things/"); n != 1 {
		t.Fatalf("Count %d, want 1", n)
	}
}

func testUpdate(t *testing.T, h Harness) {
	s := h.Store
	c := mustCreate(t, s, "/things/u", "v1")
	tests := []struct {
		name    string
		key     string
		expect  func(cur bolt.KV) int64
		wantErr error
	}{
		{"matching revision", "/things/u", func(cur bolt.KV) int64 { return cur.ModRevision }, nil},
		{"stale revision", "/things/u", func(cur bolt.KV) int64 { return c.ModRevision }, bolt.ErrConflict},
		{"unconditional", "/things/u", func(bolt.KV) int64 { return 0 }, nil},
		{"missing key", "/things/none", func(bolt.KV) int64 { return 0 }, bolt.ErrNotFound},
		{"missing key with revision", "/things/none", func(cur bolt.KV) int64 { return cur.ModRevision }, bolt.ErrNotFound},
	}
	for i, tc := range tests {
		cur, _ := s.Get("/things/u")
		before := s.Revision()
		payload := "v" + string(rune('2'+i))
		kv, err := s.Update(ctx(t), tc.key, tc.expect(cur), []byte(payload))
		if tc.wantErr != nil {
			wantErr(t, tc.name, err, tc.wantErr)
			if s.Revision() != before {
				t.Fatalf("%s: failed update consumed a revision", tc.name)
			}
			after, _ := s.Get("/things/u")
			sameKVs(t, tc.name+": state", []bolt.KV{after}, []bolt.KV{cur})
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if kv.ModRevision <= before || kv.CreateRevision != c.CreateRevision || string(kv.Value) != stamped(payload, kv.ModRevision) {
			t.Fatalf("%s: got %+v (%q), before %d", tc.name, kv, kv.Value, before)
		}
		got, _ := s.Get("/things/u")
		sameKVs(t, tc.name+": Get", []bolt.KV{got}, []bolt.KV{kv})
	}
}

func testDelete(t *testing.T, h Harness) {
	s := h.Store
	c := mustCreate(t, s, "/things/d", "doomed")
	u := mustUpdate(t, s, "/things/d", 0, "doomed2")

	_, err := s.Delete(ctx(t), "/things/d", c.ModRevision)
	wantErr(t, "stale Delete", err, bolt.ErrConflict)
	if s.Revision() != u.ModRevision {
		t.Fatal("failed Delete consumed a revision")
	}
	d := mustDelete(t, s, "/things/d", u.ModRevision)
	if d.ModRevision <= u.ModRevision || d.CreateRevision != c.CreateRevision {
		t.Fatalf("deleted KV %+v", d)
	}
	if got, want := string(d.Value), stamped("doomed2", d.ModRevision); got != want {
		t.Fatalf("deleted value %q, want %q (restamped)", got, want)
	}
	_, err = s.Get("/things/d")
	wantErr(t, "Get deleted", err, bolt.ErrNotFound)
	_, err = s.Delete(ctx(t), "/things/d", 0)
	wantErr(t, "Delete missing", err, bolt.ErrNotFound)

	again := mustCreate(t, s, "/things/d", "reborn")
	if again.CreateRevision <= d.ModRevision {
		t.Fatalf("re-created at %d, deleted at %d", again.CreateRevision, d.ModRevision)
	}
	mustDelete(t, s, "/things/d", 0)
	if n := s.Count("/things/"); n != 0 {
		t.Fatalf("Count %d after deletes", n)
	}
}

func testStampError(t *testing.T, h Harness) {
	s := h.Store
	before := s.Revision()
	if _, err := s.Create(ctx(t), "/things/bad", []byte("x!badstamp")); err == nil {
		t.Fatal("Create with a refused stamp succeeded")
	}
	if s.Revision() != before {
		t.Fatal("refused stamp consumed a revision")
	}
	_, err := s.Get("/things/bad")
	wantErr(t, "Get refused", err, bolt.ErrNotFound)
	kv := mustCreate(t, s, "/things/good", "ok")
	if kv.ModRevision <= before {
		t.Fatalf("next write at %d, before %d", kv.ModRevision, before)
	}
}

func testCancelledContext(t *testing.T, h Harness) {
	s := h.Store
	c, cancel := context.WithCancel(ctx(t))
	cancel()
	_, err := s.Create(c, "/things/c", []byte("x"))
	wantErr(t, "Create", err, context.Canceled)
	_, err = s.Get("/things/c")
	wantErr(t, "Get", err, bolt.ErrNotFound)
	_, err = s.Watch(c, "/things/", 0)
	wantErr(t, "Watch", err, context.Canceled)
}

func testInvalidArguments(t *testing.T, h Harness) {
	s := h.Store
	for _, key := range []string{"", "/", "things/x", "/things/x/"} {
		if _, err := s.Create(ctx(t), key, []byte("x")); err == nil {
			t.Errorf("Create %q succeeded", key)
		}
	}
	for _, prefix := range []string{"", "/things", "things/"} {
		if _, err := s.List(prefix, bolt.ListOptions{}); err == nil {
			t.Errorf("List %q succeeded", prefix)
		}
		if _, err := s.Watch(ctx(t), prefix, 0); err == nil {
			t.Errorf("Watch %q succeeded", prefix)
		}
	}
	if n := s.Count("/"); n != 0 {
		t.Fatalf("invalid writes left %d keys", n)
	}
}

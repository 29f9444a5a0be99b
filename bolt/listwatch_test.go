package bolt_test

import (
	"context"
	"testing"
	"time"

	"platd/bolt"
)

// writeAfterList is a store whose first List runs write once it has read:
// a writer that gets ahead between a consumer's list and its watch.
type writeAfterList struct {
	*bolt.DB
	write func()
}

func (s *writeAfterList) List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	res, err := s.DB.List(prefix, opts)
	if w := s.write; w != nil {
		s.write = nil
		w()
	}
	return res, err
}

func TestListWatchMissesNoWriteAfterTheList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		empty bool
	}{{"empty store", true}, {"store with keys", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, _ := openTest(t, bolt.Options{NoFsync: true})
			if !tc.empty {
				if _, err := db.Create(ctx, "/a/0", []byte("v0")); err != nil {
					t.Fatal(err)
				}
			}
			before := db.Revision()
			s := &writeAfterList{DB: db, write: func() {
				if _, err := db.Create(ctx, "/a/1", []byte("v1")); err != nil {
					t.Error(err)
				}
			}}
			res, w, err := bolt.ListWatch(ctx, s, "/a/", bolt.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if _, err := db.Create(ctx, "/a/2", []byte("v2")); err != nil {
				t.Fatal(err)
			}
			// Every key is either in the list or among the events, once.
			seen := map[string]int{}
			for _, kv := range res.Items {
				seen[kv.Key]++
			}
			if tc.empty && res.Revision == before {
				t.Errorf("list at revision %d: the list read before the write counted", res.Revision)
			}
			timeout := time.After(10 * time.Second)
			for seen["/a/2"] == 0 {
				select {
				case ev, ok := <-w.Events():
					if !ok {
						t.Fatalf("watch ended: %v", w.Err())
					}
					if ev.Revision <= res.Revision {
						t.Errorf("event %s at %d, not after the list at %d", ev.KV.Key, ev.Revision, res.Revision)
					}
					seen[ev.KV.Key]++
				case <-timeout:
					t.Fatalf("timed out; seen %v", seen)
				}
			}
			want := map[string]int{"/a/1": 1, "/a/2": 1}
			if !tc.empty {
				want["/a/0"] = 1
			}
			if len(seen) != len(want) || seen["/a/0"] != want["/a/0"] || seen["/a/1"] != 1 || seen["/a/2"] != 1 {
				t.Errorf("seen %v, want %v", seen, want)
			}
		})
	}
}

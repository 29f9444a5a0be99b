package openapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWithRemoteKeys(t *testing.T) {
	t.Parallel()
	set := &v3Set{docs: map[string]*v3Doc{"api/v1": {}, "apis/apps/v1": {}}}
	index := []byte(`{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=A"},"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=B"}}}`)
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"none", nil, string(index)},
		{"served here", []string{"apis/apps/v1"}, string(index)},
		{"remote", []string{"apis/apps/v1", "apis/wardle.example.com/v1alpha1"},
			`{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=A"},"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=B"},` +
				`"apis/wardle.example.com/v1alpha1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1alpha1"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withRemoteKeys(index, set, tt.keys)
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal([]byte(tt.want), &b)
			ga, _ := json.Marshal(a)
			gb, _ := json.Marshal(b)
			if string(ga) != string(gb) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestIndexRevalidatesRemoteKeys: when the group-versions of extension
// servers in the v3 index change, its Last-Modified moves on, even
// within the same second, so a client revalidating with
// If-Modified-Since gets the new index; an unchanged index still answers
// 304.
func TestIndexRevalidatesRemoteKeys(t *testing.T) {
	t.Parallel()
	b := mustBrand(t, "kubernetes")
	var mu sync.Mutex
	var keys []string
	setKeys := func(k ...string) {
		mu.Lock()
		defer mu.Unlock()
		keys = k
	}
	h := New(newFixtureRegistry(b), b, WithRemote(func() []string {
		mu.Lock()
		defer mu.Unlock()
		return keys
	}))
	now := time.Date(2026, 3, 1, 10, 0, 0, 300e6, time.UTC)
	h.now = func() time.Time { return now }
	const wardle = "apis/wardle.example.com/v1alpha1"
	steps := []struct {
		name   string
		keys   []string
		code   int
		listed bool
	}{
		{"unchanged", nil, http.StatusNotModified, false},
		{"added", []string{wardle}, http.StatusOK, true},
		{"still there", []string{wardle}, http.StatusNotModified, false},
		{"another added", []string{"apis/other.example.com/v1", wardle}, http.StatusOK, true},
		{"same set, other order", []string{wardle, "apis/other.example.com/v1"}, http.StatusNotModified, false},
		{"removed", nil, http.StatusOK, false},
	}
	first := get(h, "/openapi/v3", nil)
	lm := first.Header().Get("Last-Modified")
	if first.Code != http.StatusOK || lm == "" {
		t.Fatalf("index: %d, Last-Modified %q", first.Code, lm)
	}
	for _, s := range steps {
		setKeys(s.keys...)
		now = now.Add(100 * time.Millisecond)
		rec := get(h, "/openapi/v3", map[string]string{"If-Modified-Since": lm})
		if rec.Code != s.code || rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), wardle) != s.listed {
			t.Fatalf("%s: %d %q; want %d, listing %s: %v", s.name, rec.Code, rec.Body.String(), s.code, wardle, s.listed)
		}
		if rec.Code == http.StatusOK {
			next := rec.Header().Get("Last-Modified")
			if next == lm {
				t.Fatalf("%s: Last-Modified stayed %s", s.name, lm)
			}
			lm = next
		}
	}
}

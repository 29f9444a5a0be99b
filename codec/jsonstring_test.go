package codec

import (
	"encoding/json"
	"testing"
)

// The string, list and map encoders write what encoding/json writes.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain", `quote " back \ slash`, "<tag>&amp;", "tab\tnew\nline\x00\x1f", "\u2028\u2029", "bad \xff utf8", "ünïcödé ✓"}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
	for _, l := range [][]string{nil, {}, {"a"}, strs} {
		want, _ := json.Marshal(l)
		if l == nil {
			want = []byte("[]") // a nil list is written empty: callers write null themselves
		}
		if got := AppendJSONStrings(nil, l); string(got) != string(want) {
			t.Errorf("AppendJSONStrings(%q) = %s, want %s", l, got, want)
		}
	}
	for _, m := range []map[string]string{{}, {"b": "2", "a": "1", "<": "&"}, {"\xff": "x", "z": "\u2028"}} {
		want, _ := json.Marshal(m)
		if got := AppendJSONStringMap(nil, m); string(got) != string(want) {
			t.Errorf("AppendJSONStringMap(%q) = %s, want %s", m, got, want)
		}
	}
}

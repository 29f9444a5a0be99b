package rest

import "testing"

// TestMarkedForDeletion: only a metadata.deletionTimestamp with a value
// marks stored bytes; the name elsewhere (a label, an annotation, a
// member of the spec) does not.
func TestMarkedForDeletion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stored string
		want   bool
	}{
		{`{"metadata":{"name":"a","deletionTimestamp":"2024-01-01T00:00:00Z"},"spec":{}}`, true},
		{`{"metadata":{"name":"a","resourceVersion":"7","deletionTimestamp":"2024-01-01T00:00:00Z","finalizers":["f"]}}`, true},
		{`{"metadata":{"name":"a"},"spec":{}}`, false},
		{`{"metadata":{"name":"a","deletionTimestamp":null}}`, false},
		{`{"metadata":{"name":"a","labels":{"deletionTimestamp":"x"}}}`, false},
		{`{"metadata":{"name":"a","annotations":{"note":"deletionTimestamp\":"}}}`, false},
		{`{"metadata":{"name":"a"},"spec":{"deletionTimestamp":"2024-01-01T00:00:00Z"}}`, false},
		{`{"metadata":{"name":"a","labels":{"deletionTimestamp":"x"},"deletionTimestamp":"2024-01-01T00:00:00Z"}}`, true},
	} {
		if got := markedForDeletion([]byte(tc.stored)); got != tc.want {
			t.Errorf("%s: marked %v, want %v", tc.stored, got, tc.want)
		}
	}
}

package controllers

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseMeta(t *testing.T) {
	t.Parallel()
	want := objectMeta{
		Name: "web-1", Namespace: "prod", UID: "u-1", DeletionTimestamp: "2026-01-02T03:04:05Z",
		Finalizers:      []string{"a/b"},
		OwnerReferences: []ownerRef{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "u-0"}},
	}
	meta := `{"name":"web-1","namespace":"prod","uid":"u-1","deletionTimestamp":"2026-01-02T03:04:05Z","finalizers":["a/b"],` +
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"u-0"}]}`
	for _, value := range []string{
		// As stored: metadata first, read alone.
		`{"metadata":` + meta + `,"spec":{"containers":[{"name":"a","args":["}{\"x"]}]}}`,
		// Metadata elsewhere: the whole object is read.
		`{"spec":{"x":1},"metadata":` + meta + `}`,
	} {
		got, err := parseMeta([]byte(value))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %+v, %v\n want %+v", value, got, err, want)
		}
	}
	for _, bad := range []string{`{"metadata":{"name":1}}`, `{"metadata":`, `nonsense`} {
		if _, err := parseMeta([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// BenchmarkParseMeta reads the metadata of a stored object of about 3 KB,
// as the garbage collector does for every event.
func BenchmarkParseMeta(b *testing.B) {
	value := []byte(`{"metadata":{"name":"web-1","namespace":"prod","uid":"u-1","labels":{"app":"web"}},"spec":{"containers":[` +
		strings.Repeat(`{"name":"app","image":"registry.example.com/app:v1","args":["--a=1","--b=2"],"env":[{"name":"A","value":"1"}]},`, 25) +
		`{"name":"last"}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseMeta(value); err != nil {
			b.Fatal(err)
		}
	}
}

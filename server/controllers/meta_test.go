package controllers

import (
	"encoding/json"
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

// scanMeta reads what encoding/json reads, or leaves the metadata to it.
func TestScanMeta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		md      string
		scanned bool
	}{
		{`{}`, true},
		{`{"name":"a","namespace":"b","uid":"c","resourceVersion":"7","labels":{"x":"}{,"},"managedFields":[{"fieldsV1":{"f:data":{".":{}}}}]}`, true},
		{`{"name":"a","deletionTimestamp":"2026-01-02T03:04:05Z","deletionGracePeriodSeconds":30,"finalizers":["x/y",null],"ownerReferences":[{"uid":"u","blockOwnerDeletion":true}]}`, true},
		{`{"name":"a","generation":1,"annotations":{"q":"say \"hi\""},"deletionGracePeriodSeconds":null}`, true},
		{`{"name":"a","name":"b"}`, true},
		{`{"Name":"a"}`, false},
		{`{"OWNERreferences":[]}`, false},
		{`{"name":"a\u0062"}`, false},
		{`{"name":"é"}`, false},
		{`{"name":null}`, false},
		{`{"uid":7}`, false},
		{`{"finalizers":"x"}`, false},
		{`{ "name":"a"}`, false},
		{`{"name": "a"}`, false},
	} {
		got, ok := scanMeta([]byte(tc.md))
		var want objectMeta
		werr := json.Unmarshal([]byte(tc.md), &want)
		if ok != tc.scanned || ok && (werr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: scanned %v %+v, want %v %+v (%v)", tc.md, ok, got, tc.scanned, want, werr)
		}
	}
}

// FuzzScanMeta: whatever valid JSON scanMeta reads, it reads as
// encoding/json does.
func FuzzScanMeta(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","namespace":"b","uid":"c","labels":{"x":"}{,"},"managedFields":[{"fieldsV1":{"f:data":{".":{}}}}]}`,
		`{"name":"a","deletionGracePeriodSeconds":30,"finalizers":["x/y"],"ownerReferences":[{"uid":"u","blockOwnerDeletion":true}]}`,
		`{"Name":"a","x":[1,{"y":"\"]"}],"uid":"q"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, md []byte) {
		got, ok := scanMeta(md)
		if !ok || !json.Valid(md) {
			return
		}
		var want objectMeta
		if err := json.Unmarshal(md, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: scanned %+v, encoding/json %+v (%v)", md, got, want, err)
		}
	})
}

package controllers

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"platd/server/schema"
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

// metaByEncodingJSON is what encoding/json reads of a metadata object: the
// reading parseMetadataMembers must match.
func metaByEncodingJSON(md []byte) (objectMeta, error) {
	var m objectMeta
	err := json.Unmarshal(md, &m)
	return m, err
}

func TestParseMetadataMembers(t *testing.T) {
	t.Parallel()
	for _, md := range []string{
		`{}`,
		`{"name":"a","namespace":"b","uid":"c","resourceVersion":"5","labels":{"name":"x"},"managedFields":[{"manager":"m","fieldsV1":{"f:metadata":{"f:name":{}}}}]}`,
		`{"name":"a\u00e9\"b","namespace":"\ud800x","uid":"caf\u00e9"}`,
		`{"name":null,"namespace":"n","deletionTimestamp":"2026-01-02T03:04:05Z","deletionGracePeriodSeconds":30}`,
		`{"deletionGracePeriodSeconds":null,"finalizers":null,"ownerReferences":null}`,
		`{"finalizers":["a","b\/c"],"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"o","uid":"u","blockOwnerDeletion":true,"controller":true}]}`,
		// encoding/json matches member names ignoring case; the last of
		// two wins.
		`{"Name":"upper","NAMESPACE":"ns","UID":"u","name":"lower","namespaſe":"long-s","OwnerReferences":[{"Name":"o"}]}`,
		`{"na\u006de":"escaped","finalizers":[]}`,
		// Type errors are errors.
		`{"name":1}`,
		`{"deletionGracePeriodSeconds":"30"}`,
		`{"finalizers":"a"}`,
		`{"ownerReferences":{}}`,
		// Syntax errors too.
		`{"name":"a"`,
		`{"name":"a"}x`,
		`["name"]`,
		``,
	} {
		want, wantErr := metaByEncodingJSON([]byte(md))
		got, err := parseMetadataMembers([]byte(md))
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, encoding/json's %v", md, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %+v\n want %+v", md, got, want)
		}
	}
}

// FuzzParseMetadataMembers holds the metadata reader to encoding/json's
// reading of the same bytes.
func FuzzParseMetadataMembers(f *testing.F) {
	f.Add(`{"name":"a","namespace":"b","uid":"c","finalizers":["x"],"ownerReferences":[{"uid":"u","blockOwnerDeletion":false}]}`)
	f.Add(`{"NAME":"a","deletionGracePeriodSeconds":1,"deletionTimestamp":"t","managedFields":[{"f":{}}]}`)
	f.Add(`{"name":"\ud83d\ude00\u0000"}`)
	f.Fuzz(func(t *testing.T, md string) {
		want, wantErr := metaByEncodingJSON([]byte(md))
		got, err := parseMetadataMembers([]byte(md))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", md, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got  %+v\n want %+v", md, got, want)
		}
	})
}

// BenchmarkParseMetaStoredPod reads the metadata of the stored benchmark
// pod (labels, annotations, a create's managedFields), as the garbage
// collector does for every pod event.
func BenchmarkParseMetaStoredPod(b *testing.B) {
	value, err := os.ReadFile("testdata/stored-pod.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if m, err := parseMeta(value); err != nil || m.UID == "" {
			b.Fatal(m, err)
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

// parseMetadataMembers decodes the members of a metadata object that
// objectMeta keeps, as encoding/json would decode md into objectMeta.
func parseMetadataMembers(md []byte) (objectMeta, error) {
	m, n, err := metadataMembers(md)
	if err == nil && !schema.OnlySpace(md[n:]) {
		err = fmt.Errorf("invalid character %q after top-level value", md[n])
	}
	return m, err
}

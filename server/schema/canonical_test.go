package schema

import (
	"reflect"
	"testing"
)

// roundTrip is what Canonical must equal: the object stored and read
// back.
func roundTrip(t testing.TB, obj map[string]any, s *Schema) map[string]any {
	t.Helper()
	out, err := DecodeStored(Encode(nil, obj, s), s)
	if err != nil {
		t.Fatalf("decoding the encoding of %v: %v", obj, err)
	}
	return out
}

// TestCanonicalOfEveryZeroObject checks Canonical against the round trip
// for the empty object of every schema in the catalog: every member the
// encoding fills in, nested ones included.
func TestCanonicalOfEveryZeroObject(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "plat")
	for name, s := range c.byName {
		if s.Type != Object {
			continue
		}
		if got, want := Canonical(map[string]any{}, s), roundTrip(t, map[string]any{}, s); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %v\n want %v", name, got, want)
		}
	}
}

// TestCanonicalOfDecodedObjects checks Canonical against the round trip
// for decoded request bodies, and that it leaves its argument alone.
func TestCanonicalOfDecodedObjects(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "plat")
	for _, tc := range []struct{ group, kind, body string }{
		{"", "Pod", `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}}}],"volumes":[{"name":"v","emptyDir":{}}],"priority":0,"hostNetwork":false}}`},
		{"apps", "Deployment", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":0,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"X","value":""}]}]}},"paused":false}}`},
		{"", "ConfigMap", `{"metadata":{"name":"c","annotations":{}},"data":{"k":""},"binaryData":{}}`},
		{"", "Service", `{"kind":"","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":"http"}],"selector":{"a":"b"}}}`},
		{"batch", "CronJob", `{"metadata":{"name":"j"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}}}}`},
	} {
		s := c.ByGVK(tc.group, "v1", tc.kind)
		dec, err := Decode([]byte(tc.body), s)
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		before := roundTrip(t, DeepCopy(dec.Object).(map[string]any), s)
		got := Canonical(dec.Object, s)
		if want := roundTrip(t, dec.Object, s); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %v\n want %v", tc.kind, got, want)
		}
		if after := roundTrip(t, dec.Object, s); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: Canonical changed its argument", tc.kind)
		}
	}
}

// FuzzCanonical checks Canonical against the round trip for any body a
// Pod decodes from.
func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","ports":[{"containerPort":1}]}]}}`))
	f.Add([]byte(`{"spec":{"overhead":{"cpu":"1"},"containers":[null],"tolerations":[{}]},"status":{"conditions":[{"type":"Ready"}]}}`))
	f.Add([]byte(`{"metadata":{"labels":{"a":null}},"spec":{"nodeSelector":{"x":null}}}`))
	c := testCatalog(f, "plat")
	s := c.ByGVK("", "v1", "Pod")
	f.Fuzz(func(t *testing.T, body []byte) {
		dec, err := Decode(body, s)
		if err != nil || dec.Object == nil {
			return
		}
		if got, want := Canonical(dec.Object, s), roundTrip(t, dec.Object, s); !reflect.DeepEqual(got, want) {
			t.Errorf("\n got  %v\n want %v", got, want)
		}
	})
}

// BenchmarkCanonicalPod is Canonical of the 3 KB Pod a create sends (what
// every write's ownership tracking computes).
func BenchmarkCanonicalPod(b *testing.B) {
	obj, s := benchPod(b)
	b.ReportAllocs()
	for b.Loop() {
		Canonical(obj, s)
	}
}

package schema

import (
	"errors"
	"platd/config"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeStrictPaths(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	cm := c.Schema(kn("@R@.api.core.v1.ConfigMap"))
	lr := c.Schema(kn("@R@.api.core.v1.LimitRange"))
	tests := []struct {
		name    string
		s       *Schema
		in      string
		unknown []string
		dups    []string
		obj     map[string]any
	}{
		{
			name:    "unknown members",
			s:       cm,
			in:      `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "strict", "bogusMeta": 1}, "data": {"k": "v"}, "spec": {"x": 1}}`,
			unknown: []string{"metadata.bogusMeta", "spec"},
			obj: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "strict"}, "data": map[string]any{"k": "v"}},
		},
		{
			name:    "unknown in list element",
			s:       lr,
			in:      `{"spec":{"limits":[{"type":"Container","foo":1}]}}`,
			unknown: []string{"spec.limits[0].foo"},
			obj:     map[string]any{"spec": map[string]any{"limits": []any{map[string]any{"type": "Container"}}}},
		},
		{
			name: "duplicate map member: its keys merge, a repeated key's last value wins",
			s:    cm,
			in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"k":"v"},"data":{"k":"w"}}`,
			dups: []string{"data"},
			obj: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "dup"}, "data": map[string]any{"k": "w"}},
		},
		{
			name: "duplicate objects merge, maps add keys, lists and scalars are replaced",
			s:    cm,
			in:   `{"metadata":{"name":"m","labels":{"a":"1"},"finalizers":["x/a"]},"data":{"a":"1"},"data":{"b":"2"},"metadata":{"labels":{"b":"2"},"finalizers":["x/b"]},"immutable":false,"immutable":true}`,
			dups: []string{"data", "metadata", "immutable"},
			obj: map[string]any{
				"metadata": map[string]any{"name": "m", "labels": map[string]any{"a": "1", "b": "2"}, "finalizers": []any{"x/b"}},
				"data":     map[string]any{"a": "1", "b": "2"}, "immutable": true},
		},
		{
			name: "duplicate nested member and map key",
			s:    cm,
			in:   `{"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}}}`,
			dups: []string{"metadata.name", "metadata.labels.x"},
			obj:  map[string]any{"metadata": map[string]any{"name": "b", "labels": map[string]any{"x": "2"}}},
		},
		{
			name: "null members are absent, null map values are zero",
			s:    cm,
			in:   `{"metadata":null,"data":{"a":null},"immutable":null}`,
			obj:  map[string]any{"data": map[string]any{"a": ""}},
		},
		{
			name: "escapes and quantities and times",
			s:    lr,
			in:   `{"metadata":{"name":"x\u00e9\ud83d\ude00","creationTimestamp":"2024-01-02T03:04:05+01:00"},"spec":{"limits":[{"max":{"cpu":"2000m","memory":1024}}]}}`,
			obj: map[string]any{
				"metadata": map[string]any{"name": "xé😀", "creationTimestamp": "2024-01-02T02:04:05Z"},
				"spec":     map[string]any{"limits": []any{map[string]any{"max": map[string]any{"cpu": "2", "memory": "1024"}}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := Decode([]byte(tt.in), tt.s)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Unknown, tt.unknown) {
				t.Errorf("unknown = %q, want %q", d.Unknown, tt.unknown)
			}
			if !reflect.DeepEqual(d.Duplicates, tt.dups) {
				t.Errorf("duplicates = %q, want %q", d.Duplicates, tt.dups)
			}
			if !reflect.DeepEqual(d.Object, tt.obj) {
				t.Errorf("object = %#v, want %#v", d.Object, tt.obj)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	cm := c.Schema(kn("@R@.api.core.v1.ConfigMap"))
	ns := c.Schema(kn("@R@.api.core.v1.Namespace"))
	pod := c.Schema(kn("@R@.api.core.v1.Pod"))
	cr := c.Schema(kn("@R@.api.apps.v1.ControllerRevision"))
	lease := c.Schema(kn("@R@.api.coordination.v1.Lease"))
	tests := []struct {
		name string
		s    *Schema
		in   string
		want string
		kind error
	}{
		{"truncated", cm, `{"apiVersion":"v1","kind":"ConfigMap",`, "unexpected end of JSON input", ErrSyntax},
		{"empty", cm, ``, "unexpected end of JSON input", ErrSyntax},
		{"bad start", cm, `x`, "invalid character 'x' looking for beginning of value", ErrSyntax},
		{"missing colon", cm, `{"a" 1}`, "invalid character '1' after object key", ErrSyntax},
		{"missing comma", cm, `{"a":1 "b":2}`, `invalid character '"' after object key:value pair`, ErrSyntax},
		{"bad key", cm, `{1:2}`, "invalid character '1' looking for beginning of object key string", ErrSyntax},
		{"trailing", cm, `{} x`, "invalid character 'x' after top-level value", ErrSyntax},
		{"bad literal", cm, `{"immutable":tru}`, "invalid character '}' in literal true (expecting 'e')", ErrSyntax},
		{"bad array", cm, `{"metadata":{"finalizers":["a" "b"]}}`, `invalid character '"' after array element`, ErrSyntax},
		{"control char", cm, "{\"a\":\"x\ny\"}", `invalid character '\n' in string literal`, ErrSyntax},
		{"bad escape", cm, `{"a":"\q"}`, `invalid character 'q' in string escape code`, ErrSyntax},
		{"syntax wins over type", cm, `{"data":{"k":1},`, "unexpected end of JSON input", ErrSyntax},
		{"number into string", cm, `{"data":{"k":1}}`, "json: cannot unmarshal number into Go struct field ConfigMap.data of type string", ErrType},
		{"string into bool", cm, `{"immutable":"yes"}`, "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool", ErrType},
		{"object into string", cm, `{"metadata":{"name":{}}}`, "json: cannot unmarshal object into Go struct field ObjectMeta.metadata.name of type string", ErrType},
		{"array into object", cm, `{"metadata":[]}`, "json: cannot unmarshal array into Go struct field ConfigMap.metadata of type v1.ObjectMeta", ErrType},
		{"top-level array", cm, `[]`, "json: cannot unmarshal array into Go value of type v1.ConfigMap", ErrType},
		{"fraction into int64", cm, `{"metadata":{"generation":1.5}}`, "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64", ErrType},
		{"int32 overflow", pod, `{"spec":{"containers":[{"name":"a","ports":[{"containerPort":3000000000}]}]}}`,
			"json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32", ErrType},
		{"free-form number beyond float64", cr, `{"data":{"x":[1,-1e400]},"revision":1}`,
			"json: cannot unmarshal number -1e400 into Go value of type float64", ErrType},
		{"syntax wins over a number beyond float64", cr, `{"data":1e999,`, "unexpected end of JSON input", ErrSyntax},
		{"bad base64", cm, `{"binaryData":{"b":"AAE*"}}`, "illegal base64 data at input byte 3", ErrType},
		{"bad quantity", pod, `{"spec":{"overhead":{"cpu":"1x"}}}`, quantityFormatText, ErrType},
		{"bad time", ns, `{"metadata":{"creationTimestamp":"yesterday"}}`, `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`, ErrType},
		// A MicroTime has exactly six fractional digits, as upstream reads it.
		{"micro time without fraction", lease, `{"spec":{"renewTime":"2024-01-01T00:00:00Z"}}`, `parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"`, ErrType},
		{"micro time in nanoseconds", lease, `{"spec":{"acquireTime":"2024-01-01T00:00:00.123456789Z"}}`, `parsing time "2024-01-01T00:00:00.123456789Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "789Z" as "Z07:00"`, ErrType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := Decode([]byte(tt.in), tt.s)
			if err == nil {
				t.Fatalf("no error, got %#v", d.Object)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\n want %q", err, tt.want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
		})
	}
}

// TestDecodeDeepNesting checks that hostile nesting is an error, not a
// stack overflow, wherever it appears: in an unknown field, in a
// free-form value and in the body itself.
func TestDecodeDeepNesting(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	cat, err := Load(b)
	if err != nil {
		t.Fatal(err)
	}
	cm := cat.ByGVK("", "v1", "ConfigMap")
	deep := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	for _, body := range []string{
		`{"spec":` + deep + `}`,
		`{"metadata":{"managedFields":[{"fieldsV1":` + deep + `}]}}`,
		deep,
	} {
		if _, err := Decode([]byte(body), cm); err == nil {
			t.Errorf("nesting of 200000 accepted (%.20s...)", body)
		}
	}
}

package protobuf

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/config"
	"platd/server/apierr"
	"platd/server/schema"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMarshalBytes checks hand-computed encodings of the reference tables.
func TestMarshalBytes(t *testing.T) {
	t.Parallel()
	cm := kindSchema(t, "", "v1", "ConfigMap")
	tests := []struct {
		name string
		obj  string
		want string
	}{
		{"zero object meta", `{}`, "0a10 0a00 1200 1a00 2200 2a00 3200 3800 4200"},
		{"reference configmap", `{"metadata":{"name":"x","namespace":"default","uid":"u","resourceVersion":"1",
			"creationTimestamp":"2023-11-14T22:13:20Z"},"data":{"k":"v"}}`,
			"0a22 0a0178 1200 1a0764656661756c74 2200 2a0175 320131 3800 4208 0880e2cfaa06 1000" +
				"1206 0a016b 120176"},
		{"sorted labels", `{"metadata":{"labels":{"b":"","a":"1"}}}`,
			"0a1f 0a00 1200 1a00 2200 2a00 3200 3800 4200 5a06 0a0161 120131 5a05 0a0162 1200"},
		{"epoch is not zero", `{"metadata":{"creationTimestamp":"1970-01-01T00:00:00Z"}}`,
			"0a14 0a00 1200 1a00 2200 2a00 3200 3800 4204 0800 1000"},
		{"negative generation", `{"metadata":{"generation":-1}}`,
			"0a19 0a00 1200 1a00 2200 2a00 3200 38ffffffffffffffffff01 4200"},
		{"bytes value and empty bytes", `{"binaryData":{"a":"AQ==","b":""}}`,
			"0a10 0a00 1200 1a00 2200 2a00 3200 3800 4200 1a06 0a0161 120101 1a05 0a0162 1200"},
		{"pointer false", `{"immutable":false}`, "0a10 0a00 1200 1a00 2200 2a00 3200 3800 4200 2000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dec, err := schema.Decode([]byte(tc.obj), cm)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Marshal(nil, dec.Object, cm)
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("\n got %x\nwant %x", got, want)
			}
		})
	}
}

// TestHandEncodedBodies checks the bodies of the hand-encoded messages
// against the reference examples, and that they decode back.
func TestHandEncodedBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		append func([]byte) ([]byte, error)
		decode func([]byte) (any, error)
		value  any
		want   string
	}{
		{"int-or-string -1", func(b []byte) ([]byte, error) { return appendIntOrStringBody(b, int64(-1)) },
			decodeIntOrString, int64(-1), "0800 10ffffffffffffffffff01 1a00"},
		{"int-or-string 50%", func(b []byte) ([]byte, error) { return appendIntOrStringBody(b, "50%") },
			decodeIntOrString, "50%", "0801 1000 1a03353025"},
		{"microtime", func(b []byte) ([]byte, error) {
			return appendTimeBody(b, "2023-11-14T22:13:20.123456Z", schema.MicroTime)
		}, func(b []byte) (any, error) { return decodeTime(b, schema.MicroTime) },
			"2023-11-14T22:13:20.123456Z", "0880e2cfaa06 108094ef3a"},
		{"time drops nanos", func(b []byte) ([]byte, error) {
			return appendTimeBody(b, "2023-11-14T22:13:20.5Z", schema.Time)
		}, func(b []byte) (any, error) { return decodeTime(b, schema.Time) },
			"2023-11-14T22:13:20Z", "0880e2cfaa06 1000"},
		{"zero time", func(b []byte) ([]byte, error) { return appendTimeBody(b, "0001-01-01T00:00:00Z", schema.Time) },
			func(b []byte) (any, error) { return decodeTime(b, schema.Time) }, nil, ""},
		{"quantity", func(b []byte) ([]byte, error) {
			q, err := quantityString("1536Mi")
			return appendStringField(b, quantityText, q), err
		}, decodeQuantity, "1536Mi", "0a06313533364d69"},
		{"duration", func(b []byte) ([]byte, error) { return appendDurationBody(b, "1m30s") },
			decodeDuration, "1m30s", "088088aca3cf02"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.append(nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("\n got %x\nwant %x", got, want)
			}
			back, err := tc.decode(got)
			if err != nil || back != tc.value {
				t.Fatalf("decode: %#v, %v; want %#v", back, err, tc.value)
			}
		})
	}
}

// synthetic builds a one-message schema for shapes the catalog lacks.
func synthetic(fields ...*schema.Field) *schema.Schema {
	s := &schema.Schema{Name: "t.Msg", Type: schema.Object, ProtoMessage: "t.Msg", Fields: fields}
	s.Seal()
	return s
}

func TestWrapperAndPacked(t *testing.T) {
	t.Parallel()
	str := &schema.Schema{Type: schema.String}
	i64 := &schema.Schema{Type: schema.Integer, Format: "int64"}
	s := synthetic(
		&schema.Field{Name: "ints", ProtoNumber: 1, Schema: &schema.Schema{Type: schema.Array, Elem: i64}, OmitEmpty: true},
		&schema.Field{Name: "verbs", ProtoNumber: 4, Schema: &schema.Schema{Type: schema.Array, Elem: str, ProtoMessage: "t.Verbs"}},
	)
	obj := map[string]any{"ints": []any{int64(1), int64(-2)}, "verbs": []any{"get", "put"}}
	got, err := Marshal(nil, obj, s)
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, "0801 08feffffffffffffffff01 220a 0a03676574 0a03707574")
	if !bytes.Equal(got, want) {
		t.Fatalf("\n got %x\nwant %x", got, want)
	}
	// Packed ints and an empty wrapper decode too.
	back, err := Unmarshal(unhex(t, "0a03 010203 0804 2200"), s)
	if err != nil {
		t.Fatal(err)
	}
	if w := map[string]any{"ints": []any{int64(1), int64(2), int64(3), int64(4)}, "verbs": []any{}}; !reflect.DeepEqual(back, w) {
		t.Fatalf("got %#v", back)
	}
}

// TestUnmarshalEntryWithoutValue checks map entries that carry no value
// read back as upstream's decoder leaves them: a fresh empty value, so
// an extra (a wrapper list) is [] and a string "".
func TestUnmarshalEntryWithoutValue(t *testing.T) {
	t.Parallel()
	brand, _ := config.LookupBrand("plat")
	tr := kindSchema(t, brand.Group("authentication"), "v1", "TokenReview")
	tests := []struct {
		name string
		s    *schema.Schema
		raw  string
		want map[string]any
	}{
		// status.user.extra: {"k": <no value>} and {"": <empty entry>}.
		{"extra, key only", tr, "1a07 1205 2203 0a016b", map[string]any{"k": []any{}}},
		{"extra, empty entry", tr, "1a04 1202 2200", map[string]any{"": []any{}}},
		{"extra, empty value", tr, "1a09 1207 2205 0a016b 1200", map[string]any{"k": []any{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Unmarshal(unhex(t, tc.raw), tc.s)
			if err != nil {
				t.Fatal(err)
			}
			extra := got["status"].(map[string]any)["user"].(map[string]any)["extra"]
			if !reflect.DeepEqual(extra, tc.want) {
				t.Fatalf("extra %#v, want %#v", extra, tc.want)
			}
		})
	}
	cm := kindSchema(t, "", "v1", "ConfigMap")
	got, err := Unmarshal(unhex(t, "1203 0a016b"), cm)
	if err != nil {
		t.Fatal(err)
	}
	if d := got["data"]; !reflect.DeepEqual(d, map[string]any{"k": ""}) {
		t.Fatalf("data %#v, want k mapped to \"\"", d)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	t.Parallel()
	cm := kindSchema(t, "", "v1", "ConfigMap")
	cr := kindSchema(t, "apps", "v1", "ControllerRevision")
	tests := []struct {
		name string
		s    *schema.Schema
		raw  string
		want error
		path string
	}{
		{"wrong wire type", cm, "1001", ErrMalformed, "data"},
		{"truncated", cm, "0a05 0a01", ErrMalformed, "metadata"},
		{"bad tag", cm, "ff", ErrMalformed, ""},
		{"nested wrong type", cm, "0a02 0801", ErrMalformed, "metadata.name"},
		{"raw not json", cr, "1206 0a04 6b387300", ErrRawNotJSON, "data"},
		{"raw number beyond float64", cr, "1207 0a05 3165393939", ErrValue, "data"},
		{"bad int-or-string", kindSchema(t, "", "v1", "Service"), "1206 0a04 2202 0802", ErrValue, "spec.ports[0].targetPort"},
		{"no protobuf form", &schema.Schema{Type: schema.Object}, "", ErrNoProtobuf, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Unmarshal(unhex(t, tc.raw), tc.s)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if tc.path != "" && !strings.HasPrefix(err.Error(), tc.path+":") {
				t.Fatalf("error %q does not name %s", err, tc.path)
			}
		})
	}
}

func TestUnmarshalSkipsUnknown(t *testing.T) {
	t.Parallel()
	cm := kindSchema(t, "", "v1", "ConfigMap")
	// data k=v, then unknown varint 99, unknown bytes 100 and a group 101.
	raw := unhex(t, "1206 0a016b 120176 9806 07 a20602 6869 ab06 0801 ac06")
	got, err := Unmarshal(raw, cm)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := got["data"].(map[string]any); !reflect.DeepEqual(d, map[string]any{"k": "v"}) {
		t.Fatalf("got %#v", got)
	}
	// Always-written members absent from the message get their zero values.
	if md, _ := got["metadata"].(map[string]any); md == nil || len(md) != 0 {
		t.Fatalf("metadata %#v", got["metadata"])
	}
}

func TestMarshalErrors(t *testing.T) {
	t.Parallel()
	cm := kindSchema(t, "", "v1", "ConfigMap")
	tests := []struct {
		name string
		obj  map[string]any
		want error
		path string
	}{
		{"string as number", map[string]any{"metadata": map[string]any{"name": int64(5)}}, ErrType, "metadata.name"},
		{"bad base64", map[string]any{"binaryData": map[string]any{"b": "!!"}}, ErrValue, `binaryData["b"]`},
		{"bad time", map[string]any{"metadata": map[string]any{"creationTimestamp": "yesterday"}}, ErrValue, "metadata.creationTimestamp"},
		{"list as map", map[string]any{"data": []any{}}, ErrType, "data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Marshal(nil, tc.obj, cm)
			if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), tc.path+":") {
				t.Fatalf("error %v, want %v at %s", err, tc.want, tc.path)
			}
		})
	}
	if _, err := Marshal(nil, nil, &schema.Schema{Type: schema.Object}); !errors.Is(err, ErrNoProtobuf) {
		t.Fatalf("schema without message: %v", err)
	}
}

// TestMarshalStatusDetails cross-checks MarshalStatus with the schema
// driven encoder on a Status with details and causes.
func TestMarshalStatusDetails(t *testing.T) {
	t.Parallel()
	n := int64(3)
	st := apierr.NewInvalid("", "ConfigMap", "x", apierr.FieldErrors{
		{Type: apierr.FieldRequired, Field: "data.k", Detail: ""},
	}).Status
	st.Metadata.RemainingItemCount = &n
	st.Details.UID = "u"
	st.Details.RetryAfterSeconds = 2
	got := MarshalStatus(nil, &st)

	ss := kindSchema(t, "", "v1", "Status")
	obj := map[string]any{
		"metadata": map[string]any{"remainingItemCount": int64(3)},
		"status":   st.Status, "message": st.Message, "reason": string(st.Reason), "code": int64(st.Code),
		"details": map[string]any{"kind": "ConfigMap", "name": "x", "uid": "u", "retryAfterSeconds": int64(2),
			"causes": []any{map[string]any{"reason": st.Details.Causes[0].Type,
				"message": st.Details.Causes[0].Message, "field": "data.k"}}},
	}
	want, err := Marshal(nil, obj, ss)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("\n got %x\nwant %x", got, want)
	}
	back, err := Unmarshal(got, ss)
	if err != nil {
		t.Fatal(err)
	}
	if c := back["details"].(map[string]any)["causes"].([]any)[0].(map[string]any); c["field"] != "data.k" {
		t.Fatalf("causes %v", c)
	}
}

// TestLargeBody exercises length prefixes longer than one byte.
func TestLargeBody(t *testing.T) {
	t.Parallel()
	cm := kindSchema(t, "", "v1", "ConfigMap")
	data := map[string]any{}
	for _, k := range []string{"a", "b", "c"} {
		data[k] = strings.Repeat(k, 70000)
	}
	obj := map[string]any{"metadata": map[string]any{"name": strings.Repeat("n", 200)}, "data": data}
	pb, err := Marshal(nil, obj, cm)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Unmarshal(pb, cm)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back["data"], data) || back["metadata"].(map[string]any)["name"] != obj["metadata"].(map[string]any)["name"] {
		t.Fatal("large values changed")
	}
}

// TestOpenSized: whatever the guess, the field is the minimal encoding.
func TestOpenSized(t *testing.T) {
	t.Parallel()
	for _, guess := range []int{0, 100, 127, 128, 20000, 3 << 20} {
		for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21} {
			body := bytes.Repeat([]byte{7}, n)
			want := protowire.AppendBytes(protowire.AppendTag([]byte("x"), 5, protowire.BytesType), body)
			dst, start, w := openSized([]byte("x"), 5, guess)
			got := closeSized(append(dst, body...), start, w)
			if !bytes.Equal(got, want) {
				t.Fatalf("guess %d body %d: got %x... want %x...", guess, n, got[:min(8, len(got))], want[:min(8, len(want))])
			}
		}
	}
}

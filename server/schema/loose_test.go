package schema

import "testing"

// A Loose schema keeps what a custom resource sent for validation to
// judge, and keeps nulls only where its schema allows them.
func TestLooseDecodeEncode(t *testing.T) {
	any_ := &Schema{Type: Any, Loose: true}
	nullable := &Schema{Type: Any, Loose: true, Nullable: true}
	obj := &Schema{Type: Object, Loose: true, Fields: []*Field{
		{Name: "a", Schema: &Schema{Type: Object, Loose: true, Fields: []*Field{{Name: "x", Schema: any_, OmitEmpty: true, Pointer: true}}}, OmitEmpty: true, Pointer: true},
		{Name: "l", Schema: &Schema{Type: Array, Loose: true, Elem: any_}, OmitEmpty: true, Pointer: true},
		{Name: "m", Schema: &Schema{Type: Map, Loose: true, Elem: any_}, OmitEmpty: true, Pointer: true},
		{Name: "mn", Schema: &Schema{Type: Map, Loose: true, Elem: nullable}, OmitEmpty: true, Pointer: true},
		{Name: "n", Schema: nullable, OmitEmpty: true, Pointer: true},
		{Name: "z", Schema: any_, OmitEmpty: true, Pointer: true},
	}}
	obj.Seal()
	for _, tc := range []struct{ name, in, want string }{
		{"wrong kinds kept", `{"a":"str","l":{"k":1},"m":[1]}`, `{"a":"str","l":{"k":1},"m":[1]}`},
		{"nullable member kept", `{"n":null,"z":null}`, `{"n":null}`},
		{"null map values", `{"m":{"a":null,"b":1},"mn":{"a":null}}`, `{"m":{"b":1},"mn":{"a":null}}`},
		{"null items stay", `{"l":[null,1]}`, `{"l":[null,1]}`},
		{"zero values kept", `{"z":0,"a":{"x":""}}`, `{"a":{"x":""},"z":0}`},
		{"unknown pruned", `{"q":1,"a":{"y":2}}`, `{"a":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decode([]byte(tc.in), obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(Encode(nil, d.Object, obj)); got != tc.want {
				t.Errorf("encoded %s, want %s", got, tc.want)
			}
			stored, err := DecodeStored([]byte(tc.want), obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(Encode(nil, Canonical(d.Object, obj), obj)); got != string(Encode(nil, stored, obj)) {
				t.Errorf("canonical %s differs from the stored form %s", got, Encode(nil, stored, obj))
			}
		})
	}
}

package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestJSONToYAMLGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json []byte
		want string
	}{
		{"configmap get", readTestdata(t, "configmap.json"), "configmap.yaml"},
		{"watch 406 status", readTestdata(t, "status-406-watch.json"), "status-406-watch.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := JSONToYAML(tt.json)
			if err != nil {
				t.Fatal(err)
			}
			if want := readTestdata(t, tt.want); !bytes.Equal(got, want) {
				t.Fatalf("JSONToYAML mismatch\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestYAMLRoundTripGolden(t *testing.T) {
	t.Parallel()
	// The create response, read back and written again, is unchanged.
	want := readTestdata(t, "create-response.yaml")
	j, err := YAMLToJSON(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("round trip\n got %q\nwant %q", got, want)
	}
}

func TestYAMLToJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		yaml      string
		want      string
		wantErr   bool
		strictErr bool
	}{
		{"create body", string(readTestdata(t, "create-body.yaml")),
			`{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"name":"fromyaml"}}`, false, false},
		{"unquoted number stays a number", "data:\n  k: 1\n", `{"data":{"k":1}}`, false, false},
		{"YAML 1.1 booleans", "x: y\n", `{"x":true}`, false, false},
		{"YAML 1.1 boolean key", "y: yes\n", `{"true":true}`, false, false},
		{"duplicate key, last wins", "a: 1\na: 2\n", `{"a":2}`, false, true},
		{"empty", "", `null`, false, false},
		{"tab indentation", "a:\n\tb: 1\n", "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := YAMLToJSON([]byte(tt.yaml))
			if tt.wantErr {
				if !errors.Is(err, ErrYAML) {
					t.Fatalf("err = %v, want ErrYAML", err)
				}
			} else if err != nil || string(got) != tt.want {
				t.Fatalf("YAMLToJSON = %s, %v; want %s", got, err, tt.want)
			}
			_, err = YAMLToJSONStrict([]byte(tt.yaml))
			if (err != nil) != tt.strictErr {
				t.Fatalf("YAMLToJSONStrict err = %v, want error %v", err, tt.strictErr)
			}
			if err != nil && !errors.Is(err, ErrYAML) {
				t.Fatalf("strict err %v does not wrap ErrYAML", err)
			}
		})
	}
}

func TestJSONToYAMLError(t *testing.T) {
	t.Parallel()
	_, err := JSONToYAML([]byte(`{"a":`))
	if !errors.Is(err, ErrYAML) {
		t.Fatalf("err = %v, want ErrYAML", err)
	}
}

func FuzzYAMLToJSON(f *testing.F) {
	for _, s := range []string{"a: 1\n", "- [x, {y: z}]\n", "&a [*a]\n", "? [1]\n: 2\n", "k: !!binary AAE=\n", string(readTestdata(f, "configmap.yaml"))} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, y []byte) {
		j, err := YAMLToJSON(y)
		if err != nil {
			return
		}
		if !json.Valid(j) {
			t.Fatalf("YAMLToJSON(%q) produced invalid JSON %q", y, j)
		}
	})
}

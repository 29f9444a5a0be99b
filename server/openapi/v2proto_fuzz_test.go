package openapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"sigs.k8s.io/yaml"
)

// FuzzEncodeV2Protobuf feeds arbitrary JSON to the encoder: it never
// panics, refuses what does not fit with errProtoForm or errTree, and what it
// accepts is well-formed protobuf.
func FuzzEncodeV2Protobuf(f *testing.F) {
	for _, seed := range []string{
		`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{}}`,
		`{"paths":{"/a":{"get":{"parameters":[{"in":"body","name":"body","schema":{"$ref":"#/definitions/X"}},{"in":"query","name":"q","type":"string","uniqueItems":true}],"responses":{"200":{"description":"OK","schema":{"type":"file"}}},"x-kubernetes-action":"get"}}}}`,
		`{"definitions":{"X":{"type":["string","null"],"items":{"type":"integer","format":"int32"},"additionalProperties":false,"enum":["a",1,null],"default":{"k":[1]},"maximum":1.5,"maxLength":3,"x-y":"z"}}}`,
		`{"securityDefinitions":{"B":{"type":"apiKey","name":"authorization","in":"header"},"O":{"type":"oauth2","flow":"accessCode","scopes":{"read":"r"}}},"security":[{"B":[]}]}`,
		`{"paths":{"/b":{"parameters":[{"$ref":"#/parameters/p"}]}},"parameters":{"p":{"in":"path","name":"n","required":true,"type":"string"}}}`,
		`{"definitions":{"X":{"items":[{"type":"string"}],"allOf":[{"$ref":"#/definitions/Y"}]}}}`,
		`[1,2]`, `{"paths":3}`, `{"x-a":{"b":"c\nd"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		pb, err := encodeV2Protobuf(doc)
		if err != nil {
			if !errors.Is(err, errProtoForm) && !errors.Is(err, errTree) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		if err := wellFormed(pb, 0); err != nil {
			t.Fatalf("malformed protobuf: %v", err)
		}
	})
}

// wellFormed walks protobuf bytes, descending into length-delimited
// fields that parse as messages.
func wellFormed(b []byte, depth int) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType && depth < maxTreeDepth {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			_ = wellFormed(v, depth+1) // strings need not parse as messages
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// yaml11Words read back as booleans in YAML 1.1 (the parser used here)
// though the YAML 1.2 emitter upstream follows writes them plain.
var yaml11Words = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true}

// FuzzAppendYAML checks that the YAML of any JSON value reads back as that
// value.
func FuzzAppendYAML(f *testing.F) {
	for _, c := range yamlCases {
		f.Add(c.json)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		tree, err := parseTree([]byte(doc))
		if err != nil {
			return
		}
		var want any
		if json.Unmarshal([]byte(doc), &want) != nil || hasYAML11Word(want) {
			return
		}
		text := appendYAML(nil, tree)
		var got any
		if err := yaml.Unmarshal(text, &got); err != nil {
			t.Fatalf("%s: YAML %q does not parse: %v", doc, text, err)
		}
		if !reflect.DeepEqual(normalizeJSON(t, want), normalizeJSON(t, got)) {
			t.Fatalf("%s: YAML %q reads back as %#v", doc, text, got)
		}
	})
}

func hasYAML11Word(v any) bool {
	switch t := v.(type) {
	case string:
		return yaml11Words[strings.ToLower(t)]
	case []any:
		for _, e := range t {
			if hasYAML11Word(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range t {
			if yaml11Words[strings.ToLower(k)] || hasYAML11Word(e) {
				return true
			}
		}
	}
	return false
}

// normalizeJSON round-trips v through JSON so numbers compare as float64.
func normalizeJSON(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

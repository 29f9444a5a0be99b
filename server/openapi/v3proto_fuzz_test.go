package openapi

import (
	"errors"
	"testing"
)

// FuzzEncodeV3Protobuf feeds arbitrary JSON to the v3 encoder: it never
// panics, refuses what does not fit with errProtoForm or errTree, and what
// it accepts is well-formed protobuf.
func FuzzEncodeV3Protobuf(f *testing.F) {
	for _, seed := range []string{
		`{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{}}`,
		`{"paths":{"/a":{"get":{"parameters":[{"$ref":"#/components/parameters/p","x":1},{"in":"query","name":"q","schema":{"type":"string","uniqueItems":true}}],"requestBody":{"content":{"*/*":{"schema":{"$ref":"#/components/schemas/X"}}}},"responses":{"200":{"description":"OK","headers":{"H":{"schema":{"type":"integer"}}}},"default":{"$ref":"#/components/responses/E"}},"x-kubernetes-action":"get"}}}}`,
		`{"components":{"schemas":{"X":{"type":"object","nullable":true,"items":{"type":"integer"},"additionalProperties":false,"enum":["a",1,null],"default":{"k":[1]},"maximum":1.5,"maxLength":3,"not":{"type":"string"},"anyOf":[{"$ref":"#/components/schemas/Y"}],"x-y":"z"}}}}`,
		`{"components":{"schemas":{"D":{"properties":{"a":{"default":18446744073709551615},"b":{"default":1e400},"c":{"default":-0.0},"d":{"default":"s"},"e":{"default":false},"f":{"default":null}}}}}}`,
		`{"components":{"securitySchemes":{"B":{"type":"apiKey","name":"authorization","in":"header"},"O":{"type":"oauth2","flows":{"implicit":{"authorizationUrl":"u","scopes":{"r":"read"}}}}}},"security":[{"B":[]}]}`,
		`{"servers":[{"url":"u","variables":{"v":{"default":"1","enum":["1"]}}}],"tags":[{"name":"t"}]}`,
		`{"paths":{"/c":{"get":{"callbacks":{}}}}}`,
		`[1,2]`, `{"paths":3}`, `{"x-a":{"b":"c\nd"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		pb, err := encodeV3Protobuf(doc)
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

package rest

import (
	"testing"

	"platd/server/schema"
)

// TestYAMLReadsAlike checks which compact JSON documents the JSON decoder
// may read for the YAML decoder: a \u escape of any UTF-16 surrogate,
// high or low, lone or paired, in either case, is one YAML refuses.
func TestYAMLReadsAlike(t *testing.T) {
	for _, c := range []struct {
		doc   string
		alike bool
	}{
		{`{"a":"b"}`, true},
		{`{"a":"\ud7ff"}`, true},
		{`{"a":"\ue000"}`, true},
		{`{"a":"\\udc00"}`, true}, // an escaped backslash, then text
		{`{"a":"\ud800"}`, false},
		{`{"a":"\uDBFF"}`, false},
		{`{"a":"\udc00"}`, false},
		{`{"":"\udC00"}`, false},
		{`{"a":"\uDFFF"}`, false},
		{`{"a":"\ud83d\ude00"}`, false},
		{`{"a":"x\/y"}`, false},
		{"{\"a\":\t1}", false}, // a tab YAML may read as indentation
	} {
		v, err := schema.DecodeAny([]byte(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		if got := yamlReadsAlike([]byte(c.doc), v); got != c.alike {
			t.Errorf("%s: read alike %v, want %v", c.doc, got, c.alike)
		}
	}
}

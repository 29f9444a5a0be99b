package rest

import (
	"testing"

	"platd/server/schema"
)

// TestDecodeApplyConfigJSONAndYAML checks that a JSON body and its YAML
// form decode alike, and that duplicates are found in both.
func TestDecodeApplyConfigJSONAndYAML(t *testing.T) {
	j, _, err := decodeApplyConfig([]byte(` {"apiVersion":"v1","data":{"k":"1"},"spec":{"r":3}}`), validationStrict)
	if err != nil {
		t.Fatal(err)
	}
	y, _, err := decodeApplyConfig([]byte("apiVersion: v1\ndata:\n  k: \"1\"\nspec:\n  r: 3\n"), validationStrict)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmtAny(j), fmtAny(y); got != want {
		t.Errorf("JSON %s, YAML %s", got, want)
	}
	for doc, line := range map[string]string{`{"a":1,"a":2}`: "1", "a: 1\na: 2\n": "2"} {
		want := "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line " + line + `: key "a" already set in map`
		if _, _, err := decodeApplyConfig([]byte(doc), validationStrict); err == nil || err.Error() != want {
			t.Errorf("%q strict: %v, want %s", doc, err, want)
		}
		_, warnings, err := decodeApplyConfig([]byte(doc), validationWarn)
		if err != nil || len(warnings) != 1 || warnings[0] != "line "+line+`: key "a" already set in map` {
			t.Errorf("%q warn: %v %v", doc, warnings, err)
		}
		if _, warnings, err := decodeApplyConfig([]byte(doc), validationIgnore); err != nil || len(warnings) != 0 {
			t.Errorf("%q ignore: %v %v", doc, warnings, err)
		}
	}
}

func fmtAny(v any) string {
	b, _ := schema.AppendAny(nil, v)
	return string(b)
}

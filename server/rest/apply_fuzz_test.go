package rest

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"platd/server/apierr"
	"platd/server/schema"
)

// yamlConfig is the apply configuration upstream's decoder reads from
// body, as JSON, or its failure. Bodies whose keys collide only once
// converted (0001081 and 02071) give what Go's map order picks.
func yamlConfig(body []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSON(body)
	if err != nil {
		return nil, err
	}
	v, err := schema.DecodeAny(js)
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = map[string]any{} // no object: the merge refuses its type
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("not an object")
	}
	return schema.AppendAny(nil, v)
}

// FuzzDecodeApplyConfig feeds arbitrary bodies to the apply body decoder
// under each field validation: it returns an object or a 400, never
// panics, reads every body as the YAML decoder (upstream's) reads it,
// and a body the strict mode accepts is accepted without warnings in
// every mode. (The objects are not compared: YAML keys that
// differ but print alike, 0001081 and 02071, collide in an order the
// YAML library leaves to Go's map iteration, here as upstream.)
func FuzzDecodeApplyConfig(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: v\n",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"v"}}`,
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  k: v\n  k: w\n",
		`{"a":1,"a":2}`,
		"- 1\n- 2\n",
		"a: [",
		"",
		"null",
		"a: &x [*x]\n",
		"a: !!binary AAAA\n",
		"? [a, b]\n: c\n",
		"a: 1e400\nb: 0x10\nc: .inf\nd: ~\n",
		"---\na: 1\n---\nb: 2\n",
		"\t{\"a\": 1}",
		`{"a": 1e400, "b": -1e999}`,
		"{\"a\": \"\xff\"}",
		`{"a": "\ud800"}`,
		`{"a": "\ud83d\ude00"}`,
		`{"a": "\/"}`,
		"{\"a\": \"\u0085\u2028\"}",
		"{\"a\"\n: 1}",
		`{"` + strings.Repeat("k", 1100) + `": 1}`,
		`{"a":{"b":[1,2.5,"x",null,true]}}` + "\n",
		"a:\n  b:\n    c: [1, {d: e}]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// The object is the one the YAML decoder gives, also for the
		// JSON documents read by the JSON decoder.
		config, _, err := decodeApplyConfig(body, validationIgnore)
		want, werr := yamlConfig(body)
		if _, jerr := schema.DecodeAny(body); jerr != nil {
			// YAML proper: read by the YAML decoder alone, whose result
			// may depend on map order (see yamlConfig).
		} else if (err == nil) != (werr == nil) {
			t.Fatalf("%q: decoded with error %v, YAML's error %v", body, err, werr)
		} else if err == nil {
			got, gerr := schema.AppendAny(nil, config)
			if gerr != nil || string(got) != string(want) {
				t.Fatalf("%q: decoded as %s (%v), YAML reads %s", body, got, gerr, want)
			}
		}
		strict := false
		for _, v := range []string{validationIgnore, validationWarn, validationStrict} {
			config, warnings, err := decodeApplyConfig(body, v)
			if err != nil {
				var se *apierr.Error
				if !errors.As(err, &se) || se.Status.Code != 400 {
					t.Fatalf("%s: error %v is not a 400 Status", v, err)
				}
				continue
			}
			if config == nil {
				t.Fatalf("%s: no error and no object", v)
			}
			if v == validationIgnore && len(warnings) > 0 {
				t.Fatalf("warnings %v with validation Ignore", warnings)
			}
			if v == validationStrict {
				strict = true
			}
		}
		if !strict {
			return
		}
		for _, v := range []string{validationIgnore, validationWarn} {
			if _, warnings, err := decodeApplyConfig(body, v); err != nil || len(warnings) > 0 {
				t.Fatalf("strict accepts %q but %s gives %v, %v", body, v, warnings, err)
			}
		}
	})
}

package rest

import (
	"errors"
	"testing"

	"platd/server/apierr"
)

// FuzzDecodeApplyConfig feeds arbitrary bodies to the apply body decoder
// under each field validation: it returns an object or a 400, never
// panics, and a body the strict mode accepts is accepted without
// warnings in every mode. (The objects are not compared: YAML keys that
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
		"a:\n  b:\n    c: [1, {d: e}]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
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

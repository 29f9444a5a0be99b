package cel

import (
	"context"
	"testing"

	"platd/server/jsonschema"
	"platd/server/schema"
)

func mustSchema(t testing.TB, s string) *jsonschema.Props {
	t.Helper()
	p, err := jsonschema.ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustObj(t testing.TB, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	v, err := schema.DecodeAny([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func TestSmoke(t *testing.T) {
	s := mustSchema(t, `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0"}],"properties":{"x":{"type":"integer"}}}}}`)
	v, errs := Compile(s, "spec.validation.openAPIV3Schema")
	if errs != nil {
		t.Fatal(errs)
	}
	got := v.Validate(context.Background(), mustObj(t, `{"spec":{"x":0}}`), nil)
	t.Log(got)
	_, errs = Compile(mustSchema(t, `{"type":"object","x-kubernetes-validations":[{"rule":"self.y > 0"}],"properties":{"x":{"type":"integer"}}}`), "spec.validation.openAPIV3Schema")
	t.Log(errs)
}

package cel

import (
	"strings"
	"testing"

	"platd/server/apierr"
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

func errStrings(errs apierr.FieldErrors) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func joinErrs(errs apierr.FieldErrors) string { return strings.Join(errStrings(errs), "\n") }

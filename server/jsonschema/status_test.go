package jsonschema

import (
	"strings"
	"testing"

	"platd/server/apierr"
)

func TestValidateStatusUpdate(t *testing.T) {
	p := mustParse(t, `{"type":"object","properties":{
		"spec":{"type":"object","properties":{"s":{"type":"string","maxLength":1}}},
		"status":{"type":"object","properties":{"replicas":{"type":"integer"},"phase":{"type":"string","enum":["A"]},
			"set":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}},"anyOf":[{"required":["replicas"]}]}}}`)
	cases := []struct {
		name     string
		old, cur string
		want     []string
	}{
		{"spec not checked", `{}`, `{"spec":{"s":"long"},"status":{"replicas":1}}`, nil},
		{"no status", `{}`, `{"spec":{}}`, nil},
		{"status members", `{}`, `{"status":{"replicas":"1","phase":"B"}}`,
			[]string{
				`status.phase: Unsupported value: "B": supported values: "A"`,
				`status.replicas: Invalid value: "string": replicas in body must be of type integer: "string"`,
			}},
		{"status composition", `{}`, `{"status":{}}`,
			[]string{
				`status: Invalid value: "": "" must validate at least one schema (anyOf)`,
				`status.replicas: Required value`,
			}},
		{"unchanged status not ratcheted", `{"status":{"replicas":1,"phase":"B"}}`, `{"status":{"replicas":1,"phase":"B"}}`,
			[]string{`status.phase: Unsupported value: "B": supported values: "A"`}},
		{"set checked", `{"status":{"replicas":1}}`, `{"status":{"replicas":1,"set":["a","a"]}}`,
			[]string{`status.set[1]: Duplicate value: "a"`}},
		{"set kept when old broke it", `{"status":{"replicas":1,"set":["a","a"]}}`, `{"status":{"replicas":1,"set":["a","a"]}}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := render(ValidateStatusUpdate(p, mustDecode(t, c.cur), mustDecode(t, c.old)))
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestValidateTypeMeta(t *testing.T) {
	got := render(ValidateTypeMeta(mustDecode(t, `{"apiVersion":"x/v2","kind":"Bar"}`), "x/v1", "Foo"))
	want := []string{`kind: Invalid value: "Bar": must be Foo`, `apiVersion: Invalid value: "x/v2": must be x/v1`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q", got)
	}
	if errs := ValidateTypeMeta(mustDecode(t, `{"apiVersion":"x/v1","kind":"Foo"}`), "x/v1", "Foo"); len(errs) != 0 {
		t.Errorf("valid type meta: %v", errs)
	}
}

func TestValidateScale(t *testing.T) {
	cases := []struct {
		obj, path string
		selector  bool
		want      []string
	}{
		{`{"spec":{"replicas":3}}`, ".spec.replicas", false, nil},
		{`{"spec":{}}`, ".spec.replicas", false, nil},
		{`{"spec":null}`, ".spec.replicas", false, nil},
		{`{"spec":{"replicas":-1}}`, ".spec.replicas", false, []string{`.spec.replicas: Invalid value: -1: should be a non-negative integer`}},
		{`{"spec":{"replicas":2147483648}}`, ".spec.replicas", false, []string{`.spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647`}},
		{`{"spec":{"replicas":"3"}}`, ".spec.replicas", false, []string{`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64`}},
		{`{"spec":{"replicas":null}}`, ".spec.replicas", false, []string{`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: <nil> is of the type <nil>, expected int64`}},
		{`{"spec":[1]}`, ".spec.replicas", false, []string{`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: [1] is of the type []interface {}, expected map[string]interface{}`}},
		{`{"status":{"selector":"a=b"}}`, ".status.selector", true, nil},
		{`{"status":{"selector":{"a":"b"}}}`, ".status.selector", true, []string{`.status.selector: Invalid value: "": .status.selector accessor error: map[a:b] is of the type map[string]interface {}, expected string`}},
	}
	for _, c := range cases {
		obj := mustDecode(t, c.obj)
		errs := ValidateScaleReplicas(obj, c.path)
		if c.selector {
			errs = ValidateScaleSelector(obj, c.path)
		}
		if got := render(errs); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s at %s:\ngot  %q\nwant %q", c.obj, c.path, got, c.want)
		}
	}
}

func TestBlocksRules(t *testing.T) {
	p := mustParse(t, spec(`{"type":"object","required":["r"],"properties":{"p":{"type":"string","pattern":"^a$"},"m":{"type":"integer","maximum":1}}}`))
	if errs := Validate(p, mustDecode(t, `{"spec":{"x":{"r":1,"p":"b","m":2}}}`)); len(errs) != 2 || BlocksRules(errs) {
		t.Errorf("pattern and maximum failures block rules: %v", render(errs))
	}
	if errs := Validate(p, mustDecode(t, `{"spec":{"x":{}}}`)); !BlocksRules(errs) {
		t.Errorf("a missing required member does not block rules: %v", render(errs))
	}
	want := `<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`
	if got := RulesNotChecked().Error(); got != want {
		t.Errorf("got %s", got)
	}
}

func TestValidateWithScale(t *testing.T) {
	p := mustParse(t, `{"type":"object","properties":{
		"spec":{"type":"object","properties":{"replicas":{"type":"integer"}}},
		"status":{"type":"object","properties":{"replicas":{"type":"integer"},"selector":{"type":"string"}}},
		"tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}}}`)
	scale := WithScale(".spec.replicas", ".status.replicas", ".status.selector")
	obj := mustDecode(t, `{"spec":{"replicas":-1},"status":{"replicas":"2"},"tags":["a","a"]}`)
	want := []string{
		`status.replicas: Invalid value: "string": status.replicas in body must be of type integer: "string"`,
		`.spec.replicas: Invalid value: -1: should be a non-negative integer`,
		`.status.replicas: Invalid value: 0: .status.replicas accessor error: 2 is of the type string, expected int64`,
		`tags[1]: Duplicate value: "a"`,
	}
	for name, errs := range map[string]apierr.FieldErrors{
		"create": Validate(p, obj, scale),
		"update": ValidateUpdate(p, obj, map[string]any{}, scale),
	} {
		if got := render(errs); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", name, got, want)
		}
	}
	wantStatus := []string{
		`status.replicas: Invalid value: "string": replicas in body must be of type integer: "string"`,
		`.status.replicas: Invalid value: 0: .status.replicas accessor error: 2 is of the type string, expected int64`,
		`tags[1]: Duplicate value: "a"`,
	}
	if got := render(ValidateStatusUpdate(p, obj, map[string]any{}, scale)); strings.Join(got, "\n") != strings.Join(wantStatus, "\n") {
		t.Errorf("status:\ngot  %q\nwant %q", got, wantStatus)
	}
	if got := render(Validate(nil, obj, scale)); len(got) != 2 {
		t.Errorf("no schema: %q", got)
	}
}

// TestValidateConcurrently validates with one schema from many goroutines,
// as concurrent writes of a custom resource do.
func TestValidateConcurrently(t *testing.T) {
	p := mustParse(t, spec(`{"type":"object","properties":{"n":{"type":"string","pattern":"^[a-z]+$","enum":["a","b"]}},
		"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`))
	obj := mustDecode(t, `{"spec":{"x":{"n":"C","apiVersion":"v1","kind":"A"}}}`)
	done := make(chan int)
	for i := 0; i < 8; i++ {
		go func() {
			n := 0
			for j := 0; j < 50; j++ {
				n += len(Validate(p, obj)) + len(ValidateUpdate(p, obj, obj))
			}
			done <- n
		}()
	}
	for i := 0; i < 8; i++ {
		if n := <-done; n != 100 {
			t.Errorf("errors: %d", n)
		}
	}
}

package cel

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestValidate evaluates rules against objects, with old objects for
// transition rules, and checks the errors word for word.
func TestValidate(t *testing.T) {
	tests := []struct {
		name, schema string
		obj, old     string
		want         []string
	}{
		{"default message", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0"}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":0}}`, ``, []string{`spec: Invalid value: "object": failed rule: self.x > 0`}},
		{"passes", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0"}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":1}}`, ``, nil},
		{"root rule", `{"type":"object","x-kubernetes-validations":[{"rule":"self.metadata.name.startsWith('a')"}]}`,
			`{"metadata":{"name":"b"}}`, ``, []string{`<nil>: Invalid value: "object": failed rule: self.metadata.name.startsWith('a')`}},
		{"message", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0","message":" x must be positive "}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":0}}`, ``, []string{`spec: Invalid value: "object": x must be positive`}},
		{"messageExpression", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0","message":"m","messageExpression":"'x is ' + string(self.x)"}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":-2}}`, ``, []string{`spec: Invalid value: "object": x is -2`}},
		{"empty messageExpression falls back to message", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0","message":"m","messageExpression":"''"}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":0}}`, ``, []string{`spec: Invalid value: "object": m`}},
		{"failing messageExpression falls back to the rule", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0","messageExpression":"self.s"}],"properties":{"x":{"type":"integer"},"s":{"type":"string"}}}}}`,
			`{"spec":{"x":0}}`, ``, []string{`spec: Invalid value: "object": failed rule: self.x > 0`}},
		{"reason forbidden", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0","reason":"FieldValueForbidden"}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":0}}`, ``, []string{`spec: Forbidden: failed rule: self.x > 0`}},
		{"reason required", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"has(self.x)","message":"x is needed","reason":"FieldValueRequired"}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{}}`, ``, []string{`spec: Required value: x is needed`}},
		{"reason duplicate", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"false","reason":"FieldValueDuplicate"}]}}}`,
			`{"spec":{}}`, ``, []string{`spec: Duplicate value: "object"`}},
		{"reason invalid", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"false","reason":"FieldValueInvalid"}]}}}`,
			`{"spec":{}}`, ``, []string{`spec: Invalid value: "object": failed rule: false`}},
		{"fieldPath", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.a.b > 0","fieldPath":".a.b"},{"rule":"false","fieldPath":".m['k.1']"}],"properties":{"a":{"type":"object","properties":{"b":{"type":"integer"}}},"m":{"type":"object","additionalProperties":{"type":"string"}}}}}}`,
			`{"spec":{"a":{"b":0}}}`, ``, []string{`spec.a.b: Invalid value: "object": failed rule: self.a.b > 0`, `spec.m[k.1]: Invalid value: "object": failed rule: false`}},
		{"string node", `{"type":"object","properties":{"spec":{"type":"object","properties":{"name":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self.size() > 2"}]}}}}}`,
			`{"spec":{"name":"a"}}`, ``, []string{`spec.name: Invalid value: "string": failed rule: self.size() > 2`}},
		{"list items and map values", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer","x-kubernetes-validations":[{"rule":"self < 10"}]}},"m":{"type":"object","additionalProperties":{"type":"integer","x-kubernetes-validations":[{"rule":"self < 10"}]}}}}`,
			`{"l":[1,20,30],"m":{"b":11,"a":1}}`, ``, []string{`l[1]: Invalid value: "integer": failed rule: self < 10`, `l[2]: Invalid value: "integer": failed rule: self < 10`, `m[b]: Invalid value: "integer": failed rule: self < 10`}},
		{"null values are not checked", `{"type":"object","properties":{"s":{"type":"string","nullable":true,"x-kubernetes-validations":[{"rule":"self == 'x'"}]}}}`,
			`{"s":null}`, ``, nil},
		{"int-or-string", `{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true,"maxLength":8,"x-kubernetes-validations":[{"rule":"type(self) == int ? self < 10 : self.endsWith('%')"}]}}}`,
			`{"p":"5"}`, ``, []string{`p: Invalid value: "": failed rule: type(self) == int ? self < 10 : self.endsWith('%')`}},
		{"runtime error", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.a == 1"}],"properties":{"a":{"type":"integer"}}}}}`,
			`{"spec":{}}`, ``, []string{`spec: Invalid value: "object": no such key: a evaluating rule: self.a == 1`}},
		// transition rules
		{"immutable on create", `{"type":"object","properties":{"spec":{"type":"object","properties":{"x":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf","message":"x is immutable"}]}}}}}`,
			`{"spec":{"x":"a"}}`, ``, nil},
		{"immutable on update", `{"type":"object","properties":{"spec":{"type":"object","properties":{"x":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf","message":"x is immutable"}]}}}}}`,
			`{"spec":{"x":"b"}}`, `{"spec":{"x":"a"}}`, []string{`spec.x: Invalid value: "string": x is immutable`}},
		{"immutable when newly set", `{"type":"object","properties":{"spec":{"type":"object","properties":{"x":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf","message":"x is immutable"}]}}}}}`,
			`{"spec":{"x":"b"}}`, `{"spec":{}}`, nil},
		{"list-map items correlate by key", `{"type":"object","properties":{"l":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","maxLength":5},"v":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.v >= oldSelf.v","message":"v may only grow"}]}}}}`,
			`{"l":[{"k":"b","v":0},{"k":"a","v":1}]}`, `{"l":[{"k":"a","v":2},{"k":"b","v":0}]}`, []string{`l[1]: Invalid value: "object": v may only grow`}},
		{"map values correlate by key", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= oldSelf"}]}}}}`,
			`{"m":{"a":1,"b":5}}`, `{"m":{"a":2,"c":9}}`, []string{`m[a]: Invalid value: "integer": failed rule: self >= oldSelf`}},
		{"optionalOldSelf on create", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"oldSelf.hasValue() ? self.x >= oldSelf.value().x : self.x == 0","optionalOldSelf":true}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":3}}`, ``, []string{`spec: Invalid value: "object": failed rule: oldSelf.hasValue() ? self.x >= oldSelf.value().x : self.x == 0`}},
		{"optionalOldSelf on update", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"oldSelf.hasValue() ? self.x >= oldSelf.value().x : self.x == 0","optionalOldSelf":true}],"properties":{"x":{"type":"integer"}}}}}`,
			`{"spec":{"x":3}}`, `{"spec":{"x":4}}`, []string{`spec: Invalid value: "object": failed rule: oldSelf.hasValue() ? self.x >= oldSelf.value().x : self.x == 0`}},
		{"ratcheting: unchanged invalid value passes", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0"}],"properties":{"x":{"type":"integer"},"y":{"type":"integer"}}}}}`,
			`{"spec":{"x":0}}`, `{"spec":{"x":0}}`, nil},
		{"ratcheting: changed invalid value fails", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0"}],"properties":{"x":{"type":"integer"},"y":{"type":"integer"}}}}}`,
			`{"spec":{"x":0,"y":1}}`, `{"spec":{"x":0}}`, []string{`spec: Invalid value: "object": failed rule: self.x > 0`}},
		{"ratcheting reaches atomic list items through the list", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer","x-kubernetes-validations":[{"rule":"self < 10"}]}}}}`,
			`{"l":[20]}`, `{"l":[20]}`, nil},
		{"embedded resource", `{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self.kind == 'Pod'"}]}}}`,
			`{"e":{"kind":"Service","apiVersion":"v1","spec":{}}}`, ``, []string{`e: Invalid value: "object": failed rule: self.kind == 'Pod'`}},
		{"set and map lists compare without order", `{"type":"object","x-kubernetes-validations":[{"rule":"self.s == oldSelf.s && self.m == oldSelf.m"}],"properties":{"s":{"type":"array","maxItems":5,"x-kubernetes-list-type":"set","items":{"type":"string","maxLength":5}},"m":{"type":"array","maxItems":5,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","maxLength":5},"v":{"type":"integer"}}}}}}`,
			`{"s":["a","b"],"m":[{"k":"x","v":1},{"k":"y","v":2}],"z":1}`, `{"s":["b","a"],"m":[{"k":"y","v":2},{"k":"x","v":1}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, errs := Compile(mustSchema(t, tt.schema), "p")
			if errs != nil {
				t.Fatalf("compile: %s", joinErrs(errs))
			}
			got := errStrings(v.Validate(context.Background(), mustObj(t, tt.obj), mustObj(t, tt.old)))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestRuntimeCost checks the per-rule limit and the per-object budget.
func TestRuntimeCost(t *testing.T) {
	t.Run("per rule", func(t *testing.T) {
		// matches costs a tenth of the string times a quarter of the
		// regex: 11,000 x 100 is over the per-call limit.
		rule := "self.s.matches('" + strings.Repeat("[a-z]", 80) + "')"
		v, errs := Compile(mustSchema(t, `{"type":"object","x-kubernetes-validations":[{"rule":"`+rule+`"},{"rule":"false"}],"properties":{"s":{"type":"string","maxLength":100000}}}`), "p")
		if errs != nil {
			t.Fatal(joinErrs(errs))
		}
		got := joinErrs(v.Validate(context.Background(), map[string]any{"s": strings.Repeat("A", 110000)}, nil))
		want := `<nil>: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ` + rule
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("per object", func(t *testing.T) {
		var rules []string
		// Each rule stays under the per-rule limit (9,001 x 100); twelve
		// pass the object's budget.
		for i := 0; i < 12; i++ {
			rules = append(rules, `{"rule":"self.s.matches('`+strings.Repeat("[A-Z]", 80)+`')"}`)
		}
		v, errs := Compile(mustSchema(t, `{"type":"object","x-kubernetes-validations":[`+strings.Join(rules, ",")+`],"properties":{"s":{"type":"string","maxLength":100000}}}`), "p")
		if errs != nil {
			t.Fatal(joinErrs(errs))
		}
		got := joinErrs(v.Validate(context.Background(), map[string]any{"s": strings.Repeat("A", 90000)}, nil))
		want := `<nil>: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

// TestRatchetingWarnings checks a failure ratcheting lets pass comes back
// as a warning, worded as the error would be.
func TestRatchetingWarnings(t *testing.T) {
	v, errs := Compile(mustSchema(t, `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0","message":"x must be positive"},{"rule":"self.x == oldSelf.x"}],"properties":{"x":{"type":"integer"}}}}}`), "p")
	if errs != nil {
		t.Fatal(joinErrs(errs))
	}
	obj := mustObj(t, `{"spec":{"x":0}}`)
	errs, warnings := v.ValidateWithWarnings(context.Background(), obj, mustObj(t, `{"spec":{"x":0}}`))
	if errs != nil || strings.Join(warnings, "\n") != `spec: Invalid value: "object": x must be positive` {
		t.Errorf("got %v, %q", joinErrs(errs), warnings)
	}
	// A transition rule is never ratcheted; a changed value fails.
	errs, warnings = v.ValidateWithWarnings(context.Background(), obj, mustObj(t, `{"spec":{"x":5}}`))
	want := `spec: Invalid value: "object": x must be positive` + "\n" + `spec: Invalid value: "object": failed rule: self.x == oldSelf.x`
	if joinErrs(errs) != want || warnings != nil {
		t.Errorf("got %v, %q", joinErrs(errs), warnings)
	}
}

// TestRatchetingInAtomicMap: a member of an atomic map has no oldSelf, yet
// an unchanged one ratchets though a sibling changed, as upstream pairs
// the members for ratcheting; a changed one fails.
func TestRatchetingInAtomicMap(t *testing.T) {
	v, errs := Compile(mustSchema(t, `{"type":"object","properties":{"o":{"type":"object","x-kubernetes-map-type":"atomic","properties":{`+
		`"a":{"type":"string","x-kubernetes-validations":[{"rule":"self != 'bad'"}]},"b":{"type":"integer"}}}}}`), "p")
	if errs != nil {
		t.Fatal(joinErrs(errs))
	}
	errs, warnings := v.ValidateWithWarnings(context.Background(), mustObj(t, `{"o":{"a":"bad","b":2}}`), mustObj(t, `{"o":{"a":"bad","b":1}}`))
	if errs != nil || strings.Join(warnings, "\n") != `o.a: Invalid value: "string": failed rule: self != 'bad'` {
		t.Errorf("unchanged member: %v, %q", joinErrs(errs), warnings)
	}
	errs, _ = v.ValidateWithWarnings(context.Background(), mustObj(t, `{"o":{"a":"bad","b":2}}`), mustObj(t, `{"o":{"a":"good","b":1}}`))
	if joinErrs(errs) != `o.a: Invalid value: "string": failed rule: self != 'bad'` {
		t.Errorf("changed member: %v", joinErrs(errs))
	}
}

// TestValidateStopsAtDeadline checks a slow evaluation stops when time
// runs out, reported as the budget running out.
func TestValidateStopsAtDeadline(t *testing.T) {
	v, errs := Compile(mustSchema(t, `{"type":"object","x-kubernetes-validations":[{"rule":"self.l.all(x, x > 0)"}],"properties":{"l":{"type":"array","items":{"type":"integer"}}}}`), "p")
	if errs != nil {
		t.Fatal(joinErrs(errs))
	}
	l := make([]any, 100000)
	for i := range l {
		l[i] = int64(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	got := joinErrs(v.Validate(ctx, map[string]any{"l": l}, nil))
	if want := `<nil>: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

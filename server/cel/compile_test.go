package cel

import (
	"strings"
	"testing"
)

const rootPath_ = "spec.validation.openAPIV3Schema"

// TestCompileErrors checks CRD-time refusals: texts and paths as
// upstream's.
func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []string // whole errors; a trailing "…" matches a prefix
	}{
		{"undefined field", `{"type":"object","x-kubernetes-validations":[{"rule":"self.y > 0"}],"properties":{"x":{"type":"integer"}}}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.y > 0", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'y'
 | self.y > 0
 | ....^`}},
		{"not a bool", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x","message":"m"}],"properties":{"x":{"type":"integer"}}}}}`,
			[]string{`spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.x", Message:"m", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool`}},
		{"empty rule", `{"type":"object","x-kubernetes-validations":[{"rule":"  "}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Required value: rule is not specified`}},
		{"blank message", `{"type":"object","x-kubernetes-validations":[{"rule":"true","message":" "}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].message: Invalid value: " ": message must be non-empty if specified`}},
		{"message line break", `{"type":"object","x-kubernetes-validations":[{"rule":"true","message":"a\nb"}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].message: Invalid value: "a\nb": message must not contain line breaks`}},
		{"multi-line rule without message", `{"type":"object","x-kubernetes-validations":[{"rule":"true &&\ntrue"}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks`}},
		{"blank messageExpression", `{"type":"object","x-kubernetes-validations":[{"rule":"true","messageExpression":" "}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].messageExpression: Required value: messageExpression must be non-empty if specified`}},
		{"bad reason", `{"type":"object","x-kubernetes-validations":[{"rule":"true","reason":"Bogus"}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`}},
		{"bad fieldPath", `{"type":"object","x-kubernetes-validations":[{"rule":"true","fieldPath":".nope"}],"properties":{"x":{"type":"integer"}}}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].fieldPath: Invalid value: ".nope": fieldPath must be a valid path`}},
		{"fieldPath into a list", `{"type":"object","x-kubernetes-validations":[{"rule":"true","fieldPath":".l[0]"}],"properties":{"l":{"type":"array","items":{"type":"integer"}}}}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].fieldPath: Invalid value: ".l[0]": fieldPath must be a valid path`}},
		{"messageExpression compile error", `{"type":"object","x-kubernetes-validations":[{"rule":"true","messageExpression":"self.nope"}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:"true", Message:"", MessageExpression:"self.nope", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'
 | self.nope
 | ....^`}},
		{"messageExpression not a string", `{"type":"object","x-kubernetes-validations":[{"rule":"true","messageExpression":"1"}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:"true", Message:"", MessageExpression:"1", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression must evaluate to a string`}},
		{"optionalOldSelf without oldSelf", `{"type":"object","x-kubernetes-validations":[{"rule":"true","optionalOldSelf":true}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`}},
		{"oldSelf in atomic list items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}`,
			[]string{`spec.validation.openAPIV3Schema.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[l]`}},
		{"oldSelf below an atomic map", `{"type":"object","properties":{"o":{"type":"object","x-kubernetes-map-type":"atomic","properties":{"a":{"type":"object","properties":{"b":{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}}}}`,
			[]string{`spec.validation.openAPIV3Schema.properties[o].properties[a].properties[b].x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[o]`}},
		{"untyped node", `{"type":"object","properties":{"u":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"true"}]}}}`,
			[]string{`spec.validation.openAPIV3Schema.properties[u].x-kubernetes-validations: Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations`}},
		{"strings v3 is not offered", `{"type":"object","x-kubernetes-validations":[{"rule":"'ab'.reverse() == 'ba'"}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"'ab'.reverse() == 'ba'", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:13: undeclared reference to 'reverse' (in container '')
 | 'ab'.reverse() == 'ba'
 | ............^`}},
		{"bad regex literal", `{"type":"object","x-kubernetes-validations":[{"rule":"'a'.matches('[')"}]}`,
			[]string{`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"'a'.matches('[')", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:13: invalid matches argument…`}},
		{"shape errors below skip compiling above", `{"type":"object","x-kubernetes-validations":[{"rule":"self.nope"}],"properties":{"x":{"type":"integer","x-kubernetes-validations":[{"rule":""}]}}}`,
			[]string{`spec.validation.openAPIV3Schema.properties[x].x-kubernetes-validations[0].rule: Required value: rule is not specified`}},
		{"errors in schema order", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string","x-kubernetes-validations":[{"rule":"1"}]}},"a":{"type":"string","x-kubernetes-validations":[{"rule":"2"}]}}}`,
			[]string{
				`spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"2", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool`,
				`spec.validation.openAPIV3Schema.properties[m].additionalProperties.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, errs := Compile(mustSchema(t, tt.schema), rootPath_)
			if v != nil {
				t.Fatalf("compiled; want errors")
			}
			got := errStrings(errs)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors:\n%s", len(got), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if p, ok := strings.CutSuffix(w, "…"); ok {
					if !strings.HasPrefix(got[i], p) {
						t.Errorf("error %d:\ngot  %s\nwant %s…", i, got[i], p)
					}
				} else if got[i] != w {
					t.Errorf("error %d:\ngot  %s\nwant %s", i, got[i], w)
				}
			}
		})
	}
}

// TestCompileAccepts checks rules upstream accepts.
func TestCompileAccepts(t *testing.T) {
	for _, s := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"l":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"}},"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}`,
		`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf","message":"immutable"}]}}}}`,
		`{"type":"object","x-kubernetes-validations":[{"rule":"!oldSelf.hasValue() || self.x >= oldSelf.value().x","optionalOldSelf":true}],"properties":{"x":{"type":"integer"}}}`,
		`{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0","fieldPath":".x","reason":"FieldValueForbidden","messageExpression":"'bad x: ' + string(self.x)"}],"properties":{"x":{"type":"integer"}}}`,
		`{"type":"object","x-kubernetes-validations":[{"rule":"true","fieldPath":".m['a.b']"}],"properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`,
		`{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self.kind != '' && self.metadata.name != ''"}]}}}`,
	} {
		if _, errs := Compile(mustSchema(t, s), rootPath_); errs != nil {
			t.Errorf("%s:\n%s", s, joinErrs(errs))
		}
	}
}

// TestCostRefusals checks the static cost limits and their messages.
func TestCostRefusals(t *testing.T) {
	const hint = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
	t.Run("unbounded rule", func(t *testing.T) {
		_, errs := Compile(mustSchema(t, `{"type":"object","x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, x == y))"}],"properties":{"l":{"type":"array","items":{"type":"string"}}}}`), rootPath_)
		got := errStrings(errs)
		want := []string{
			rootPath_ + `.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x` + hint,
			rootPath_ + `.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
			rootPath_ + `: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x` + hint,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("bounded rule passes", func(t *testing.T) {
		_, errs := Compile(mustSchema(t, `{"type":"object","x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, x == y))"}],"properties":{"l":{"type":"array","maxItems":100,"items":{"type":"string","maxLength":64}}}}`), rootPath_)
		if errs != nil {
			t.Error(joinErrs(errs))
		}
	})
	t.Run("cardinality of enclosing lists", func(t *testing.T) {
		// Alone the rule is cheap; under lists of 1000 x 1000 items it
		// may run a million times.
		_, errs := Compile(mustSchema(t, `{"type":"object","properties":{"a":{"type":"array","maxItems":1000,"items":{"type":"array","maxItems":1000,"items":{"type":"string","maxLength":1000,"x-kubernetes-validations":[{"rule":"self.contains('abc')"}]}}}}}`), rootPath_)
		got := joinErrs(errs)
		if !strings.HasPrefix(got, rootPath_+`.properties[a].items.items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of `) ||
			!strings.Contains(got, "x"+hint) {
			t.Errorf("got\n%s", got)
		}
	})
	t.Run("factor wording", func(t *testing.T) {
		for _, c := range []struct {
			cost uint64
			want string
		}{
			{12000000, "1.200000x"}, {25000000, "2.5x"}, {2000000000, "more than 100x"},
		} {
			if got := costErrorMessage("estimated rule cost", c.cost, StaticEstimatedCostLimit); !strings.Contains(got, "by factor of "+c.want+" (") {
				t.Errorf("%d: %s", c.cost, got)
			}
		}
	})
	t.Run("total over the schema", func(t *testing.T) {
		// Each rule is under the per-rule limit, together over the
		// schema's: the four most expensive are named.
		rules := []string{}
		for i := 0; i < 12; i++ {
			rules = append(rules, `{"rule":"self.l.all(x, self.l.all(y, x == y))"}`)
		}
		_, errs := Compile(mustSchema(t, `{"type":"object","x-kubernetes-validations":[`+strings.Join(rules, ",")+`],"properties":{"l":{"type":"array","maxItems":1000,"items":{"type":"string","maxLength":10}}}}`), rootPath_)
		got := errStrings(errs)
		if len(got) != 5 {
			t.Fatalf("got\n%s", strings.Join(got, "\n"))
		}
		for i := 0; i < 4; i++ {
			if want := rootPath_ + ".x-kubernetes-validations[" + string(rune('0'+i)) + "].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"; got[i] != want {
				t.Errorf("got  %s\nwant %s", got[i], want)
			}
		}
		if !strings.HasPrefix(got[4], rootPath_+": Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of ") {
			t.Errorf("got %s", got[4])
		}
	})
}

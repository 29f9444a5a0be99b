package cel

import (
	"context"
	"encoding/json"
	"testing"
)

// fuzzSchemas are small schemas of every node kind, rule placed at the
// root; fuzzObjects are values for them (some not matching).
var (
	fuzzSchemas = []string{
		`{"type":"object","properties":{"a":{"type":"integer"},"s":{"type":"string","maxLength":8},"l":{"type":"array","maxItems":4,"items":{"type":"string","maxLength":4}},"m":{"type":"object","maxProperties":4,"additionalProperties":{"type":"number"}}}}`,
		`{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true},"t":{"type":"string","format":"date-time"},"d":{"type":"string","format":"duration"},"b":{"type":"string","format":"byte"}}}`,
		`{"type":"object","properties":{"lm":{"type":"array","maxItems":3,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","maxLength":3},"v":{"type":"boolean"}}}},"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}`,
	}
	fuzzObjects = []string{
		`{"a":1,"s":"xy","l":["a","b"],"m":{"k":1.5},"p":"5%","t":"2024-01-01T00:00:00Z","d":"1h","b":"aGk=","lm":[{"k":"a","v":true}],"e":{"kind":"K","apiVersion":"v1","metadata":{"name":"n"}}}`,
		`{"a":"wrong","s":1,"l":"x","m":[],"p":1.5,"t":"not a time","d":"x","b":"!!","lm":[{"v":1}],"e":{"metadata":1}}`,
		`{}`,
	}
)

func FuzzCompile(f *testing.F) {
	seeds := []string{
		"self.a > 0", "self.s.matches('^[a-z]+$')", "self.l.all(x, x.size() < 3)", "self.m.exists(k, v, v > 1.0)",
		"oldSelf.a <= self.a", "type(self.p) == string", "self.t < timestamp('2030-01-01T00:00:00Z')",
		"self.lm.exists(i, i.k == 'a')", "self.e.metadata.name == 'n'", "quantity('1Gi').isGreaterThan(quantity('1'))",
		"url('https://a/b').getHost() == 'a'", "cidr('10.0.0.0/8').containsIP('10.1.1.1')", "format.named('uuid').hasValue()",
		"(", "self.", "'\\xff'", "1/0 == 1", "self.l[10] == 'a'", "[1,2,3].sum() == 6", "self.?a.orValue(0) == 0",
	}
	for i, s := range seeds {
		f.Add(s, "'msg ' + string(self.a)", uint8(i))
	}
	f.Fuzz(func(t *testing.T, rule, msgExpr string, sel uint8) {
		var sch map[string]any
		if err := json.Unmarshal([]byte(fuzzSchemas[int(sel)%len(fuzzSchemas)]), &sch); err != nil {
			t.Fatal(err)
		}
		r := map[string]any{"rule": rule}
		if sel&4 != 0 {
			r["messageExpression"] = msgExpr
		}
		if sel&8 != 0 {
			r["optionalOldSelf"] = true
		}
		if sel&16 != 0 {
			r["fieldPath"] = msgExpr
		}
		sch["x-kubernetes-validations"] = []any{r}
		raw, _ := json.Marshal(sch)
		v, errs := Compile(mustSchema(t, string(raw)), "p")
		if v == nil {
			if len(errs) == 0 {
				t.Fatal("no validator and no errors")
			}
			return
		}
		for i, o := range fuzzObjects {
			old := mustObj(t, fuzzObjects[(i+int(sel))%len(fuzzObjects)])
			_ = v.Validate(context.Background(), mustObj(t, o), old)
			_ = v.Validate(context.Background(), mustObj(t, o), nil)
		}
	})
}

// FuzzPolicyTypeCheck checks arbitrary expressions and variables against
// the fuzz schemas: an answer, never a panic, and the same answer twice.
func FuzzPolicyTypeCheck(f *testing.F) {
	for i, s := range []string{
		"object.a > 0", "object.s + variables.v", "params.x == 1", "oldObject.l.all(x, x.size() < 3)",
		"authorizer.requestResource.check('get').allowed()", "object.lm.exists(i, i.k == 'a')", "(", "variables.",
		"request.userInfo.groups.exists(g, g == 'x') && namespaceObject.metadata.name == 'n'",
	} {
		f.Add(s, "object.s", uint8(i))
	}
	f.Fuzz(func(t *testing.T, expr, variable string, sel uint8) {
		object := mustSchema(t, fuzzSchemas[int(sel)%len(fuzzSchemas)])
		paramsSchema := object
		if sel&4 != 0 {
			paramsSchema = nil
		}
		c, err := NewPolicyTypeCheck(object, "Fuzz", paramsSchema, "Params", sel&8 != 0)
		if err != nil {
			t.Fatal(err)
		}
		c.Variable("v", variable)
		if first, second := c.Check(expr), c.Check(expr); first != second {
			t.Fatalf("%q checked twice: %q, then %q", expr, first, second)
		}
	})
}

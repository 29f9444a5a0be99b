package jsonschema

import (
	"encoding/json"
	"testing"
)

func TestParseJSONForms(t *testing.T) {
	raw := `{"type":"object","required":["spec"],"properties":{
	  "spec":{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-map-type":"atomic"},
	  "list":{"type":"array","items":{"type":"integer","default":3},"x-kubernetes-list-type":"set"},
	  "tuple":{"type":"array","items":[{"type":"string"}]},
	  "open":{"type":"object","additionalProperties":false,"x-kubernetes-preserve-unknown-fields":true},
	  "dep":{"type":"object","dependencies":{"a":["b"],"c":{"type":"object"}}},
	  "big":{"type":"integer","default":9007199254740993,"enum":[1,"x",null]}},
	 "x-kubernetes-validations":[{"rule":"self.spec.size() > 0","reason":"FieldValueInvalid"}]}`
	p, err := ParseJSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	spec := p.Properties["spec"]
	if spec.ValueSchema() == nil || spec.ValueSchema().Type != "string" || spec.MapType() != "atomic" {
		t.Errorf("spec = %+v", spec)
	}
	list := p.Properties["list"]
	if list.ListType() != "set" || list.ItemSchema() == nil || string(list.ItemSchema().Default.Raw) != "3" {
		t.Errorf("list = %+v", list)
	}
	if tuple := p.Properties["tuple"]; tuple.ItemSchema() != nil || len(tuple.Items.JSONSchemas) != 1 {
		t.Errorf("tuple = %+v", tuple.Items)
	}
	open := p.Properties["open"]
	if !open.PreservesUnknown() || open.AdditionalProperties.Allows || open.ValueSchema() != nil {
		t.Errorf("open = %+v", open)
	}
	dep := p.Properties["dep"].Dependencies
	if len(dep["a"].Property) != 1 || dep["c"].Schema == nil {
		t.Errorf("dependencies = %+v", dep)
	}
	v, err := p.Properties["big"].Default.Value()
	if err != nil || v != int64(9007199254740993) {
		t.Errorf("default = %#v, %v", v, err)
	}
	if len(p.XValidations) != 1 || *p.XValidations[0].Reason != "FieldValueInvalid" {
		t.Errorf("validations = %+v", p.XValidations)
	}
	if p.ListType() != "atomic" || p.MapType() != "granular" {
		t.Errorf("defaults of list and map type: %q %q", p.ListType(), p.MapType())
	}
	// Marshalling gives back the same document.
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	out2, _ := json.Marshal(again)
	if string(out) != string(out2) {
		t.Errorf("round trip differs:\n%s\n%s", out, out2)
	}
}

func TestParseGeneric(t *testing.T) {
	p, err := Parse(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": int64(5)}}})
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Properties["n"].Maximum; m == nil || *m != 5 {
		t.Errorf("maximum = %v", m)
	}
	if _, err := ParseJSON([]byte(`{"type":3}`)); err == nil {
		t.Error("a number as type parsed")
	}
}

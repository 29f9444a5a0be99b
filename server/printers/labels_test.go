package printers

import (
	"errors"
	"testing"
)

func TestFormatLabels(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]string
		want string
	}{
		{nil, "<none>"},
		{map[string]string{}, "<none>"},
		{map[string]string{"app": "web"}, "app=web"},
		{map[string]string{"tier": "db", "app": "web", "a/b": ""}, "a/b=,app=web,tier=db"},
	} {
		if got := formatLabels(tc.in); got != tc.want {
			t.Errorf("formatLabels(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSelectorText(t *testing.T) {
	for _, tc := range []struct {
		name, sel string
		want      string
		bad       bool
	}{
		{"null", `{"s":null}`, "", false},
		{"empty", `{"s":{}}`, "", false},
		{"labels sorted", `{"s":{"matchLabels":{"b":"2","a":"1"}}}`, "a=1,b=2", false},
		{"in sorts values", `{"s":{"matchExpressions":[{"key":"env","operator":"In","values":["prod","dev"]}]}}`, "env in (dev,prod)", false},
		{"notin", `{"s":{"matchExpressions":[{"key":"env","operator":"NotIn","values":["x"]}]}}`, "env notin (x)", false},
		{"exists", `{"s":{"matchExpressions":[{"key":"gpu","operator":"Exists"}]}}`, "gpu", false},
		{"does not exist", `{"s":{"matchExpressions":[{"key":"gpu","operator":"DoesNotExist"}]}}`, "!gpu", false},
		{"mixed sorted by key", `{"s":{"matchLabels":{"z":"1"},"matchExpressions":[{"key":"a","operator":"Exists"},{"key":"m","operator":"In","values":["x"]}]}}`, "a,m in (x),z=1", false},
		{"prefixed key", `{"s":{"matchLabels":{"example.com/app":"web"}}}`, "example.com/app=web", false},
		{"unknown operator", `{"s":{"matchExpressions":[{"key":"a","operator":"Near","values":["x"]}]}}`, "", true},
		{"in without values", `{"s":{"matchExpressions":[{"key":"a","operator":"In"}]}}`, "", true},
		{"exists with values", `{"s":{"matchExpressions":[{"key":"a","operator":"Exists","values":["x"]}]}}`, "", true},
		{"bad key", `{"s":{"matchLabels":{"-a":"1"}}}`, "", true},
		{"bad value", `{"s":{"matchLabels":{"a":"b c"}}}`, "", true},
		{"bad prefix", `{"s":{"matchLabels":{"Ex_ample/a":"1"}}}`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := selectorText(object(decode(t, tc.sel), "s"))
			if tc.bad {
				if !errors.Is(err, errSelector) {
					t.Fatalf("err %v, want errSelector", err)
				}
				if formatSelector(object(decode(t, tc.sel), "s")) != "<error>" {
					t.Error("formatSelector of a bad selector is not <error>")
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("selectorText = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if got := formatSelector(nil); got != "<none>" {
		t.Errorf("formatSelector(nil) = %q", got)
	}
}

func TestSelectorStruct(t *testing.T) {
	sel := object(decode(t, `{"s":{"matchLabels":{"b":"2","a":"1"},"matchExpressions":[{"key":"env","operator":"In","values":["x","y"]},{"key":"k","operator":"Exists"}]}}`), "s")
	want := "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{" +
		"LabelSelectorRequirement{Key:env,Operator:In,Values:[x y],},LabelSelectorRequirement{Key:k,Operator:Exists,Values:[],},},}"
	if got := selectorStruct(sel); got != want {
		t.Errorf("selectorStruct:\n got  %s\n want %s", got, want)
	}
	if got := selectorStruct(map[string]any{}); got != "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}" {
		t.Errorf("empty selector: %s", got)
	}
}

package jsonpath

import (
	"bytes"
	"testing"
)

const fuzzObject = `{"kind": "Widget", "metadata": {"name": "w", "labels": {"a.b/c": "d"}},
	"spec": {"replicas": 3, "ratio": 0.5, "on": true, "nothing": null, "tags": ["x", "y"],
	"items": [{"type": "Ready", "status": "True", "n": 1}, {"type": "Other", "n": 2.5}, null, [1, [2]]]}}`

// FuzzTemplate parses and evaluates arbitrary templates: neither may panic
// or run away, whatever the input.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"{.spec.replicas}", "{..n}", "{.spec.items[?(@.type==\"Ready\")].status}",
		"{.spec.items[-1:]}", "{.spec.items[0:4:2]}", "{.spec.items[*]['type','n']}",
		"{range .spec.items[*]}{.type}{end}", "{['metadata']['labels']['a.b/c']}",
		"{.metadata.labels.a\\.b/c}", "{[?(@.n>1)]}", "{.spec.tags[5]}", "{..[0]}",
		"{range ..}{range ..}{@}{end}{end}", "{.a}{end}", "{\"x\"}{'y'}", "{.spec.*.*}",
		"{[?(@[?(@[?(@.x)])])]}", "{.spec.items[?(@..n>=1)]}", "{[99999999999999999999]}",
		"{[9223372036854775807]}", "{.spec.tags[-9223372036854775808:]}",
	} {
		f.Add(s)
	}
	data := decode(f, fuzzObject)
	f.Fuzz(func(t *testing.T, text string) {
		tpl, err := Parse(text)
		if err != nil {
			return
		}
		for _, missing := range []bool{false, true} {
			var buf bytes.Buffer
			_ = tpl.Execute(&buf, data, missing)
		}
	})
}

func TestRunawayEvaluationStops(t *testing.T) {
	// Each range repeats its block ten times over a nested array: 10^8
	// iterations unless the work bound stops it.
	data := decode(t, "[[[[[[[[[1]]]]]]]]]")
	var text string
	for range 8 {
		text += "{range [0,0,0,0,0,0,0,0,0,0]}"
	}
	text += "{@}"
	for range 8 {
		text += "{end}"
	}
	tpl, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.FindResults(data, true); err != ErrTooLarge {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
}

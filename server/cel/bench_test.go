package cel

import (
	"context"
	"testing"
)

// BenchmarkCompile measures compiling a schema with three rules (the base
// environment is built once, before).
func BenchmarkCompile(b *testing.B) {
	s := mustSchema(b, `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.x > 0"},{"rule":"self.name.startsWith('a')"}],"properties":{"x":{"type":"integer"},"name":{"type":"string","maxLength":10},
	"items":{"type":"array","maxItems":10,"items":{"type":"object","properties":{"a":{"type":"string","maxLength":5}},"x-kubernetes-validations":[{"rule":"self.a != 'x'"}]}}}}}}`)
	if _, err := base(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, errs := Compile(s, "p"); errs != nil {
			b.Fatal(errs)
		}
	}
}

// BenchmarkValidate measures one custom resource write's rules: one on
// spec, one on each of ten list items.
func BenchmarkValidate(b *testing.B) {
	s := mustSchema(b, `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.replicas <= 10"}],"properties":{"replicas":{"type":"integer"},
	"items":{"type":"array","maxItems":10,"items":{"type":"object","properties":{"a":{"type":"string","maxLength":5}},"x-kubernetes-validations":[{"rule":"self.a != 'x'"}]}}}}}}`)
	v, errs := Compile(s, "p")
	if errs != nil {
		b.Fatal(errs)
	}
	obj := mustObj(b, `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"spec":{"replicas":3,"items":[{"a":"1"},{"a":"2"},{"a":"3"},{"a":"4"},{"a":"5"},{"a":"6"},{"a":"7"},{"a":"8"},{"a":"9"},{"a":"10"}]}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if errs := v.Validate(context.Background(), obj, nil); errs != nil {
			b.Fatal(errs)
		}
	}
}

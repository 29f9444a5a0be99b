package cel

import "testing"

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

package jsonpath

import "testing"

func TestValidateSimplePath(t *testing.T) {
	const f = "spec.versions[0].subresources.scale.specReplicasPath"
	for _, c := range []struct{ in, want string }{
		{".spec.replicas", ""},
		{".", ""},
		{"", f + `: Invalid value: "": must not be empty`},
		{"spec.replicas", f + `: Invalid value: "spec.replicas": must be a simple json path starting with .`},
		{"$.spec", f + `: Invalid value: "$.spec": must be a simple json path starting with .`},
	} {
		got := ""
		if errs := ValidateSimplePath(c.in, f); len(errs) > 0 {
			got = errs.Error()
		}
		if got != c.want {
			t.Errorf("ValidateSimplePath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

package uuid

import (
	"regexp"
	"testing"
)

// A version 4, variant 1 UUID in its canonical form.
var v4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestForm(t *testing.T) {
	t.Parallel()
	for name, gen := range map[string]func() string{"New": New, "Fast": Fast} {
		seen := map[string]bool{}
		for range 1000 {
			u := gen()
			if !v4.MatchString(u) {
				t.Fatalf("%s() = %q, not a version 4 UUID", name, u)
			}
			if seen[u] {
				t.Fatalf("%s() repeated %q", name, u)
			}
			seen[u] = true
		}
	}
	if got := format([16]byte{0: 0xab, 6: 0xff, 8: 0xff, 15: 0x01}); got != "ab000000-0000-4f00-bf00-000000000001" {
		t.Errorf("format = %q", got)
	}
}

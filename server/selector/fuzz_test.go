package selector

import (
	"cmp"
	"slices"
	"strconv"
	"testing"
)

var labelSeeds = []string{
	"", "a", "!a", "a=b", "a==b", "a!=b", "a>5", "a<5", "a in (x,y)", "a notin ()",
	"x in (foo,,baz),y,z notin ()", "in in (in)", "a===b", "a b", "a,", ",", "!", "a in (",
	"example.com/k=v", "a/b/c", "a\x00b", " a = b , c ", "a>9223372036854775808", "a in (b,,)",
}

// FuzzParseLabels checks that parsing never panics, and that a parsed
// selector prints as text that parses back to the same requirements.
func FuzzParseLabels(f *testing.F) {
	for _, s := range labelSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseLabels(in)
		if err != nil {
			if !s.Empty() {
				t.Fatalf("error %v with a non-empty selector", err)
			}
			return
		}
		out := s.String()
		again, err := ParseLabels(out)
		if err != nil {
			t.Fatalf("ParseLabels(%q) ok, but its String %q fails: %v", in, out, err)
		}
		if !slices.EqualFunc(s.Requirements(), again.Requirements(), equalRequirement) {
			t.Fatalf("%q -> %q -> %q: requirements differ", in, out, again.String())
		}
		if again.String() != out {
			t.Fatalf("String not stable: %q then %q", out, again.String())
		}
		s.Matches(map[string]string{"a": "5", "in": ""})
		s.MatchesAny(map[string]any{"a": "5", "b": 1.0})
	})
}

// FuzzParseFields checks that parsing never panics, and that a parsed
// selector prints as text that parses back to the same set of
// requirements (term order may change, since terms sort by their text).
func FuzzParseFields(f *testing.F) {
	for _, s := range []string{
		"", "a=b", "a==b", "a!=b", "a=b,c!=d", `a=b\,c`, `a=\\`, `a=\=`, "a=b=c", `a=\x`, `a=b\`,
		"x", "=", "!=", `a\,b=c`, `a\=b`, "a!b=c", "a=\xff\\,", ",,,", "metadata.name=x,metadata.namespace=y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseFields(in)
		if err != nil {
			return
		}
		out := s.String()
		again, err := ParseFields(out)
		if err != nil {
			t.Fatalf("ParseFields(%q) ok, but its String %q fails: %v", in, out, err)
		}
		if a, b := sortedFields(s), sortedFields(again); !slices.Equal(a, b) {
			t.Fatalf("%q -> %q: requirements %q vs %q", in, out, a, b)
		}
		s.Matches(func(string) (string, bool) { return "", false })
	})
}

func sortedFields(s Fields) []FieldRequirement {
	r := slices.Clone(s.Requirements())
	slices.SortFunc(r, func(a, b FieldRequirement) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Op, b.Op), cmp.Compare(a.Value, b.Value))
	})
	return r
}

// FuzzParseInt64 checks the allocation-free integer parser against strconv.
func FuzzParseInt64(f *testing.F) {
	for _, s := range []string{"0", "-1", "+7", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "", "1a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, err := strconv.ParseInt(in, 10, 64)
		got, ok := parseInt64(in)
		if ok != (err == nil) || (ok && got != want) {
			t.Fatalf("parseInt64(%q) = %d, %v; strconv says %d, %v", in, got, ok, want, err)
		}
	})
}

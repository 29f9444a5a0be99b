package selector

import (
	"strconv"
	"testing"
)

func TestParseInt64MatchesStrconv(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"", "+", "-", "0", "-0", "+0", "00", "5", "+5", "-5", "1_0", "0x10", " 1", "1 ",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"99999999999999999999", "18446744073709551616", "922337203685477580", "9223372036854775799",
		"١", "1e3", "--1", "+-1",
	}
	for _, in := range inputs {
		want, err := strconv.ParseInt(in, 10, 64)
		got, ok := parseInt64(in)
		if ok != (err == nil) || (ok && got != want) {
			t.Errorf("parseInt64(%q) = %d, %v; strconv says %d, %v", in, got, ok, want, err)
		}
	}
}

func TestQualifiedNameProblems(t *testing.T) {
	t.Parallel()
	valid := []string{"a", "A", "0", "a-b_c.d", "example.com/a", "a.b-c/X_y", "1/a"}
	for _, k := range valid {
		if errs := qualifiedNameProblems(k); errs != nil {
			t.Errorf("qualifiedNameProblems(%q) = %q, want none", k, errs)
		}
	}
	invalid := map[string]int{ // key → number of problems
		"":          2,
		"a_":        1,
		"_a":        1,
		"a b":       1,
		"é":         1,
		"Ex.com/a":  1,
		"-x.com/a":  1,
		"x-.com/a":  1,
		"/":         3,
		"a//b":      1,
		"x.com/-a-": 1,
	}
	for k, n := range invalid {
		if errs := qualifiedNameProblems(k); len(errs) != n {
			t.Errorf("qualifiedNameProblems(%q) = %q, want %d problems", k, errs, n)
		}
	}
}

func TestLabelValueProblems(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "a", "A-b_c.9"} {
		if errs := labelValueProblems(v); errs != nil {
			t.Errorf("labelValueProblems(%q) = %q, want none", v, errs)
		}
	}
	for _, v := range []string{"-", "a/b", "a b", "a."} {
		if errs := labelValueProblems(v); len(errs) != 1 {
			t.Errorf("labelValueProblems(%q) = %q, want one problem", v, errs)
		}
	}
}

package selector

import "testing"

// benchLabels is a typical label set of a workload object.
var benchLabels = map[string]string{
	"app":                   "web",
	"tier":                  "front",
	"version":               "12",
	"example.com/component": "cache",
	"track":                 "stable",
}

const benchLabelSelector = "app=web,tier in (front,back),!canary,version>10,example.com/component,track!=beta"

func benchLabelsAny() map[string]any {
	m := make(map[string]any, len(benchLabels))
	for k, v := range benchLabels {
		m[k] = v
	}
	return m
}

func benchGet(f string) (string, bool) {
	switch f {
	case "metadata.name":
		return "cm-d", true
	case "metadata.namespace":
		return "golden-list", true
	}
	return "", false
}

func mustLabels(tb testing.TB, s string) Labels {
	tb.Helper()
	l, err := ParseLabels(s)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func mustFields(tb testing.TB, s string) Fields {
	tb.Helper()
	f, err := ParseFields(s)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// TestMatchesDoesNotAllocate is the one serial test of the package:
// testing.AllocsPerRun refuses to run inside a parallel test.
func TestMatchesDoesNotAllocate(t *testing.T) {
	labels := mustLabels(t, benchLabelSelector)
	anyLabels := benchLabelsAny()
	fields := mustFields(t, "metadata.name=cm-d,metadata.namespace!=other")
	nonInt := mustLabels(t, "app>1") // the failing integer parse must not allocate either
	checks := map[string]func() bool{
		"Matches":       func() bool { return labels.Matches(benchLabels) },
		"MatchesAny":    func() bool { return labels.MatchesAny(anyLabels) },
		"Fields":        func() bool { return fields.Matches(benchGet) },
		"NonIntCompare": func() bool { return !nonInt.Matches(benchLabels) },
	}
	for name, check := range checks {
		if !check() {
			t.Errorf("%s: selector does not match the benchmark object", name)
		}
		if n := testing.AllocsPerRun(100, func() { check() }); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

func BenchmarkLabelsMatches(b *testing.B) {
	s := mustLabels(b, benchLabelSelector)
	b.ReportAllocs()
	for b.Loop() {
		if !s.Matches(benchLabels) {
			b.Fatal("no match")
		}
	}
}

func BenchmarkLabelsMatchesAny(b *testing.B) {
	s := mustLabels(b, benchLabelSelector)
	m := benchLabelsAny()
	b.ReportAllocs()
	for b.Loop() {
		if !s.MatchesAny(m) {
			b.Fatal("no match")
		}
	}
}

func BenchmarkFieldsMatches(b *testing.B) {
	s := mustFields(b, "metadata.name=cm-d,metadata.namespace=golden-list")
	b.ReportAllocs()
	for b.Loop() {
		if !s.Matches(benchGet) {
			b.Fatal("no match")
		}
	}
}

func BenchmarkParseLabels(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseLabels(benchLabelSelector); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseFields(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFields("metadata.name=cm-d,metadata.namespace=golden-list"); err != nil {
			b.Fatal(err)
		}
	}
}

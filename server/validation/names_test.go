package validation

import (
	"regexp"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fn   func(string) []string
		in   string
		want string
	}{
		{IsDNS1123Subdomain, "example.com", ""},
		{IsDNS1123Subdomain, "Bad_Name", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
		{IsDNS1123Subdomain, strings.Repeat("a", 254), "must be no more than 253 characters"},
		{IsDNS1123Label, "my-name", ""},
		{IsDNS1123Label, "a.b", "must not contain dots"},
		{IsDNS1123Label, "A", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
		{IsPathSegment, "..", "may not be '..'"},
		{IsPathSegment, "a/b%", "may not contain '/'|may not contain '%'"},
		{IsQualifiedName, "example.com/MyName", ""},
		{IsQualifiedName, "a b", "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
		{IsQualifiedName, "/x", "prefix part must be non-empty"},
		{IsQualifiedName, "a/b/c", "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
		{IsValidLabelValue, "", ""},
		{IsValidLabelValue, "a b", "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	}
	for _, c := range cases {
		if got := strings.Join(c.fn(c.in), "|"); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// The hand checks accept exactly what the published regexps accept.
func matchersAgree(t *testing.T, v string) {
	t.Helper()
	for _, c := range []struct {
		format string
		match  func(string) bool
	}{
		{dns1123LabelFmt, matchDNS1123Label},
		{dns1035LabelFmt, matchDNS1035Label},
		{dns1123SubdomainFmt, matchDNS1123Subdomain},
		{qualifiedNameFmt, matchQualifiedName},
		{labelValueFmt, matchLabelValue},
	} {
		re := regexp.MustCompile("^" + c.format + "$")
		if got, want := c.match(v), re.MatchString(v); got != want {
			t.Errorf("%q against %s: %v, the regexp says %v", v, c.format, got, want)
		}
	}
}

func TestMatchersAgreeWithRegexps(t *testing.T) {
	t.Parallel()
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "-", "_", ".", "/", " ", "\n", "é"}
	words := []string{""}
	for range 3 {
		var next []string
		for _, w := range words {
			for _, c := range alphabet {
				next = append(next, w+c)
			}
		}
		words = append(words, next...)
	}
	for _, w := range words {
		matchersAgree(t, w)
	}
	for _, w := range []string{"my-name", "example.com", "a.b.c", "a..b", ".a", "a.", "abc-123", "-abc", "abc-", "my_value.x-Y", "a\n"} {
		matchersAgree(t, w)
	}
}

func FuzzMatchers(f *testing.F) {
	for _, s := range []string{"my-name", "example.com", "My_Name.x", "a-", "1.2.3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 300 {
			return
		}
		matchersAgree(t, s)
	})
}

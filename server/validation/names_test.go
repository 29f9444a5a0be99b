package validation

import (
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

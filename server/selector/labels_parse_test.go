package selector

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Texts shared by several expected messages.
const (
	nameRegexMsg  = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	valueRegexMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
	prefixMsg     = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	gtLtMsg       = "for 'Gt', 'Lt' operators, the value must be an integer"
)

func TestParseLabelsValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		string string
		reqs   []Requirement
	}{
		{"", "", nil},
		{"   ", "", nil},
		{"a=b", "a=b", []Requirement{{Key: "a", Op: Equals, Values: []string{"b"}}}},
		{"a==b", "a==b", []Requirement{{Key: "a", Op: DoubleEquals, Values: []string{"b"}}}},
		{"a!=b", "a!=b", []Requirement{{Key: "a", Op: NotEquals, Values: []string{"b"}}}},
		{"a", "a", []Requirement{{Key: "a", Op: Exists}}},
		{"!a", "!a", []Requirement{{Key: "a", Op: DoesNotExist}}},
		{" ! a ", "!a", []Requirement{{Key: "a", Op: DoesNotExist}}},
		{"a>5", "a>5", []Requirement{{Key: "a", Op: GreaterThan, Values: []string{"5"}, bound: 5}}},
		{"a<05", "a<05", []Requirement{{Key: "a", Op: LessThan, Values: []string{"05"}, bound: 5}}},
		{"a in (x,y)", "a in (x,y)", []Requirement{{Key: "a", Op: In, Values: []string{"x", "y"}}}},
		{"a in (y, x, y)", "a in (x,y)", []Requirement{{Key: "a", Op: In, Values: []string{"x", "y"}}}},
		{"a notin (x)", "a notin (x)", []Requirement{{Key: "a", Op: NotIn, Values: []string{"x"}}}},
		{"a in ()", "a in ()", []Requirement{{Key: "a", Op: In, Values: []string{""}}}},
		{"a in (,)", "a in ()", []Requirement{{Key: "a", Op: In, Values: []string{""}}}},
		{"a in (x,)", "a in (,x)", []Requirement{{Key: "a", Op: In, Values: []string{"", "x"}}}},
		{"a in (,x)", "a in (,x)", []Requirement{{Key: "a", Op: In, Values: []string{"", "x"}}}},
		{"a in (x,,y)", "a in (,x,y)", []Requirement{{Key: "a", Op: In, Values: []string{"", "x", "y"}}}},
		{"a=", "a=", []Requirement{{Key: "a", Op: Equals, Values: []string{""}}}},
		{"a=,b", "a=,b", []Requirement{{Key: "a", Op: Equals, Values: []string{""}}, {Key: "b", Op: Exists}}},
		{"x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()", []Requirement{
			{Key: "x", Op: In, Values: []string{"", "baz", "foo"}},
			{Key: "y", Op: Exists},
			{Key: "z", Op: NotIn, Values: []string{""}},
		}},
		{"z=1,a=2,m", "a=2,m,z=1", []Requirement{
			{Key: "a", Op: Equals, Values: []string{"2"}},
			{Key: "m", Op: Exists},
			{Key: "z", Op: Equals, Values: []string{"1"}},
		}},
		// Equal keys keep their written order.
		{"b,a!=1,a", "a!=1,a,b", []Requirement{
			{Key: "a", Op: NotEquals, Values: []string{"1"}},
			{Key: "a", Op: Exists},
			{Key: "b", Op: Exists},
		}},
		// "in" and "notin" are words where a key or value is expected.
		{"in in (in,notin)", "in in (in,notin)", []Requirement{{Key: "in", Op: In, Values: []string{"in", "notin"}}}},
		{"notin=in", "notin=in", []Requirement{{Key: "notin", Op: Equals, Values: []string{"in"}}}},
		{"example.com/app.name_x=Val-1.2_3", "example.com/app.name_x=Val-1.2_3", []Requirement{{Key: "example.com/app.name_x", Op: Equals, Values: []string{"Val-1.2_3"}}}},
		{"\ta\r\n=\nb ,\tc", "a=b,c", []Requirement{{Key: "a", Op: Equals, Values: []string{"b"}}, {Key: "c", Op: Exists}}},
		{"a in(x)", "a in (x)", []Requirement{{Key: "a", Op: In, Values: []string{"x"}}}},
		// A NUL byte reads as the end of input where a token would start.
		{"a \x00junk", "a", []Requirement{{Key: "a", Op: Exists}}},
		{strings.Repeat("k", 63) + "=" + strings.Repeat("v", 63), strings.Repeat("k", 63) + "=" + strings.Repeat("v", 63),
			[]Requirement{{Key: strings.Repeat("k", 63), Op: Equals, Values: []string{strings.Repeat("v", 63)}}}},
		{strings.Repeat("p", 253) + "/n", strings.Repeat("p", 253) + "/n", []Requirement{{Key: strings.Repeat("p", 253) + "/n", Op: Exists}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLabels(tt.in)
			if err != nil {
				t.Fatalf("ParseLabels(%q): %v", tt.in, err)
			}
			if !slices.EqualFunc(got.Requirements(), tt.reqs, equalRequirement) {
				t.Errorf("requirements = %#v, want %#v", got.Requirements(), tt.reqs)
			}
			if s := got.String(); s != tt.string {
				t.Errorf("String() = %q, want %q", s, tt.string)
			}
			if got.Empty() != (len(tt.reqs) == 0) {
				t.Errorf("Empty() = %v with %d requirements", got.Empty(), len(tt.reqs))
			}
		})
	}
}

func equalRequirement(a, b Requirement) bool {
	return a.Key == b.Key && a.Op == b.Op && slices.Equal(a.Values, b.Values) && a.bound == b.bound
}

func TestParseLabelsErrors(t *testing.T) {
	t.Parallel()
	const prefix = "unable to parse requirement: "
	tests := []struct {
		in, msg string
	}{
		// Token order errors.
		{"a===b", prefix + "found '=', expected: identifier"},
		{"a b", prefix + "found 'b', expected: in, notin, =, ==, !=, gt, lt"},
		{"a!b", prefix + "found '!', expected: in, notin, =, ==, !=, gt, lt"},
		{"a>=5", prefix + "found '=', expected: identifier"},
		{"a=(b)", prefix + "found '(', expected: identifier"},
		{"!a=b", "found '=', expected: ',' or 'end of string'"},
		{"!a in (x)", "found 'in', expected: ',' or 'end of string'"},
		{"a=b c", "found 'c', expected: ',' or 'end of string'"},
		{"a=b)", "found ')', expected: ',' or 'end of string'"},
		{"a,", "found '', expected: identifier after ','"},
		{"a,,b", "found ',', expected: identifier after ','"},
		{"a,=b", "found '=', expected: identifier after ','"},
		{",a", "found ',', expected: !, identifier, or 'end of string'"},
		{"=a", "found '=', expected: !, identifier, or 'end of string'"},
		{"(a)", "found '(', expected: !, identifier, or 'end of string'"},
		{"!", prefix + "found '', expected: identifier"},
		{"!!a", prefix + "found '!', expected: identifier"},
		{"! =a", prefix + "found '=', expected: identifier"},
		{"a in", prefix + "found '' expected: '('"},
		{"a in x", prefix + "found 'x' expected: '('"},
		{"a in (=)", prefix + "found '=', expected: ',', ')' or identifier"},
		{"a in (", prefix + "found '', expected: ',', ')' or identifier"},
		{"a in (b", prefix + "found '', expected: ',' or ')'"},
		{"a in (b c)", prefix + "found 'c', expected: ',' or ')'"},
		{"a in (b,=)", prefix + "found '=', expected: ',', or identifier"},
		{"a in (b,", prefix + "found '', expected: ',', or identifier"},
		{"a\x00b", prefix + "found 'b', expected: in, notin, =, ==, !=, gt, lt"},
		// Key validation.
		{"-a", prefix + `<nil>: Invalid value: "-a": name part ` + nameRegexMsg},
		{"a.", prefix + `<nil>: Invalid value: "a.": name part ` + nameRegexMsg},
		{"a$b=c", prefix + `<nil>: Invalid value: "a$b": name part ` + nameRegexMsg},
		{"/a", prefix + `<nil>: Invalid value: "/a": prefix part must be non-empty`},
		{"a/", prefix + `<nil>: Invalid value: "a/": name part must be non-empty; name part ` + nameRegexMsg},
		{"A/b", prefix + `<nil>: Invalid value: "A/b": ` + prefixMsg},
		{"a..b/c", prefix + `<nil>: Invalid value: "a..b/c": ` + prefixMsg},
		{strings.Repeat("p", 254) + "/n", prefix + `<nil>: Invalid value: "` + strings.Repeat("p", 254) + `/n": prefix part must be no more than 253 characters`},
		{"a/b/c", prefix + `<nil>: Invalid value: "a/b/c": a qualified name ` + nameRegexMsg + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
		{strings.Repeat("k", 64), prefix + `<nil>: Invalid value: "` + strings.Repeat("k", 64) + `": name part must be no more than 63 characters`},
		{"!-a", prefix + `<nil>: Invalid value: "-a": name part ` + nameRegexMsg},
		// Value validation.
		{"a=b$c", prefix + `values[0][a]: Invalid value: "b$c": ` + valueRegexMsg},
		{"a=-b", prefix + `values[0][a]: Invalid value: "-b": ` + valueRegexMsg},
		{"a=" + strings.Repeat("v", 64), prefix + `values[0][a]: Invalid value: "` + strings.Repeat("v", 64) + `": must be no more than 63 characters`},
		{"a=" + strings.Repeat("v", 63) + "$", prefix + `values[0][a]: Invalid value: "` + strings.Repeat("v", 63) + `$": must be no more than 63 characters; ` + valueRegexMsg},
		{"a in (ok,b$,-c)", prefix + `[values[0][a]: Invalid value: "-c": ` + valueRegexMsg + `, values[1][a]: Invalid value: "b$": ` + valueRegexMsg + "]"},
		// Integer operands.
		{"a>b", prefix + `values[0]: Invalid value: "b": ` + gtLtMsg},
		{"a<", prefix + `values[0]: Invalid value: "": ` + gtLtMsg},
		{"a>9223372036854775808", prefix + `values[0]: Invalid value: "9223372036854775808": ` + gtLtMsg},
		{"a<-0", prefix + `values[0][a]: Invalid value: "-0": ` + valueRegexMsg},
		{"a>b$", prefix + `[values[0]: Invalid value: "b$": ` + gtLtMsg + `, values[0][a]: Invalid value: "b$": ` + valueRegexMsg + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLabels(tt.in)
			if err == nil {
				t.Fatalf("ParseLabels(%q) = %q, want error", tt.in, got.String())
			}
			if err.Error() != tt.msg {
				t.Errorf("error:\n got %s\nwant %s", err, tt.msg)
			}
			if !errors.Is(err, ErrInvalidLabelSelector) || errors.Is(err, ErrInvalidFieldSelector) {
				t.Errorf("error %v does not wrap exactly ErrInvalidLabelSelector", err)
			}
			if !got.Empty() {
				t.Errorf("failed parse returned %q", got.String())
			}
		})
	}
}

package selector

import (
	"errors"
	"slices"
	"testing"
)

func TestParseFieldsValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		string string
		reqs   []FieldRequirement
	}{
		{"", "", nil},
		{",", "", nil},
		{"=", "", nil},
		{"==", "", nil},
		{"!=", "", nil},
		{"a=b", "a=b", []FieldRequirement{{"a", Equals, "b"}}},
		{"a==b", "a=b", []FieldRequirement{{"a", Equals, "b"}}},
		{"a!=b", "a!=b", []FieldRequirement{{"a", NotEquals, "b"}}},
		{"a=", "a=", []FieldRequirement{{"a", Equals, ""}}},
		{"=b", "=b", []FieldRequirement{{"", Equals, "b"}}},
		{"metadata.name=cm-d", "metadata.name=cm-d", []FieldRequirement{{"metadata.name", Equals, "cm-d"}}},
		// Terms are sorted by their source text.
		{"z=1,a=2", "a=2,z=1", []FieldRequirement{{"a", Equals, "2"}, {"z", Equals, "1"}}},
		{"a==x,a=b", "a=x,a=b", []FieldRequirement{{"a", Equals, "x"}, {"a", Equals, "b"}}},
		{"a=1,,b=2,", "a=1,b=2", []FieldRequirement{{"a", Equals, "1"}, {"b", Equals, "2"}}},
		// Escapes in values.
		{`a=b\,c`, `a=b\,c`, []FieldRequirement{{"a", Equals, "b,c"}}},
		{`a=b\=c`, `a=b\=c`, []FieldRequirement{{"a", Equals, "b=c"}}},
		{`a=b\\c`, `a=b\\c`, []FieldRequirement{{"a", Equals, `b\c`}}},
		{`a=\\,b=1`, `a=\\,b=1`, []FieldRequirement{{"a", Equals, `\`}, {"b", Equals, "1"}}},
		{`a!=\,\=\\`, `a!=\,\=\\`, []FieldRequirement{{"a", NotEquals, `,=\`}}},
		{"a=b!c", "a=b!c", []FieldRequirement{{"a", Equals, "b!c"}}},
		{"a=b c", "a=b c", []FieldRequirement{{"a", Equals, "b c"}}},
		// The field is taken literally up to the first operator.
		{"a!b=c", "a!b=c", []FieldRequirement{{"a!b", Equals, "c"}}},
		{`a\,b=c`, `a\,b=c`, []FieldRequirement{{`a\,b`, Equals, "c"}}},
		{`a\=b`, `a\=b`, []FieldRequirement{{`a\`, Equals, "b"}}},
		{` a = b`, ` a = b`, []FieldRequirement{{" a ", Equals, " b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFields(tt.in)
			if err != nil {
				t.Fatalf("ParseFields(%q): %v", tt.in, err)
			}
			if !slices.Equal(got.Requirements(), tt.reqs) {
				t.Errorf("requirements = %q, want %q", got.Requirements(), tt.reqs)
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

func TestParseFieldsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, msg string
	}{
		{"x", "invalid selector: 'x'; can't understand 'x'"},
		{"a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"},
		{"b=1,a", "invalid selector: 'b=1,a'; can't understand 'a'"},
		// The first bad term in sorted order is reported.
		{"d,c", "invalid selector: 'd,c'; can't understand 'c'"},
		{"a!b", "invalid selector: 'a!b'; can't understand 'a!b'"},
		{"a=b=c", "invalid field selector: unescaped character in value: 61"},
		{"a===b", "invalid field selector: unescaped character in value: 61"},
		{"a!==b", "invalid field selector: unescaped character in value: 61"},
		{"spec.x!==", "invalid field selector: unescaped character in value: 61"},
		{`a=b\`, `invalid field selector: invalid escape sequence: \`},
		{`a=\x`, `invalid field selector: invalid escape sequence: \x`},
		{`a=\!`, `invalid field selector: invalid escape sequence: \!`},
		{`a=\é`, `invalid field selector: invalid escape sequence: \é`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFields(tt.in)
			if err == nil {
				t.Fatalf("ParseFields(%q) = %q, want error", tt.in, got.String())
			}
			if err.Error() != tt.msg {
				t.Errorf("error:\n got %s\nwant %s", err, tt.msg)
			}
			if !errors.Is(err, ErrInvalidFieldSelector) || errors.Is(err, ErrInvalidLabelSelector) {
				t.Errorf("error %v does not wrap exactly ErrInvalidFieldSelector", err)
			}
		})
	}
}

func TestEscapeFieldValue(t *testing.T) {
	t.Parallel()
	tests := []struct{ literal, escaped string }{
		{"", ""},
		{"plain", "plain"},
		{`a,b`, `a\,b`},
		{`a=b`, `a\=b`},
		{`a\b`, `a\\b`},
		{`\,=`, `\\\,\=`},
		{"a!b", "a!b"},
	}
	for _, tt := range tests {
		if got := EscapeFieldValue(tt.literal); got != tt.escaped {
			t.Errorf("EscapeFieldValue(%q) = %q, want %q", tt.literal, got, tt.escaped)
		}
		got, err := UnescapeFieldValue(tt.escaped)
		if err != nil || got != tt.literal {
			t.Errorf("UnescapeFieldValue(%q) = %q, %v; want %q", tt.escaped, got, err, tt.literal)
		}
	}
}

func TestUnescapeFieldValueInvalidUTF8(t *testing.T) {
	t.Parallel()
	// Without anything to unescape the bytes are kept; otherwise the value
	// is decoded as UTF-8 and invalid bytes become U+FFFD.
	if got, _ := UnescapeFieldValue("a\xffb"); got != "a\xffb" {
		t.Errorf("plain value changed to %q", got)
	}
	if got, _ := UnescapeFieldValue("a\xff\\,"); got != "a\uFFFD," {
		t.Errorf("escaped value = %q, want %q", got, "a\uFFFD,")
	}
}

func TestFieldsMatches(t *testing.T) {
	t.Parallel()
	object := map[string]string{"metadata.name": "cm-d", "metadata.namespace": "golden-list", "type": ""}
	get := func(f string) (string, bool) {
		v, ok := object[f]
		return v, ok
	}
	tests := []struct {
		selector string
		want     bool
	}{
		{"", true},
		{"metadata.name=cm-d", true},
		{"metadata.name==cm-d", true},
		{"metadata.name=cm-e", false},
		{"metadata.name!=cm-e", true},
		{"metadata.name!=cm-d", false},
		{"metadata.name=cm-d,metadata.namespace=golden-list", true},
		{"metadata.name=cm-d,metadata.namespace!=golden-list", false},
		{"type=", true},
		{"type!=", false},
		// A field get does not know reads as "".
		{"spec.unknown=", true},
		{"spec.unknown!=x", true},
		{"spec.unknown=x", false},
	}
	for _, tt := range tests {
		s, err := ParseFields(tt.selector)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Matches(get); got != tt.want {
			t.Errorf("%q Matches = %v, want %v", tt.selector, got, tt.want)
		}
	}
}

func TestFieldsRequiresExactMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		selector, field, value string
		ok                     bool
	}{
		{"metadata.name=x", "metadata.name", "x", true},
		{"metadata.name==x", "metadata.name", "x", true},
		{"metadata.name!=x", "metadata.name", "", false},
		{"metadata.namespace=ns,metadata.name=x", "metadata.name", "x", true},
		{"metadata.name=", "metadata.name", "", true},
		{"metadata.name=x", "metadata.namespace", "", false},
		{"", "metadata.name", "", false},
	}
	for _, tt := range tests {
		s, err := ParseFields(tt.selector)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := s.RequiresExactMatch(tt.field); v != tt.value || ok != tt.ok {
			t.Errorf("%q RequiresExactMatch(%q) = %q, %v; want %q, %v", tt.selector, tt.field, v, ok, tt.value, tt.ok)
		}
	}
}

func TestFieldsTransform(t *testing.T) {
	t.Parallel()
	rename := func(f string) (string, error) {
		switch f {
		case "old":
			return "new", nil
		case "bad", "worse":
			return "", errors.New("no " + f)
		}
		return f, nil
	}
	tests := []struct {
		selector, want, err string
	}{
		{"old=a,x!=b", "new=a,x!=b", ""},
		{"", "", ""},
		// Terms are converted in their sorted order: the first refusal
		// is of the first such term.
		{"worse=1,bad=2", "", "no bad"},
	}
	for _, tt := range tests {
		s, err := ParseFields(tt.selector)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Transform(rename)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: error %v, want %s", tt.selector, err, tt.err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.selector, got.String(), err, tt.want)
		}
		if s.String() != tt.selector && tt.selector != "" {
			t.Errorf("%q: the original changed to %q", tt.selector, s.String())
		}
	}
}

func TestUnknownFieldError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		field string
		known []string
		want  string
	}{
		{"foo", []string{"metadata.name", "metadata.namespace"}, `"foo" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"", []string{"metadata.name"}, `"" is not a known field selector: only "metadata.name"`},
		{`a"b`, []string{"x", "y", "z"}, `"a\"b" is not a known field selector: only "x", "y", "z"`},
	}
	for _, tt := range tests {
		if got := UnknownFieldError(tt.field, tt.known); got != tt.want {
			t.Errorf("UnknownFieldError(%q, %q) = %s, want %s", tt.field, tt.known, got, tt.want)
		}
	}
}

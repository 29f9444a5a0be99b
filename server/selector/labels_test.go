package selector

import "testing"

func TestLabelsMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		selector string
		labels   map[string]string
		want     bool
	}{
		{"", nil, true},
		{"", map[string]string{"a": "b"}, true},
		{"a=b", map[string]string{"a": "b"}, true},
		{"a=b", map[string]string{"a": "c"}, false},
		{"a=b", map[string]string{}, false},
		{"a==b", map[string]string{"a": "b"}, true},
		{"a=", map[string]string{"a": ""}, true},
		{"a=", map[string]string{}, false},
		{"a!=b", map[string]string{"a": "c"}, true},
		{"a!=b", map[string]string{"a": "b"}, false},
		{"a!=b", map[string]string{}, true},
		{"a in (x,y)", map[string]string{"a": "y"}, true},
		{"a in (x,y)", map[string]string{"a": "z"}, false},
		{"a in (x,y)", nil, false},
		{"a in ()", map[string]string{"a": ""}, true},
		{"a notin (x,y)", map[string]string{"a": "z"}, true},
		{"a notin (x,y)", map[string]string{"a": "x"}, false},
		{"a notin (x,y)", nil, true},
		{"a", map[string]string{"a": ""}, true},
		{"a", map[string]string{"b": "a"}, false},
		{"!a", map[string]string{"b": "a"}, true},
		{"!a", map[string]string{"a": ""}, false},
		{"a>5", map[string]string{"a": "6"}, true},
		{"a>5", map[string]string{"a": "5"}, false},
		{"a>5", map[string]string{"a": "+6"}, true},
		{"a>5", map[string]string{"a": "x"}, false},
		{"a>5", map[string]string{"a": ""}, false},
		{"a>5", nil, false},
		{"a<5", map[string]string{"a": "-9223372036854775808"}, true},
		{"a<5", map[string]string{"a": "9223372036854775808"}, false},
		{"a<5", map[string]string{"a": "4"}, true},
		{"a<5", map[string]string{"a": "5"}, false},
		{"a>0", map[string]string{}, false},
		{"a>0", map[string]string{"a": "-1"}, false},
		{"idx in (3,4),!missing", map[string]string{"idx": "3", "tier": "back"}, true},
		{"idx in (3,4),!missing", map[string]string{"idx": "3", "missing": "x"}, false},
		{"a=1,b=2", map[string]string{"a": "1", "b": "2"}, true},
		{"a=1,b=2", map[string]string{"a": "1", "b": "3"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			t.Parallel()
			s, err := ParseLabels(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Matches(tt.labels); got != tt.want {
				t.Errorf("Matches(%v) = %v, want %v", tt.labels, got, tt.want)
			}
			var decoded map[string]any
			if tt.labels != nil {
				decoded = make(map[string]any, len(tt.labels))
				for k, v := range tt.labels {
					decoded[k] = v
				}
			}
			if got := s.MatchesAny(decoded); got != tt.want {
				t.Errorf("MatchesAny(%v) = %v, want %v", decoded, got, tt.want)
			}
		})
	}
}

func TestLabelsMatchesAnyNonString(t *testing.T) {
	t.Parallel()
	labels := map[string]any{"a": 5.0, "n": nil}
	tests := []struct {
		selector string
		want     bool
	}{
		{"a", true},
		{"!a", false},
		{"a=5", false},
		{"a!=5", true},
		{"a in (5)", false},
		{"a notin (5)", true},
		{"a>1", false},
		{"a<9", false},
		{"n", true},
		{"n=", false},
	}
	for _, tt := range tests {
		s, err := ParseLabels(tt.selector)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MatchesAny(labels); got != tt.want {
			t.Errorf("%q MatchesAny(%v) = %v, want %v", tt.selector, labels, got, tt.want)
		}
	}
}

func TestLabelsRequiresExactMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		selector, key string
		value         string
		ok            bool
	}{
		{"a=b", "a", "b", true},
		{"a==b", "a", "b", true},
		{"a in (b)", "a", "b", true},
		{"a in (b,c)", "a", "", false},
		{"a!=b", "a", "", false},
		{"a", "a", "", false},
		{"x=1,a=b", "a", "b", true},
		{"a=b", "c", "", false},
		{"", "a", "", false},
	}
	for _, tt := range tests {
		s, err := ParseLabels(tt.selector)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := s.RequiresExactMatch(tt.key); v != tt.value || ok != tt.ok {
			t.Errorf("%q RequiresExactMatch(%q) = %q, %v; want %q, %v", tt.selector, tt.key, v, ok, tt.value, tt.ok)
		}
	}
}

func TestZeroLabelsMatchesEverything(t *testing.T) {
	t.Parallel()
	var s Labels
	if !s.Empty() || s.String() != "" || !s.Matches(map[string]string{"a": "b"}) || !s.MatchesAny(nil) {
		t.Errorf("zero Labels: Empty=%v String=%q", s.Empty(), s.String())
	}
}

func TestRequirementString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r    Requirement
		want string
	}{
		{Requirement{Key: "a", Op: Exists}, "a"},
		{Requirement{Key: "a", Op: DoesNotExist}, "!a"},
		{Requirement{Key: "a", Op: Equals, Values: []string{"b"}}, "a=b"},
		{Requirement{Key: "a", Op: DoubleEquals, Values: []string{"b"}}, "a==b"},
		{Requirement{Key: "a", Op: NotEquals, Values: []string{"b"}}, "a!=b"},
		{Requirement{Key: "a", Op: GreaterThan, Values: []string{"1"}}, "a>1"},
		{Requirement{Key: "a", Op: LessThan, Values: []string{"1"}}, "a<1"},
		{Requirement{Key: "a", Op: In, Values: []string{"x", "y"}}, "a in (x,y)"},
		{Requirement{Key: "a", Op: NotIn, Values: []string{""}}, "a notin ()"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.r, got, tt.want)
		}
	}
}

package cel

import (
	"testing"
	"time"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"foo", "foo", true},
		{"foo-bar", "foo__dash__bar", true},
		{"foo.bar", "foo__dot__bar", true},
		{"a/b", "a__slash__b", true},
		{"a__b", "a__underscores__b", true},
		{"a___b", "a__underscores___b", true},
		{"_x", "_x", true},
		{"namespace", "__namespace__", true},
		{"if", "__if__", true},
		{"1a", "", false},
		{"", "", false},
		{"a b", "", false},
		{"a@b", "", false},
	}
	for _, tt := range tests {
		got, ok := Escape(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Escape(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1h30m", 90 * time.Minute, true},
		{"2d", 48 * time.Hour, true},
		{"1 week", 7 * 24 * time.Hour, true},
		{"3 hours 5 minutes", 3*time.Hour + 5*time.Minute, true},
		{"10µs", 10 * time.Microsecond, true},
		{"x", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseDuration(%q) = %v, %v", tt.in, got, err)
		}
	}
}

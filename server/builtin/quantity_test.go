package builtin

import (
	"testing"

	"platd/server/apierr"
)

func TestQuantityCmp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b any
		want int
	}{
		{"1", "1000m", 0}, {"1Gi", "1024Mi", 0}, {"1Ki", "1000", 1}, {"1Ki", "1024", 0},
		{"1e3", "1k", 0}, {"1.5", "1500m", 0}, {"100m", "0.1", 0}, {"1E", "1e18", 0},
		{"1Ei", "1E", 1}, {"-1", "1", -1}, {"-2", "-1", -1}, {"1n", "0", 1}, {"-1n", "0", -1},
		{"12e-1", "1.2", 0}, {"1200e-3", "1.2", 0}, {"999999999999999999999", "1e21", -1},
		{"1e999", "1e998", 1}, {int64(2), "2", 0}, {int64(2), "2001m", -1}, {"0.5Gi", "512Mi", 0},
		{"1u", "1000n", 0}, {"1m", "999u", 1}, {"1.1n", "2n", 0}, {"1P", "1000T", 0}, {"1Mi", "1M", 1},
		{"3e9", "3G", 0}, {"0", "0m", 0}, {"1e-3", "1m", 0},
	}
	for _, tt := range tests {
		a, okA := parseQuantity(tt.a)
		b, okB := parseQuantity(tt.b)
		if !okA || !okB {
			t.Errorf("%v, %v: not parsed", tt.a, tt.b)
			continue
		}
		if got := a.cmp(b); got != tt.want {
			t.Errorf("cmp(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := b.cmp(a); got != -tt.want {
			t.Errorf("cmp(%v, %v) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

func TestQuantityValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in          any
		text        string
		value, mill int64
	}{
		{"1500m", "1500m", 2, 1500}, {"1n", "1n", 1, 1}, {"-1n", "-1n", -1, -1}, {"1Ki", "1Ki", 1024, 1024000},
		{"2.5", "2500m", 3, 2500}, {int64(7), "7", 7, 7000}, {"0", "0", 0, 0}, {"1.0001m", "1000100n", 1, 2},
		{"1e3", "1e3", 1000, 1000000}, {"-1.5", "-1500m", -2, -1500},
	}
	for _, tt := range tests {
		q, ok := parseQuantity(tt.in)
		if !ok {
			t.Errorf("%v: not parsed", tt.in)
			continue
		}
		if q.text != tt.text || q.value() != tt.value || q.milliValue() != tt.mill {
			t.Errorf("%v: text %q value %d milli %d, want %q %d %d", tt.in, q.text, q.value(), q.milliValue(), tt.text, tt.value, tt.mill)
		}
	}
	for _, bad := range []any{"abc", "1x", "", nil, true, map[string]any{}} {
		if _, ok := parseQuantity(bad); ok {
			t.Errorf("%v: parsed", bad)
		}
	}
}

func TestQuantityBadValuePrintsBare(t *testing.T) {
	t.Parallel()
	q, _ := parseQuantity("0.5")
	e := apierr.Invalid("x", q.bad(), "d")
	if got, want := e.Error(), "x: Invalid value: 500m: d"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

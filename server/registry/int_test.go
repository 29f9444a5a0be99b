package registry

import "testing"

// TestInt64 reads integers as either decoder gives them, and 0 for the
// rest.
func TestInt64(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    any
		want int64
	}{
		{int64(7), 7}, {float64(30), 30}, {int(-2), -2}, {"5", 0}, {nil, 0}, {true, 0},
	} {
		if got := Int64(tt.v); got != tt.want {
			t.Errorf("Int64(%#v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

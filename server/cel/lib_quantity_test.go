package cel

import (
	"math/big"
	"testing"
)

// A quantity read keeps its canonical spelling; the result of arithmetic
// is spelled in decimal SI.
func TestQuantityValSpelling(t *testing.T) {
	t.Parallel()
	read := func(s string) quantityVal {
		t.Helper()
		q, err := parseQuantity(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return q
	}
	add := func(a, b quantityVal) quantityVal {
		return quantityOf(new(big.Int).Add(a.q.Nanos(), b.q.Nanos()))
	}
	tests := []struct {
		got  quantityVal
		want string
	}{
		{read("1.5Gi"), "1536Mi"},
		{read("2000m"), "2"},
		{read("1e3"), "1e3"},
		{add(read("1Gi"), read("1Gi")), "2147483648"},
		{add(read("1e3"), read("1k")), "2k"},
		{add(read("500m"), read("1")), "1500m"},
	}
	for _, tt := range tests {
		if got := tt.got.Value(); got != tt.want {
			t.Errorf("got %v, want %s", got, tt.want)
		}
	}
	for s, want := range map[string]int64{"2k": 2000, "-3": -3, "1Ki": 1024} {
		if n, ok := read(s).asInt64(); !ok || n != want {
			t.Errorf("%s: asInt64 %d, %v; want %d", s, n, ok, want)
		}
	}
	for _, s := range []string{"1.5", "1n", "1e19"} {
		if n, ok := read(s).asInt64(); ok {
			t.Errorf("%s: asInt64 %d, want none", s, n)
		}
	}
}

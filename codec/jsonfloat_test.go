package codec

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendJSONFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{1, "1"},
		{-1, "-1"},
		{0.1, "0.1"},
		{1.5, "1.5"},
		{123456789.125, "123456789.125"},
		{1e-6, "0.000001"},
		{9.99e-7, "9.99e-7"},
		{1e-7, "1e-7"},
		{1.5e-9, "1.5e-9"},
		{1e-10, "1e-10"},
		{-2.5e-300, "-2.5e-300"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{-1e21, "-1e+21"},
		{1.2345e22, "1.2345e+22"},
		{9007199254740993, "9007199254740992"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{math.NaN(), "null"},
		{math.Inf(1), "null"},
		{math.Inf(-1), "null"},
	}
	for _, tt := range tests {
		if got := string(AppendJSONFloat(nil, tt.f)); got != tt.want {
			t.Errorf("AppendJSONFloat(%v) = %s, want %s", tt.f, got, tt.want)
		}
		if math.IsNaN(tt.f) || math.IsInf(tt.f, 0) {
			continue
		}
		if want, err := json.Marshal(tt.f); err != nil || string(want) != tt.want {
			t.Errorf("encoding/json writes %v as %s (%v), table says %s", tt.f, want, err, tt.want)
		}
	}
	if got := string(AppendJSONFloat([]byte("x:"), 2.5)); got != "x:2.5" {
		t.Errorf("append to prefix: %s", got)
	}
}

func FuzzAppendJSONFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -1e-7, 1e21, 123.456, math.MaxFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		want, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONFloat(nil, x); string(got) != string(want) {
			t.Fatalf("AppendJSONFloat(%v) = %s, want %s", x, got, want)
		}
	})
}

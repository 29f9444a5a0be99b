package schema

import (
	"errors"
	"fmt"
	"math/big"
	"testing"
)

func mustAmount(t testing.TB, s string) Amount {
	t.Helper()
	q, err := ParseAmount(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return q
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, text, nanos string
	}{
		{"2000m", "2", "2000000000"},
		{"1024Mi", "1Gi", "1073741824000000000"},
		{"0.1", "100m", "100000000"},
		{"1.5Gi", "1536Mi", "1610612736000000000"},
		{"1.1n", "2n", "2"},
		{"-0.0000000001", "-1n", "-1"},
		{"0", "0", "0"},
		{"-0", "0", "0"},
		{"0Mi", "0", "0"},
		{"1e3", "1e3", "1000000000000"},
		{"12e-1", "1200e-3", "1200000000"},
		{"1024Ei", "9223372036854775807", "9223372036854775807000000000"},
		{"99999999999999999999", "99999999999999999999", "99999999999999999999000000000"},
		{"1e999", "1e999", "1" + zeros(1008)},
	}
	for _, tt := range tests {
		q := mustAmount(t, tt.in)
		if got := q.String(); got != tt.text {
			t.Errorf("%q: String %q, want %q", tt.in, got, tt.text)
		}
		if got := q.Nanos().String(); got != tt.nanos {
			t.Errorf("%q: nanos %s, want %s", tt.in, got, tt.nanos)
		}
		// The spelling is canonical: it reads back as itself.
		if back := mustAmount(t, q.String()); back.String() != q.String() || back.Cmp(q) != 0 {
			t.Errorf("%q: %q reads back as %q", tt.in, q.String(), back.String())
		}
	}
	for in, want := range map[string]string{"": quantityFormatText, "1x": quantityFormatText, "1K": quantitySuffixText, "1e1000": quantitySuffixText} {
		if _, err := ParseAmount(in); err == nil || err.Error() != want || !errors.Is(err, ErrQuantity) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

func TestAmountOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   any
		want string
		ok   bool
	}{
		{"250m", "250m", true}, {int64(3), "3", true}, {7, "7", true}, {1.5, "1500m", true},
		{"abc", "", false}, {true, "", false}, {nil, "", false}, {map[string]any{}, "", false},
	} {
		q, ok := AmountOf(tt.in)
		if ok != tt.ok || (ok && q.String() != tt.want) {
			t.Errorf("%v: %q, %v; want %q, %v", tt.in, q.String(), ok, tt.want, tt.ok)
		}
	}
}

// Arithmetic keeps the format of the left operand, or of the right one
// when the left is zero; a binary quantity below 1 parses as decimal.
func TestAmountArithmetic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b     string
		sum, dif string
		cmp      int
	}{
		{"1Gi", "1Gi", "2Gi", "0", 0},
		{"1Gi", "512Mi", "1536Mi", "512Mi", 1},
		{"512Mi", "1Gi", "1536Mi", "-512Mi", -1},
		{"1Ki", "1498976", "1500000", "-1497952", -1},
		{"1Ki", "1k", "2024", "24", 1},
		{"1k", "1Ki", "2024", "-24", -1},
		{"1e3", "1k", "2e3", "0", 0},
		{"500m", "750m", "1250m", "-250m", -1},
		{"1", "1003m", "2003m", "-3m", -1},
		{"0", "1Gi", "1Gi", "-1Gi", -1},
		{"0Ki", "1500m", "1500m", "-1500m", -1},
		{"1.5Ki", "512", "2Ki", "1Ki", 1},
		{"0.0005Ki", "1023488m", "1024", "-1022976m", -1},
		{"0.5Ki", "0.5Ki", "1Ki", "0", 0},
		{"1Ei", "1Ei", "2Ei", "0", 0},
		{"1E", "1E", "2E", "0", 0},
		{"-1", "1", "0", "-2", -1},
		{"1n", "1", "1000000001n", "-999999999n", -1},
	}
	for _, tt := range tests {
		a, b := mustAmount(t, tt.a), mustAmount(t, tt.b)
		if got := a.Add(b).String(); got != tt.sum {
			t.Errorf("%s + %s = %s, want %s", tt.a, tt.b, got, tt.sum)
		}
		if got := a.Sub(b).String(); got != tt.dif {
			t.Errorf("%s - %s = %s, want %s", tt.a, tt.b, got, tt.dif)
		}
		if got := a.Cmp(b); got != tt.cmp {
			t.Errorf("cmp(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.cmp)
		}
		if got := b.Cmp(a); got != -tt.cmp {
			t.Errorf("cmp(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.cmp)
		}
		// The operands are values: arithmetic leaves them as they were.
		if a.String() != mustAmount(t, tt.a).String() || b.String() != mustAmount(t, tt.b).String() {
			t.Errorf("%s, %s changed to %s, %s", tt.a, tt.b, a, b)
		}
	}
}

func TestAmountZero(t *testing.T) {
	t.Parallel()
	var z Amount
	if z.String() != "0" || z.Sign() != 0 || z.Nanos().Sign() != 0 || z.Value() != 0 {
		t.Errorf("zero Amount: %q sign %d", z.String(), z.Sign())
	}
	if got := z.Add(mustAmount(t, "2Gi")).String(); got != "2Gi" {
		t.Errorf("0 + 2Gi = %s", got)
	}
	if got := NanoAmount(big.NewInt(1500)).String(); got != "1500n" {
		t.Errorf("NanoAmount(1500) = %s", got)
	}
}

func TestAmountValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in          string
		value, mill int64
		ceil        string
	}{
		{"1500m", 2, 1500, "2"}, {"1n", 1, 1, "1"}, {"-1n", -1, -1, "0"}, {"1Ki", 1024, 1024000, "1Ki"},
		{"2.5", 3, 2500, "3"}, {"0", 0, 0, "0"}, {"1.0001m", 1, 2, "1"}, {"1e3", 1000, 1000000, "1e3"},
		{"-1.5", -2, -1500, "-1"}, {"1.5Gi", 1610612736, 1610612736000, "1536Mi"},
	}
	for _, tt := range tests {
		q := mustAmount(t, tt.in)
		if q.Value() != tt.value || q.MilliValue() != tt.mill || q.Ceil().String() != tt.ceil {
			t.Errorf("%s: value %d milli %d ceil %s, want %d %d %s", tt.in, q.Value(), q.MilliValue(), q.Ceil(), tt.value, tt.mill, tt.ceil)
		}
	}
}

func TestAmountCmpSpellings(t *testing.T) {
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
		a, okA := AmountOf(tt.a)
		b, okB := AmountOf(tt.b)
		if !okA || !okB {
			t.Errorf("%v, %v: not parsed", tt.a, tt.b)
			continue
		}
		if got := a.Cmp(b); got != tt.want {
			t.Errorf("cmp(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := b.Cmp(a); got != -tt.want {
			t.Errorf("cmp(%v, %v) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

func TestAmountOfValues(t *testing.T) {
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
		q, ok := AmountOf(tt.in)
		if !ok {
			t.Errorf("%v: not parsed", tt.in)
			continue
		}
		if q.String() != tt.text || q.Value() != tt.value || q.MilliValue() != tt.mill {
			t.Errorf("%v: text %q value %d milli %d, want %q %d %d", tt.in, q.String(), q.Value(), q.MilliValue(), tt.text, tt.value, tt.mill)
		}
	}
	for _, bad := range []any{"abc", "1x", "", nil, true, map[string]any{}} {
		if _, ok := AmountOf(bad); ok {
			t.Errorf("%v: parsed", bad)
		}
	}
}

// BenchmarkAmountParseAdd is how admission sums the resources of a pod's
// containers.
func BenchmarkAmountParseAdd(b *testing.B) {
	spellings := []any{"250m", "512Mi", "1", "1Gi", "100m", "64Mi"}
	b.ReportAllocs()
	for b.Loop() {
		var cpu, mem Amount
		for i := 0; i < len(spellings); i += 2 {
			c, ok1 := AmountOf(spellings[i])
			m, ok2 := AmountOf(spellings[i+1])
			if !ok1 || !ok2 {
				b.Fatal("not parsed")
			}
			cpu, mem = cpu.Add(c), mem.Add(m)
		}
		if cpu.Sign() <= 0 || mem.Sign() <= 0 {
			b.Fatal(cpu, mem)
		}
	}
}

var _ fmt.Stringer = Amount{}

package schema

import (
	"errors"
	"testing"
)

func TestCanonicalQuantity(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"2000m", "2"}, {"1024Mi", "1Gi"}, {"0.1", "100m"}, {"1e6", "1e6"}, {"1.5Gi", "1536Mi"},
		{"100", "100"}, {"0.5", "500m"}, {"0", "0"}, {"1", "1"}, {"10", "10"}, {"1000", "1k"},
		{"1500", "1500"}, {"1500000", "1500k"}, {"1k", "1k"}, {"1000k", "1M"}, {"1M", "1M"},
		{"1G", "1G"}, {"1T", "1T"}, {"1P", "1P"}, {"1E", "1E"}, {"1000E", "1e21"},
		{"1n", "1n"}, {"1000n", "1u"}, {"1u", "1u"}, {"1m", "1m"}, {"0.000000001", "1n"},
		{"0.0000000001", "1n"}, {"-0.0000000001", "-1n"}, {"1.1n", "2n"}, {"+5", "5"}, {"-5", "-5"},
		{"-0", "0"}, {"0m", "0"}, {"0Mi", "0"}, {"0.0", "0"}, {"1.", "1"}, {".5", "500m"},
		{"1Ki", "1Ki"}, {"1024", "1024"}, {"2048Ki", "2Mi"}, {"1025Mi", "1025Mi"}, {"512Mi", "512Mi"},
		{"1Ei", "1Ei"}, {"1024Ei", "9223372036854775807"}, {"0.5Ki", "512"}, {"0.5Gi", "512Mi"}, {"1.5Ki", "1536"},
		{"0.1Ki", "102400m"}, {"1e3", "1e3"}, {"1E3", "1e3"}, {"1e-3", "1e-3"}, {"1e0", "1"},
		{"10e3", "10e3"}, {"100e3", "100e3"}, {"1000e3", "1e6"}, {"1.5e3", "1500"}, {"12e-1", "1200e-3"},
		{"123456789", "123456789"}, {"1.23456789", "1234567890n"}, {"9223372036854775807", "9223372036854775807"},
		{"99999999999999999999", "99999999999999999999"}, {"100Gi", "100Gi"}, {"64Mi", "64Mi"}, {"250m", "250m"},
		{"1.5", "1500m"}, {"0.25", "250m"}, {"10Gi", "10Gi"}, {"3e9", "3e9"},
	}
	for _, tt := range tests {
		got, err := CanonicalQuantity(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%q → %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCanonicalQuantityErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", quantityFormatText}, {"x", quantityFormatText}, {"1x", quantityFormatText}, {".", quantityFormatText},
		{"1.2.3", quantityFormatText}, {"--1", quantityFormatText}, {"1 ", quantityFormatText}, {"+", quantityFormatText},
		{"1Ki5", quantitySuffixText}, {"1e", quantitySuffixText}, {"1mm", quantitySuffixText}, {"1KiB", quantityFormatText},
		{"1i", quantitySuffixText}, {"1K", quantitySuffixText},
	}
	for _, tt := range tests {
		got, err := CanonicalQuantity(tt.in)
		if err == nil {
			t.Errorf("%q: no error, got %q", tt.in, got)
			continue
		}
		if err.Error() != tt.want || !errors.Is(err, ErrQuantity) {
			t.Errorf("%q: error %q, want %q", tt.in, err, tt.want)
		}
	}
}

func FuzzCanonicalQuantity(f *testing.F) {
	for _, s := range []string{"2000m", "1024Mi", "0.1", "1e6", "1.5Gi", "-1n", "1E", "12e-1", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 {
			return
		}
		q, err := CanonicalQuantity(s)
		if err != nil {
			return
		}
		if exact := exactCanonical(t, s); q != exact {
			t.Fatalf("%q → %q, exactly %q", s, q, exact)
		}
		// The canonical form is a fixed point.
		q2, err := CanonicalQuantity(q)
		if err != nil || q2 != q {
			t.Fatalf("%q → %q → %q, %v", s, q, q2, err)
		}
	})
}

func TestCanonicalQuantityExtremeExponents(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"1e-100000": "1e-9", "0e-100000": "0", "1e999": "1e999", "-1e-5000": "-1e-9", "1n": "1n"} {
		got, err := CanonicalQuantity(in)
		if err != nil || got != want {
			t.Errorf("%q → %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CanonicalQuantity("1e1000"); err == nil {
		t.Error("1e1000 accepted")
	}
}

// exactCanonical is CanonicalQuantity computed with big integers only.
func exactCanonical(t *testing.T, s string) string {
	t.Helper()
	neg, units, format, err := parseQuantity(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return formatQuantity(neg, units, format)
}

// The 64-bit path gives what the exact one gives, at the edges of 64 bits
// too.
func TestCanonicalQuantitySmallMatchesExact(t *testing.T) {
	t.Parallel()
	mantissas := []string{"0", "1", "7", "10", "100", "999", "1000", "1024", "1500", "4096", "0.1", "0.5", ".25", "1.", "1.5",
		"0.000000001", "0.0000000001", "123456789", "1.23456789", "18446744073709551615", "18446744073709551616",
		"9999999999999999999", "1844674407370955161", "9223372036854775807", "99999999999999999999", "000000000000000000001",
		"1.8446744073709551615", "0.0000000000000000001"}
	suffixes := []string{"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
		"e0", "e1", "e3", "e-1", "e-3", "e-9", "e-10", "e9", "e10", "e18", "e19", "e20", "E-2", "e-30"}
	for _, sign := range []string{"", "-", "+"} {
		for _, m := range mantissas {
			for _, suf := range suffixes {
				s := sign + m + suf
				got, err := CanonicalQuantity(s)
				if err != nil {
					t.Errorf("%q: %v", s, err)
					continue
				}
				if want := exactCanonical(t, s); got != want {
					t.Errorf("%q → %q, exactly %q", s, got, want)
				}
			}
		}
	}
}

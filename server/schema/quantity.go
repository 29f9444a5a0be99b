package schema

import (
	"math/big"
	"strconv"
	"strings"
)

// Error texts of invalid quantities, as upstream words them.
const (
	quantityFormatText = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
	quantitySuffixText = "unable to parse quantity's suffix"
)

// quantityFormat is how a quantity's suffix is written; canonicalisation
// keeps it.
type quantityFormat uint8

const (
	decimalSI       quantityFormat = iota // n u m "" k M G T P E
	binarySI                              // Ki Mi Gi Ti Pi Ei
	decimalExponent                       // e<n> / E<n>
)

// maxExponent bounds a decimal exponent suffix so that a hostile
// "1e999999999" cannot make canonicalisation compute a huge power of ten;
// no resource amount comes near it.
const maxExponent = 1000

// nanoDigits is the smallest representable unit, 10^-9: finer values are
// rounded up (away from zero) to it, so asking for a tiny amount of a
// resource never yields zero.
const nanoDigits = 9

var (
	siExponent = map[string]int{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
	siSuffix   = map[int]string{-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
	binExp     = map[string]uint{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
	binSuffix  = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}

	bigTen     = big.NewInt(10)
	big1024    = big.NewInt(1024)
	nanoPerOne = new(big.Int).Exp(bigTen, big.NewInt(nanoDigits), nil)
	// maxBinary caps binary quantities at the largest int64, as upstream.
	maxBinary = new(big.Int).Mul(big.NewInt(1<<63-1), nanoPerOne)
)

func errQuantity(text string) error { return &wrapped{msg: text, kind: ErrQuantity} }

// CanonicalQuantity returns the canonical spelling of a resource quantity:
// the same format (binary, decimal SI or decimal exponent), the value
// rounded up to 1n, and the largest suffix that keeps an integer mantissa
// ("2000m" → "2", "1024Mi" → "1Gi", "0.1" → "100m", "1.5Gi" → "1536Mi").
// The error wraps ErrQuantity.
func CanonicalQuantity(s string) (string, error) {
	if s == "0" {
		return s, nil
	}
	neg, units, format, err := parseQuantity(s)
	if err != nil {
		return "", err
	}
	return formatQuantity(neg, units, format), nil
}

// parseQuantity returns the absolute value in units of 10^-9 (rounded up)
// and the sign and format.
func parseQuantity(s string) (neg bool, units *big.Int, format quantityFormat, err error) {
	p := 0
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		neg = s[p] == '-'
		p++
	}
	is := p
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		p++
	}
	intPart := s[is:p]
	frac := ""
	if p < len(s) && s[p] == '.' {
		p++
		fs := p
		for p < len(s) && s[p] >= '0' && s[p] <= '9' {
			p++
		}
		frac = s[fs:p]
	}
	if intPart == "" && frac == "" {
		return false, nil, 0, errQuantity(quantityFormatText)
	}
	ss := p
	for p < len(s) && strings.IndexByte("eEinumkKMGTP", s[p]) >= 0 {
		p++
	}
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		p++
	}
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		p++
	}
	if p != len(s) {
		return false, nil, 0, errQuantity(quantityFormatText)
	}
	suffix := s[ss:]

	// value = digits × 10^(exp10 - len(frac)) × 2^exp2
	exp10, exp2 := 0, uint(0)
	if e, ok := siExponent[suffix]; ok {
		format, exp10 = decimalSI, e
	} else if e, ok := binExp[suffix]; ok {
		format, exp2 = binarySI, e
	} else if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		e, perr := strconv.Atoi(suffix[1:])
		if perr != nil || e > maxExponent || e < -maxExponent*maxExponent {
			return false, nil, 0, errQuantity(quantitySuffixText)
		}
		format, exp10 = decimalExponent, e
	} else {
		return false, nil, 0, errQuantity(quantitySuffixText)
	}
	if exp10+len(intPart) > maxExponent {
		return false, nil, 0, errQuantity(quantitySuffixText)
	}
	digits, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return false, nil, 0, errQuantity(quantityFormatText)
	}
	digits.Lsh(digits, exp2)
	shift := exp10 - len(frac) + nanoDigits
	if shift >= 0 {
		digits.Mul(digits, pow10(shift))
	} else if -shift > len(intPart)+len(frac) {
		// Smaller than 1n: rounds up to 1n unless zero.
		if digits.Sign() != 0 {
			digits.SetInt64(1)
		}
	} else {
		q, r := new(big.Int).QuoRem(digits, pow10(-shift), new(big.Int))
		if r.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		digits = q
	}
	if digits.Sign() == 0 {
		neg = false
	}
	if format == binarySI {
		if digits.Cmp(maxBinary) > 0 {
			digits.Set(maxBinary)
		}
		if digits.Sign() > 0 && digits.Cmp(nanoPerOne) < 0 {
			format = decimalSI
		}
	}
	return neg, digits, format, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

func formatQuantity(neg bool, units *big.Int, format quantityFormat) string {
	if units.Sign() == 0 {
		return "0"
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if format == binarySI {
		whole, rem := new(big.Int).QuoRem(units, nanoPerOne, new(big.Int))
		if rem.Sign() == 0 && whole.Cmp(big1024) >= 0 {
			k := 0
			m := new(big.Int)
			for k < len(binSuffix)-1 {
				q, r := new(big.Int).QuoRem(whole, big1024, m)
				if r.Sign() != 0 {
					break
				}
				whole = q
				k++
			}
			return sign + whole.String() + binSuffix[k]
		}
		format = decimalSI
	}
	// Strip trailing zeros into the exponent, then lower the exponent to a
	// multiple of three.
	m := new(big.Int).Set(units)
	e := -nanoDigits
	r := new(big.Int)
	for {
		q, rr := new(big.Int).QuoRem(m, bigTen, r)
		if rr.Sign() != 0 {
			break
		}
		m = q
		e++
	}
	if rem := ((e % 3) + 3) % 3; rem != 0 {
		m.Mul(m, pow10(rem))
		e -= rem
	}
	if format == decimalSI {
		if suf, ok := siSuffix[e]; ok {
			return sign + m.String() + suf
		}
	}
	if e == 0 {
		return sign + m.String()
	}
	return sign + m.String() + "e" + strconv.Itoa(e)
}

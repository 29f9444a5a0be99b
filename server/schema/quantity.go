package schema

import (
	"math/big"
	"math/bits"
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
	q, err := scanQuantity(s)
	if err != nil {
		return "", err
	}
	// Nearly every quantity fits in 64 bits of nanos: computed there, it
	// allocates only its result.
	if neg, units, format, ok := q.smallUnits(); ok {
		if out, ok := formatSmallQuantity(s, neg, units, format); ok {
			return out, nil
		}
	}
	neg, units, format, err := q.units()
	if err != nil {
		return "", err
	}
	return formatQuantity(neg, units, format), nil
}

// QuantityText is the text of a quantity as a decoded object holds it: a
// string, or a number (JSON numbers decode as float64, integers written
// by the server as int64 or int). Anything else is no quantity.
func QuantityText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

// parseQuantity returns the absolute value in units of 10^-9 (rounded up)
// and the sign and format.
func parseQuantity(s string) (neg bool, units *big.Int, format quantityFormat, err error) {
	q, err := scanQuantity(s)
	if err != nil {
		return false, nil, 0, err
	}
	return q.units()
}

// scannedQuantity is a quantity's syntax: value = ±digits(intPart frac) ×
// 10^(exp10 - len(frac)) × 2^exp2.
type scannedQuantity struct {
	neg     bool
	intPart string
	frac    string
	format  quantityFormat
	exp10   int
	exp2    uint
}

func scanQuantity(s string) (scannedQuantity, error) {
	var q scannedQuantity
	p := 0
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		q.neg = s[p] == '-'
		p++
	}
	is := p
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		p++
	}
	q.intPart = s[is:p]
	if p < len(s) && s[p] == '.' {
		p++
		fs := p
		for p < len(s) && s[p] >= '0' && s[p] <= '9' {
			p++
		}
		q.frac = s[fs:p]
	}
	if q.intPart == "" && q.frac == "" {
		return q, errQuantity(quantityFormatText)
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
		return q, errQuantity(quantityFormatText)
	}
	suffix := s[ss:]
	if e, ok := siExponent[suffix]; ok {
		q.format, q.exp10 = decimalSI, e
	} else if e, ok := binExp[suffix]; ok {
		q.format, q.exp2 = binarySI, e
	} else if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		e, perr := strconv.Atoi(suffix[1:])
		if perr != nil || e > maxExponent || e < -maxExponent*maxExponent {
			return q, errQuantity(quantitySuffixText)
		}
		q.format, q.exp10 = decimalExponent, e
	} else {
		return q, errQuantity(quantitySuffixText)
	}
	if q.exp10+len(q.intPart) > maxExponent {
		return q, errQuantity(quantitySuffixText)
	}
	return q, nil
}

// units is the value in units of 10^-9, rounded up, with the sign and the
// format it is written back in.
func (q scannedQuantity) units() (neg bool, units *big.Int, format quantityFormat, err error) {
	neg, format = q.neg, q.format
	digits, ok := new(big.Int).SetString(q.intPart+q.frac, 10)
	if !ok {
		return false, nil, 0, errQuantity(quantityFormatText)
	}
	digits.Lsh(digits, q.exp2)
	shift := q.exp10 - len(q.frac) + nanoDigits
	if shift >= 0 {
		digits.Mul(digits, pow10(shift))
	} else if -shift > len(q.intPart)+len(q.frac) {
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

// smallPow10 holds the powers of ten that fit in 64 bits.
var smallPow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// smallUnits is units computed in 64 bits; ok is false when the value
// does not fit (units then computes it exactly).
func (q scannedQuantity) smallUnits() (neg bool, units uint64, format quantityFormat, ok bool) {
	n := len(q.intPart) + len(q.frac)
	if n > 19 {
		return false, 0, 0, false
	}
	var d uint64
	for _, part := range [2]string{q.intPart, q.frac} {
		for i := 0; i < len(part); i++ {
			d = d*10 + uint64(part[i]-'0')
		}
	}
	if d != 0 && bits.LeadingZeros64(d) <= int(q.exp2) {
		return false, 0, 0, false
	}
	d <<= q.exp2
	shift := q.exp10 - len(q.frac) + nanoDigits
	switch {
	case shift >= 0:
		if shift >= len(smallPow10) {
			if d != 0 {
				return false, 0, 0, false
			}
			break
		}
		hi, lo := bits.Mul64(d, smallPow10[shift])
		if hi != 0 {
			return false, 0, 0, false
		}
		d = lo
	case -shift > n:
		// Smaller than 1n: rounds up to 1n unless zero.
		d = min(d, 1)
	default:
		div := smallPow10[-shift]
		r := d % div
		d /= div
		if r != 0 {
			d++
		}
	}
	neg, format = q.neg && d != 0, q.format
	// maxBinary is beyond 64 bits, so no cap applies here.
	if format == binarySI && d > 0 && d < smallPow10[nanoDigits] {
		format = decimalSI
	}
	return neg, d, format, true
}

// formatSmallQuantity is formatQuantity of a 64-bit value; ok is false
// when an intermediate does not fit. A result equal to in is returned as
// in, without allocating.
func formatSmallQuantity(in string, neg bool, units uint64, format quantityFormat) (string, bool) {
	if units == 0 {
		return "0", true
	}
	var buf [32]byte
	out := buf[:0]
	if neg {
		out = append(out, '-')
	}
	if format == binarySI {
		whole, rem := units/smallPow10[nanoDigits], units%smallPow10[nanoDigits]
		if rem == 0 && whole >= 1024 {
			k := 0
			for k < len(binSuffix)-1 && whole%1024 == 0 {
				whole /= 1024
				k++
			}
			out = strconv.AppendUint(out, whole, 10)
			return sameOrString(in, append(out, binSuffix[k]...)), true
		}
		format = decimalSI
	}
	m, e := units, -nanoDigits
	for m%10 == 0 {
		m /= 10
		e++
	}
	if rem := ((e % 3) + 3) % 3; rem != 0 {
		hi, lo := bits.Mul64(m, smallPow10[rem])
		if hi != 0 {
			return "", false
		}
		m = lo
		e -= rem
	}
	out = strconv.AppendUint(out, m, 10)
	if format == decimalSI {
		if suf, ok := siSuffix[e]; ok {
			return sameOrString(in, append(out, suf...)), true
		}
	}
	if e != 0 {
		out = append(out, 'e')
		out = strconv.AppendInt(out, int64(e), 10)
	}
	return sameOrString(in, out), true
}

// sameOrString returns in when b spells it, else b as a new string.
func sameOrString(in string, b []byte) string {
	if in == string(b) {
		return in
	}
	return string(b)
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

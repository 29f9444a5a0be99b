package builtin

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"platd/server/schema"
)

// quantity is a resource amount held exactly, in units of 10^-9 (the
// finest amount a quantity carries), with its canonical spelling for
// messages.
type quantity struct {
	// nanos may be shared (parseQuantity caches quantities): read only.
	nanos *big.Int
	text  string
}

// Exponents of the suffixes a canonical quantity ends with.
var (
	decimalSuffixExp = map[string]int{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
	binarySuffixExp  = map[string]uint{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
)

// parseQuantity reads a quantity as objects hold it: a string (any valid
// spelling; it is canonicalised first) or an integer.
func parseQuantity(v any) (quantity, bool) {
	s, ok := schema.QuantityText(v)
	if !ok {
		return quantity{}, false
	}
	if q, ok := quantityCache.Load(s); ok {
		return q.(quantity), true
	}
	c, err := schema.CanonicalQuantity(s)
	if err != nil {
		return quantity{}, false
	}
	n, ok := canonicalNanos(c)
	if !ok {
		return quantity{}, false
	}
	q := quantity{nanos: n, text: c}
	if quantityCacheSize.Load() < quantityCacheMax && quantityCacheSize.Add(1) <= quantityCacheMax {
		// Cloned: s and c may be substrings of a whole request body.
		q.text = strings.Clone(c)
		quantityCache.Store(strings.Clone(s), q)
	}
	return q, true
}

// quantityCache holds parsed quantities by spelling: a few spellings
// ("250m", "512Mi", "1Gi") make up nearly every amount written, and a
// parsed quantity is only read. Up to quantityCacheMax spellings are
// kept, so odd spellings cannot grow it without bound.
var (
	quantityCache     sync.Map // string → quantity
	quantityCacheSize atomic.Int32
)

const quantityCacheMax = 4096

// canonicalNanos returns the value of a canonical quantity (an optional
// minus, an integer mantissa and a decimal, binary or exponent suffix) in
// units of 10^-9.
func canonicalNanos(c string) (*big.Int, bool) {
	i := 0
	if i < len(c) && c[i] == '-' {
		i++
	}
	for i < len(c) && c[i] >= '0' && c[i] <= '9' {
		i++
	}
	var mant *big.Int
	if n, err := strconv.ParseInt(c[:i], 10, 64); err == nil {
		mant = big.NewInt(n)
	} else if m, ok := new(big.Int).SetString(c[:i], 10); ok {
		mant = m
	} else {
		return nil, false
	}
	suffix := c[i:]
	exp10 := 0
	if e, ok := decimalSuffixExp[suffix]; ok {
		exp10 = e
	} else if e, ok := binarySuffixExp[suffix]; ok {
		mant.Lsh(mant, e)
	} else if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		e, err := strconv.Atoi(suffix[1:])
		if err != nil {
			return nil, false
		}
		exp10 = e
	} else {
		return nil, false
	}
	// Canonical quantities never hold less than 1n, so the shift below is
	// a multiplication or an exact division.
	shift := exp10 + 9
	if shift >= 0 {
		return mant.Mul(mant, pow10(shift)), true
	}
	q, r := new(big.Int).QuoRem(mant, pow10(-shift), new(big.Int))
	if r.Sign() != 0 {
		return nil, false
	}
	return q, true
}

// pow10 returns 10^n. The result may be shared: callers only read it.
func pow10(n int) *big.Int {
	if n >= 0 && n < len(sharedPow10) {
		return sharedPow10[n]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// sharedPow10 holds the powers of ten quantities use most (up to 10^27,
// the nanos of an exa amount), computed once.
var sharedPow10 = func() []*big.Int {
	p := make([]*big.Int, 28)
	p[0] = big.NewInt(1)
	for i := 1; i < len(p); i++ {
		p[i] = new(big.Int).Mul(p[i-1], big.NewInt(10))
	}
	return p
}()

// plus returns q + o spelled in q's format, or in o's when q is zero, as
// upstream adds one quantity to another.
func (q quantity) plus(o quantity) quantity {
	sum := new(big.Int).Add(q.nanos, o.nanos)
	like := q.text
	if q.nanos.Sign() == 0 {
		like = o.text
	}
	return quantity{nanos: sum, text: schema.FormatQuantityLike(sum, like)}
}

// cmp compares two quantities: -1, 0 or +1.
func (q quantity) cmp(o quantity) int { return q.nanos.Cmp(o.nanos) }

// scaled returns the value in units of 10^exp, rounded away from zero and
// truncated to 64 bits, as upstream's Value (exp 0) and MilliValue (exp -3)
// compute it.
func (q quantity) scaled(exp int) int64 {
	if e := exp + 9; q.nanos.IsInt64() && e >= 0 && e <= 18 {
		n, div := q.nanos.Int64(), int64(1)
		for range e {
			div *= 10
		}
		v, r := n/div, n%div
		if r > 0 {
			v++
		} else if r < 0 {
			v--
		}
		return v
	}
	div := pow10(exp + 9)
	v, r := new(big.Int).QuoRem(q.nanos, div, new(big.Int))
	if r.Sign() > 0 {
		v.Add(v, big.NewInt(1))
	} else if r.Sign() < 0 {
		v.Sub(v, big.NewInt(1))
	}
	return v.Int64()
}

// value is the amount rounded away from zero to a whole unit.
func (q quantity) value() int64 { return q.scaled(0) }

// milliValue is the amount in thousandths, rounded away from zero.
func (q quantity) milliValue() int64 { return q.scaled(-3) }

// maxMilliValue is the largest value whose milli-value still fits 64 bits.
const maxMilliValue = math.MaxInt64 / 1000

// bad returns the quantity as the bad value of a field error: printed bare,
// as upstream prints a quantity, not quoted like a string.
func (q quantity) bad() quantityText { return quantityText(q.text) }

// quantityText prints unquoted in field errors.
type quantityText string

// GoString makes apierr.FormatValue print the quantity as it is.
func (q quantityText) GoString() string { return string(q) }

var _ fmt.GoStringer = quantityText("")

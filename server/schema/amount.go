package schema

import (
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
)

// Amount is the value of a resource quantity held exactly, in units of
// 10^-9 (the finest amount a quantity carries), with the format (decimal
// SI, binary SI or decimal exponent) it is spelled in. Arithmetic keeps
// the format as upstream's quantities do. The zero Amount is zero,
// decimal SI.
//
// An Amount is a value: its methods never change it or their arguments,
// and it may be read from any number of goroutines.
type Amount struct {
	// nanos is nil for zero. It may be shared between amounts (parsed
	// amounts are cached): read only.
	nanos  *big.Int
	format quantityFormat
	// text is the canonical spelling when known; "" means String computes
	// it.
	text string
}

// bigZero stands for a nil amount; read only.
var bigZero = new(big.Int)

// ParseAmount reads any valid spelling of a quantity. The value is
// rounded up (away from zero) to 1n, and a binary quantity below 1 is
// decimal SI, as upstream parses. The error wraps ErrQuantity and carries
// upstream's text.
func ParseAmount(s string) (Amount, error) {
	if q, ok := quantityCache.Load(s); ok {
		return q.(Amount), nil
	}
	q, err := parseAmount(s)
	if err != nil {
		return Amount{}, err
	}
	if quantityCacheSize.Load() < quantityCacheMax && quantityCacheSize.Add(1) <= quantityCacheMax {
		// Cloned: s and the text may be substrings of a whole request body.
		q.text = strings.Clone(q.text)
		quantityCache.Store(strings.Clone(s), q)
	}
	return q, nil
}

// AmountOf reads a quantity as a decoded object holds it (see
// QuantityText); ok is false for anything that is no valid quantity.
func AmountOf(v any) (Amount, bool) {
	s, ok := QuantityText(v)
	if !ok {
		return Amount{}, false
	}
	q, err := ParseAmount(s)
	return q, err == nil
}

// quantityCache holds parsed quantities by spelling: a few spellings
// ("250m", "512Mi", "1Gi") make up nearly every amount written, and a
// Amount is only read. Up to quantityCacheMax spellings are kept, so odd
// spellings cannot grow it without bound.
var (
	quantityCache     sync.Map // string → Amount
	quantityCacheSize atomic.Int32
)

const quantityCacheMax = 4096

func parseAmount(s string) (Amount, error) {
	sq, err := scanQuantity(s)
	if err != nil {
		return Amount{}, err
	}
	if neg, units, format, ok := sq.smallUnits(); ok {
		if units == 0 {
			return Amount{format: format, text: "0"}, nil
		}
		if text, ok := formatSmallQuantity(s, neg, units, format); ok {
			n := new(big.Int).SetUint64(units)
			if neg {
				n.Neg(n)
			}
			return Amount{nanos: n, format: format, text: text}, nil
		}
	}
	neg, units, format, err := sq.units()
	if err != nil {
		return Amount{}, err
	}
	text := formatQuantity(neg, units, format)
	if neg {
		units.Neg(units)
	}
	return Amount{nanos: units, format: format, text: text}, nil
}

// NanoAmount is nanos × 10^-9 in decimal SI. nanos is kept: the caller
// must not change it afterwards.
func NanoAmount(nanos *big.Int) Amount { return Amount{nanos: nanos} }

// Nanos returns the amount in units of 10^-9. The result may be shared:
// callers only read it.
func (q Amount) Nanos() *big.Int {
	if q.nanos == nil {
		return bigZero
	}
	return q.nanos
}

// String returns the canonical spelling in q's format: the largest suffix
// that keeps an integer mantissa ("2", "1Gi", "1536Mi", "100m", "1e3").
func (q Amount) String() string {
	if q.text != "" {
		return q.text
	}
	n := q.Nanos()
	if n.Sign() == 0 {
		return "0"
	}
	neg := n.Sign() < 0
	if abs := n.Bits(); len(abs) == 1 {
		if s, ok := formatSmallQuantity("", neg, uint64(abs[0]), q.format); ok {
			return s
		}
	}
	return formatQuantity(neg, new(big.Int).Abs(n), q.format)
}

// Sign returns -1, 0 or +1.
func (q Amount) Sign() int { return q.Nanos().Sign() }

// Cmp compares q with o: -1, 0 or +1.
func (q Amount) Cmp(o Amount) int { return q.Nanos().Cmp(o.Nanos()) }

// Add returns q+o in q's format, or in o's when q is zero, as upstream
// adds one quantity to another.
func (q Amount) Add(o Amount) Amount {
	format := q.format
	if q.Sign() == 0 {
		format = o.format
	}
	return Amount{nanos: new(big.Int).Add(q.Nanos(), o.Nanos()), format: format}
}

// Sub returns q-o in q's format, or in o's when q is zero, as upstream
// subtracts one quantity from another.
func (q Amount) Sub(o Amount) Amount {
	format := q.format
	if q.Sign() == 0 {
		format = o.format
	}
	return Amount{nanos: new(big.Int).Sub(q.Nanos(), o.Nanos()), format: format}
}

// Ceil returns q rounded up to an integer, in q's format.
func (q Amount) Ceil() Amount {
	n := q.Nanos()
	whole, rem := new(big.Int).QuoRem(n, nanoPerOne, new(big.Int))
	if rem.Sign() == 0 {
		return q
	}
	if rem.Sign() > 0 {
		whole.Add(whole, big.NewInt(1))
	}
	return Amount{nanos: whole.Mul(whole, nanoPerOne), format: q.format}
}

// Value is the amount rounded away from zero to an integer and truncated
// to 64 bits, as upstream's Value computes it.
func (q Amount) Value() int64 { return q.scaled(0) }

// MilliValue is the amount in thousandths, rounded away from zero and
// truncated to 64 bits, as upstream's MilliValue computes it.
func (q Amount) MilliValue() int64 { return q.scaled(-3) }

// scaled returns the amount in units of 10^exp (exp ≥ -9), rounded away
// from zero and truncated to 64 bits.
func (q Amount) scaled(exp int) int64 {
	n := q.Nanos()
	shift := exp + nanoDigits
	if n.IsInt64() && shift < len(smallPow10) && smallPow10[shift] <= 1<<63-1 {
		v, div := n.Int64(), int64(smallPow10[shift])
		r := v % div
		v /= div
		if r > 0 {
			v++
		} else if r < 0 {
			v--
		}
		return v
	}
	v, r := new(big.Int).QuoRem(n, pow10(shift), new(big.Int))
	if r.Sign() > 0 {
		v.Add(v, big.NewInt(1))
	} else if r.Sign() < 0 {
		v.Sub(v, big.NewInt(1))
	}
	return v.Int64()
}

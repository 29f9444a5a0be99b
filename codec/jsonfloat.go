package codec

import (
	"math"
	"strconv"
)

// AppendJSONFloat appends f formatted exactly as encoding/json formats a
// float64: the shortest representation that round-trips, in exponent form
// below 1e-6 and from 1e21 on, with a one-digit negative exponent written
// without its leading zero (1e-7, not 1e-07). NaN and the infinities, which
// JSON cannot carry and encoding/json refuses, are written as null; callers
// that must refuse them check before calling.
func AppendJSONFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

package builtin

import (
	"fmt"
	"math"

	"platd/server/schema"
)

// maxMilliValue is the largest value whose milli-value still fits 64 bits.
const maxMilliValue = math.MaxInt64 / 1000

// badQuantity returns q as the bad value of a field error: printed bare,
// as upstream prints a quantity, not quoted like a string.
func badQuantity(q schema.Amount) quantityText { return quantityText(q.String()) }

// quantityText prints unquoted in field errors.
type quantityText string

// GoString makes apierr.FormatValue print the quantity as it is.
func (q quantityText) GoString() string { return string(q) }

var _ fmt.GoStringer = quantityText("")

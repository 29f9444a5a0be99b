package builtin

import (
	"testing"

	"platd/server/apierr"
	"platd/server/schema"
)

func TestQuantityBadValuePrintsBare(t *testing.T) {
	t.Parallel()
	q, _ := schema.AmountOf("0.5")
	e := apierr.Invalid("x", badQuantity(q), "d")
	if got, want := e.Error(), "x: Invalid value: 500m: d"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

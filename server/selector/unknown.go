package selector

import (
	"strconv"
	"strings"
)

// UnknownFieldError renders the message the API server returns (as a 400
// BadRequest) when a field selector names a field the resource does not
// support, e.g.
//
//	"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"
//
// known lists the supported fields in the order they should be named.
func UnknownFieldError(field string, known []string) string {
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = strconv.Quote(k)
	}
	return strconv.Quote(field) + " is not a known field selector: only " + strings.Join(quoted, ", ")
}

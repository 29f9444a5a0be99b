package printers

import (
	"slices"
	"strings"

	"platd/server/apierr"
	"platd/server/jsonpath"
)

// The types and formats a printer column may declare, in the order
// upstream lists them in its messages.
var (
	ColumnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	ColumnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

// ValidateColumn is upstream's check of one additionalPrinterColumns entry
// of a CRD, with its messages; field is the entry's path, such as
// "spec.versions[0].additionalPrinterColumns[1]". As upstream, the path
// error names the Go field "JSONPath", not the JSON "jsonPath".
func ValidateColumn(c Column, field string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if c.Name == "" {
		errs = append(errs, apierr.Required(field+".name", ""))
	}
	types := "must be one of " + strings.Join(ColumnTypes, ",")
	switch {
	case c.Type == "":
		errs = append(errs, apierr.Required(field+".type", types))
	case !slices.Contains(ColumnTypes, c.Type):
		errs = append(errs, apierr.Invalid(field+".type", c.Type, types))
	}
	if c.Format != "" && !slices.Contains(ColumnFormats, c.Format) {
		errs = append(errs, apierr.Invalid(field+".format", c.Format, "must be one of "+strings.Join(ColumnFormats, ",")))
	}
	if c.JSONPath == "" {
		errs = append(errs, apierr.Required(field+".JSONPath", ""))
	} else {
		errs = append(errs, jsonpath.ValidateSimplePath(c.JSONPath, field+".JSONPath")...)
	}
	return errs
}

package printers

import (
	"fmt"
	"strings"
	"time"

	"platd/server/jsonpath"
	"platd/server/registry"
)

// Column is one additionalPrinterColumns entry of a custom resource
// version, as the CRD spells it. Its fields match customresource.Column
// so that one converts to the other.
type Column struct {
	Name, Type, Format, Description, JSONPath string
	Priority                                  int
}

// defaultCustomColumns are served when a version declares no columns: the
// object's age, read as a date column.
var defaultCustomColumns = []Column{{
	Name: "Age", Type: "date", Description: ageColumn().def.Description,
	JSONPath: ".metadata.creationTimestamp",
}}

// CustomResourceTable builds the Table of a custom resource version from
// its printer columns, as upstream prints custom resources: the Name column
// first, then one column per entry (the Age column when there are none).
// A column whose path does not parse ends the table there: the error says
// which, and the Table returned holds the columns before it, which is what
// upstream serves in that case. The Table may be used concurrently.
func CustomResourceTable(cols []Column) (*registry.Table, error) {
	if len(cols) == 0 {
		cols = defaultCustomColumns
	}
	name := nameColumn().def
	defs := []registry.TableColumn{name}
	var paths []*jsonpath.Template
	var types []string
	var err error
	managed := false
	for _, c := range cols {
		// Named, or reachable through a wildcard or a recursive descent.
		managed = managed || strings.Contains(c.JSONPath, "managedFields") || strings.Contains(c.JSONPath, "*") || strings.Contains(c.JSONPath, "..")
		tpl, perr := jsonpath.Parse("{" + c.JSONPath + "}")
		if perr != nil {
			err = fmt.Errorf("unrecognized column definition %q", c.JSONPath)
			break
		}
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		defs = append(defs, registry.TableColumn{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority,
		})
		paths = append(paths, tpl)
		types = append(types, c.Type)
	}
	return &registry.Table{
		Columns:            defs,
		ReadsManagedFields: managed,
		Row: func(o registry.Object, now time.Time) ([]any, []any) {
			cells := make([]any, 1, 1+len(paths))
			cells[0] = str(o, "metadata", "name")
			for i, p := range paths {
				cells = append(cells, customCell(p, types[i], o, now))
			}
			return cells, nil
		},
	}, err
}

// customCell is one column's cell: nil when the path selects nothing or
// fails. A string column prints what it selects, several values as one
// JSON array; other types take the first value if it has their type.
func customCell(p *jsonpath.Template, typ string, o registry.Object, now time.Time) any {
	results, err := p.FindResults(o, true)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	if typ != "string" {
		return typedCell(typ, results[0][0], now)
	}
	v := results[0][0]
	if len(results[0]) > 1 {
		v = append([]any(nil), results[0]...)
	}
	if v == nil {
		// Upstream prints a null through Go's template printer.
		return "<no value>"
	}
	s, err := jsonpath.Text(v)
	if err != nil {
		return nil
	}
	return s
}

// typedCell converts a selected value to a cell of a non-string column
// type; a value of another type, and an unknown column type, give nil.
func typedCell(typ string, v any, now time.Time) any {
	switch typ {
	case "integer":
		switch x := v.(type) {
		case int64:
			return x
		case float64:
			return int64(x)
		}
	case "number":
		switch x := v.(type) {
		case int64:
			return float64(x)
		case float64:
			return x
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			return dateCell(s, now)
		}
	}
	return nil
}

// CustomResourceScaleTable builds the Table of a custom resource version's
// scale subresource, which prints the autoscaling/v1 Scale: the Name
// column, Desired and Available when scale names their paths, then Age, as
// upstream builds it (through the printer column path, so Name has the
// name format here, unlike the built-in Scale table). nil scale, a version
// without the subresource, gives Name and Age.
func CustomResourceScaleTable(scale *registry.ScalePaths) *registry.Table {
	var cols []Column
	if scale != nil {
		if scale.SpecReplicas != "" {
			cols = append(cols, Column{Name: "Desired", Type: "integer", JSONPath: ".spec.replicas",
				Description: desiredDescription})
		}
		if scale.StatusReplicas != "" {
			cols = append(cols, Column{Name: "Available", Type: "integer", JSONPath: ".status.replicas",
				Description: availableDescription})
		}
	}
	cols = append(cols, defaultCustomColumns...)
	t, _ := CustomResourceTable(cols) // these paths always parse
	return t
}

// dateCell renders a timestamp as the age it gives at now: "<unknown>" for
// an empty or zero time, "<invalid>" for text that is not RFC 3339.
func dateCell(s string, now time.Time) string {
	if s == "" || s == "null" {
		return unknown
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return "<invalid>"
	}
	return since(t, now)
}

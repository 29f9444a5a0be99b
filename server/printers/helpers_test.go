package printers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"platd/config"
	"platd/server/registry"
)

// testNow is the instant the unit tests print at.
var testNow = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

// ago is the RFC 3339 timestamp d before testNow.
func ago(d time.Duration) string { return testNow.Add(-d).Format(time.RFC3339) }

// decode turns JSON text into an object as the server holds it: numbers
// as int64 or float64.
func decode(t testing.TB, text string) registry.Object {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var o map[string]any
	if err := d.Decode(&o); err != nil {
		t.Fatalf("decode %s: %v", text, err)
	}
	return numbersToValues(o).(map[string]any)
}

func testBrand(t testing.TB, name string) config.Brand {
	t.Helper()
	b, err := config.LookupBrand(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// colSpec is a column definition without its description, which clients
// ignore.
type colSpec struct {
	Name, Type, Format string
	Priority           int
}

func specsOf(cols []registry.TableColumn) []colSpec {
	out := make([]colSpec, len(cols))
	for i, c := range cols {
		out[i] = colSpec{c.Name, c.Type, c.Format, c.Priority}
	}
	return out
}

// printerCase is one object and the row it must print as.
type printerCase struct {
	name  string
	obj   string
	cells []any
	conds []any
}

// checkTable checks a table's columns and, for each case, its row.
func checkTable(t *testing.T, tbl *registry.Table, cols []colSpec, cases []printerCase) {
	t.Helper()
	if tbl == nil {
		t.Fatal("no table")
	}
	if got := specsOf(tbl.Columns); !reflect.DeepEqual(got, cols) {
		t.Errorf("columns:\n got  %+v\n want %+v", got, cols)
	}
	for _, c := range tbl.Columns {
		if c.Description == "" {
			t.Errorf("column %q has no description", c.Name)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cells, conds := tbl.Row(decode(t, tc.obj), testNow)
			if !reflect.DeepEqual(cells, tc.cells) {
				t.Errorf("cells:\n got  %#v\n want %#v", cells, tc.cells)
			}
			if !reflect.DeepEqual(conds, tc.conds) {
				t.Errorf("conditions:\n got  %#v\n want %#v", conds, tc.conds)
			}
		})
	}
}

// Column specs spelled once for the tests.
var (
	nameSpec = colSpec{"Name", "string", "name", 0}
	ageSpec  = colSpec{"Age", "string", "", 0}
)

func str0(name string) colSpec  { return colSpec{name, "string", "", 0} }
func str1(name string) colSpec  { return colSpec{name, "string", "", 1} }
func int0(name string) colSpec  { return colSpec{name, "integer", "", 0} }
func bool0(name string) colSpec { return colSpec{name, "boolean", "", 0} }

// numbersToValues turns json.Number into int64 or float64, as decoded
// objects hold them.
func numbersToValues(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbersToValues(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbersToValues(x[k])
		}
	}
	return v
}

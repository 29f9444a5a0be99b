package printers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"platd/server/registry"
)

// crObject decodes JSON into the generic form, integers as int64.
func crObject(t *testing.T, s string) registry.Object {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return numbersToValues(m).(map[string]any)
}

var crNow = time.Date(2025, 1, 2, 15, 0, 0, 0, time.UTC)

// TestTypedCell has upstream's cases for a cell of each column type.
func TestTypedCell(t *testing.T) {
	ago := crNow.Add(-12*time.Hour - 30*time.Minute).Format(time.RFC3339)
	ahead := crNow.Add(12*time.Hour + 30*time.Minute).Format(time.RFC3339)
	for _, c := range []struct {
		typ   string
		value any
		want  any
	}{
		{"integer", int64(42), int64(42)},
		{"integer", 3.14, int64(3)},
		{"integer", true, nil},
		{"integer", "foo", nil},
		{"integer", 7, nil}, // a template literal is not a JSON integer
		{"number", int64(42), float64(42)},
		{"number", 3.14, 3.14},
		{"number", true, nil},
		{"number", "foo", nil},
		{"boolean", int64(42), nil},
		{"boolean", 3.14, nil},
		{"boolean", true, true},
		{"boolean", "foo", nil},
		{"date", int64(42), nil},
		{"date", 3.14, nil},
		{"date", true, nil},
		{"date", ago, "12h"},
		{"date", ahead, "<invalid>"},
		{"date", "", "<unknown>"},
		{"date", "null", "<unknown>"},
		{"date", "yesterday", "<invalid>"},
		{"date", "2025-01-02T14:59:30.250Z", "29s"},
		{"date", "0001-01-01T00:00:00Z", "<unknown>"},
		{"unknown", "foo", nil},
		{"integer", nil, nil},
	} {
		if got := typedCell(c.typ, c.value, crNow); !reflect.DeepEqual(got, c.want) {
			t.Errorf("typedCell(%s, %#v) = %#v, want %#v", c.typ, c.value, got, c.want)
		}
	}
}

func TestCustomResourceColumns(t *testing.T) {
	tbl, err := CustomResourceTable([]Column{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas", Description: "Desired replicas."},
		{Name: "Ready", Type: "string", Format: "", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Priority: 1},
		{Name: "Size", Type: "number", Format: "double", JSONPath: ".spec.size"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []registry.TableColumn{
		{Name: "Name", Type: "string", Format: "name", Description: nameColumn().def.Description},
		{Name: "Replicas", Type: "integer", Description: "Desired replicas."},
		{Name: "Ready", Type: "string", Priority: 1,
			Description: `Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status`},
		{Name: "Size", Type: "number", Format: "double",
			Description: "Custom resource definition column (in JSONPath format): .spec.size"},
	}
	if !reflect.DeepEqual(tbl.Columns, want) {
		t.Errorf("columns = %+v\nwant %+v", tbl.Columns, want)
	}
}

func TestCustomResourceDefaultColumns(t *testing.T) {
	for _, cols := range [][]Column{nil, {}} {
		tbl, err := CustomResourceTable(cols)
		if err != nil {
			t.Fatal(err)
		}
		want := []registry.TableColumn{
			nameColumn().def,
			{Name: "Age", Type: "date", Description: ageColumn().def.Description},
		}
		if !reflect.DeepEqual(tbl.Columns, want) {
			t.Errorf("columns = %+v, want %+v", tbl.Columns, want)
		}
		o := crObject(t, `{"metadata": {"name": "w", "creationTimestamp": "2025-01-02T14:55:00Z"}}`)
		cells, conds := tbl.Row(o, crNow)
		if !reflect.DeepEqual(cells, []any{"w", "5m"}) || conds != nil {
			t.Errorf("row = %#v, %#v", cells, conds)
		}
		cells, _ = tbl.Row(crObject(t, `{"metadata": {"name": "w"}}`), crNow)
		if !reflect.DeepEqual(cells, []any{"w", nil}) {
			t.Errorf("row without creationTimestamp = %#v", cells)
		}
	}
}

func TestCustomResourceRows(t *testing.T) {
	o := crObject(t, `{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": {"name": "blah", "creationTimestamp": "2025-01-01T15:00:00Z", "labels": {"a.b/c": "d"}},
		"spec": {
			"replicas": 3, "size": 2.5, "on": true, "nothing": null, "text": "<b>&", "html": {"t": "<b>&"},
			"servers": [{"hosts": ["foo"]}, {"hosts": ["bar", "baz"]}],
			"foo": [{"bar": [1]}, {"bar": [2, 3]}],
			"selector": {"matchLabels": {"app": "w"}}
		},
		"status": {"conditions": [
			{"type": "Available", "status": "False"},
			{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-02T14:58:00Z"}]}
	}`)
	for _, c := range []struct {
		name string
		col  Column
		want any
	}{
		{"integer", Column{Type: "integer", JSONPath: ".spec.replicas"}, int64(3)},
		{"integer from float", Column{Type: "integer", JSONPath: ".spec.size"}, int64(2)},
		{"number from integer", Column{Type: "number", JSONPath: ".spec.replicas"}, float64(3)},
		{"number", Column{Type: "number", JSONPath: ".spec.size"}, 2.5},
		{"boolean", Column{Type: "boolean", JSONPath: ".spec.on"}, true},
		{"boolean of a string", Column{Type: "boolean", JSONPath: ".kind"}, nil},
		{"string", Column{Type: "string", JSONPath: ".kind"}, "Widget"},
		{"string of an integer", Column{Type: "string", JSONPath: ".spec.replicas"}, "3"},
		{"string of a number", Column{Type: "string", JSONPath: ".spec.size"}, "2.5"},
		{"string of a boolean", Column{Type: "string", JSONPath: ".spec.on"}, "true"},
		{"string of an object", Column{Type: "string", JSONPath: ".spec.selector"}, `{"matchLabels":{"app":"w"}}`},
		{"string of null", Column{Type: "string", JSONPath: ".spec.nothing"}, "<no value>"},
		{"string kept raw", Column{Type: "string", JSONPath: ".spec.text"}, "<b>&"},
		{"JSON escapes HTML", Column{Type: "string", JSONPath: ".spec[?(@)]"}, nil},
		{"object with HTML", Column{Type: "string", JSONPath: ".spec.html"}, `{"t":"\u003cb\u003e\u0026"}`},
		{"integer of null", Column{Type: "integer", JSONPath: ".spec.nothing"}, nil},
		{"missing", Column{Type: "string", JSONPath: ".spec.absent"}, nil},
		{"missing below a scalar", Column{Type: "string", JSONPath: ".spec.replicas.x"}, nil},
		{"index out of range", Column{Type: "string", JSONPath: ".spec.servers[5].hosts"}, nil},
		{"index of an object", Column{Type: "string", JSONPath: ".spec.selector[0]"}, nil},
		{"date", Column{Type: "date", JSONPath: ".metadata.creationTimestamp"}, "24h"},
		{"date in a filter", Column{Type: "date", JSONPath: `.status.conditions[?(@.type=="Ready")].lastTransitionTime`}, "2m"},
		{"date of a non-date", Column{Type: "date", JSONPath: ".kind"}, "<invalid>"},
		{"filter", Column{Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`}, "True"},
		{"filter matching nothing", Column{Type: "string", JSONPath: `.status.conditions[?(@.type=="Gone")].status`}, nil},
		{"quoted key", Column{Type: "string", JSONPath: `.metadata.labels['a\.b/c']`}, "d"},
		{"escaped key", Column{Type: "string", JSONPath: `.metadata.labels.a\.b/c`}, "d"},
		{"recursive", Column{Type: "string", JSONPath: "..app"}, "w"},
		{"slice", Column{Type: "string", JSONPath: ".status.conditions[0:1].type"}, "Available"},
		{"union", Column{Type: "string", JSONPath: ".status.conditions[*]['type','status']"}, `["Available","Ready","False","True"]`},
		// Upstream's cases for several values: a string column prints
		// them as one JSON array; other types take the first value.
		{"value only", Column{Type: "string", JSONPath: ".spec.servers[0].hosts[0]"}, "foo"},
		{"single1", Column{Type: "string", JSONPath: ".spec.servers[0].hosts"}, `["foo"]`},
		{"single2", Column{Type: "string", JSONPath: ".spec.servers[1].hosts"}, `["bar","baz"]`},
		{"multi", Column{Type: "string", JSONPath: ".spec.servers[*].hosts"}, `[["foo"],["bar","baz"]]`},
		{"multi flat", Column{Type: "string", JSONPath: ".spec.servers[*].hosts[*]"}, `["foo","bar","baz"]`},
		{"integers as string", Column{Type: "string", JSONPath: ".spec.foo[*].bar"}, "[[1],[2,3]]"},
		{"integer value only", Column{Type: "integer", JSONPath: ".spec.foo[0].bar[0]"}, int64(1)},
		{"integer single1", Column{Type: "integer", JSONPath: ".spec.foo[0].bar"}, nil},
		{"integer multi", Column{Type: "integer", JSONPath: ".spec.foo[*].bar"}, nil},
		{"integer first of several", Column{Type: "integer", JSONPath: ".spec.foo[*].bar[*]"}, int64(1)},
	} {
		c.col.Name = "X"
		tbl, err := CustomResourceTable([]Column{c.col})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cells, _ := tbl.Row(o, crNow)
		if len(cells) != 2 || cells[0] != "blah" {
			t.Fatalf("%s: cells %#v", c.name, cells)
		}
		if !reflect.DeepEqual(cells[1], c.want) {
			t.Errorf("%s: %s cell = %#v, want %#v", c.name, c.col.JSONPath, cells[1], c.want)
		}
	}
}

func TestCustomResourceBadColumn(t *testing.T) {
	tbl, err := CustomResourceTable([]Column{
		{Name: "A", Type: "string", JSONPath: ".spec.a"},
		{Name: "B", Type: "string", JSONPath: ".spec[1"},
		{Name: "C", Type: "string", JSONPath: ".spec.c"},
	})
	if err == nil || err.Error() != `unrecognized column definition ".spec[1"` {
		t.Fatalf("error %v", err)
	}
	// Upstream serves the columns before the bad one.
	if len(tbl.Columns) != 2 || tbl.Columns[1].Name != "A" {
		t.Fatalf("columns %+v", tbl.Columns)
	}
	cells, _ := tbl.Row(crObject(t, `{"metadata": {"name": "n"}, "spec": {"a": "x"}}`), crNow)
	if !reflect.DeepEqual(cells, []any{"n", "x"}) {
		t.Errorf("cells %#v", cells)
	}
}

func TestCustomResourceScaleTable(t *testing.T) {
	names := func(tbl *registry.Table) (out []string) {
		for _, c := range tbl.Columns {
			out = append(out, c.Name+":"+c.Type+":"+c.Format)
		}
		return out
	}
	full := CustomResourceScaleTable(&registry.ScalePaths{SpecReplicas: "spec.replicas", StatusReplicas: "status.count"})
	if got, want := names(full), []string{"Name:string:name", "Desired:integer:", "Available:integer:", "Age:date:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("columns %v, want %v", got, want)
	}
	// The cells read the Scale object, not the custom resource; a Scale
	// scaled to zero omits spec.replicas.
	scale := crObject(t, `{"kind": "Scale", "metadata": {"name": "w", "creationTimestamp": "2025-01-02T14:00:00Z"},
		"spec": {}, "status": {"replicas": 2, "selector": "app=w"}}`)
	cells, _ := full.Row(scale, crNow)
	if want := []any{"w", nil, int64(2), "60m"}; !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %#v, want %#v", cells, want)
	}
	noStatus := CustomResourceScaleTable(&registry.ScalePaths{SpecReplicas: "spec.replicas"})
	if got, want := names(noStatus), []string{"Name:string:name", "Desired:integer:", "Age:date:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("columns %v, want %v", got, want)
	}
	if got, want := names(CustomResourceScaleTable(nil)), []string{"Name:string:name", "Age:date:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("columns %v, want %v", got, want)
	}
}

// TestColumnConverts keeps Column convertible from a column type of the
// same fields, as the CRD reader's.
func TestColumnConverts(t *testing.T) {
	type crColumn struct {
		Name, Type, Format, Description, JSONPath string
		Priority                                  int
	}
	c := Column(crColumn{Name: "n", JSONPath: ".a", Priority: 2})
	if c.Name != "n" || c.JSONPath != ".a" || c.Priority != 2 {
		t.Fatal(c)
	}
}

// FuzzCustomResourceColumn builds a Table from an arbitrary column path and
// prints an object with it: no panic, and every cell a JSON scalar or null.
func FuzzCustomResourceColumn(f *testing.F) {
	for _, s := range []string{
		".spec.replicas", `.status.conditions[?(@.type=="Ready")].status`, "..name", ".spec.items[*].n",
		".spec.items[-1:]", ".metadata.labels['a\\.b/c']", ".spec[?(@.x)]", ".spec.items[0:9:3]", ".}{range ..}{@}{end",
	} {
		for i := range ColumnTypes {
			f.Add(s, i)
		}
	}
	o := map[string]any{
		"metadata": map[string]any{"name": "n", "creationTimestamp": "2025-01-01T00:00:00Z", "labels": map[string]any{"a.b/c": "d"}},
		"spec":     map[string]any{"replicas": int64(2), "items": []any{map[string]any{"n": 1.5}, nil, "s", []any{true}}},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}
	f.Fuzz(func(t *testing.T, path string, typ int) {
		tbl, _ := CustomResourceTable([]Column{{Name: "X", Type: ColumnTypes[uint(typ)%uint(len(ColumnTypes))], JSONPath: path}})
		cells, _ := tbl.Row(o, crNow)
		if len(cells) != len(tbl.Columns) {
			t.Fatalf("%d cells for %d columns", len(cells), len(tbl.Columns))
		}
		for _, c := range cells {
			switch c.(type) {
			case nil, string, int64, float64, bool:
			default:
				t.Fatalf("cell %#v", c)
			}
		}
	})
}

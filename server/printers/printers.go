// Package printers holds how each built-in resource type prints as a Table
// (spec §2.4): upstream's column definitions and the rules that fill each
// cell from a stored object. Server-side tables always carry every column,
// the wide ones (priority 1) included; clients hide those unless asked.
package printers

import (
	"time"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// Printers maps served group, version and resource to the resource's Table.
// It is built once and read-only after: For may be called concurrently.
type Printers struct {
	tables map[gvr]*registry.Table
}

type gvr struct{ group, version, resource string }

// New returns the printers of every built-in type, with the brand's group
// names and label keys.
func New(b config.Brand) *Printers {
	p := &Printers{tables: map[gvr]*registry.Table{}}
	for _, add := range []func(*Printers, config.Brand){
		addCore, addApps, addBatch, addAutoscaling, addPolicy, addNetworking,
		addDiscovery, addStorage, addScheduling, addNode, addCoordination,
		addEvents, addCertificates, addRBAC, addAdmission, addFlowControl,
		addAPIRegistration, addScale,
	} {
		add(p, b)
	}
	return p
}

// For returns the Table of a resource as served (group as the brand spells
// it, "" for core), or nil when upstream prints it with the default Name and
// Created At table. A scale subresource is asked for as "<resource>/scale";
// a status subresource prints with its resource's table.
func (p *Printers) For(group, version, resource string) *registry.Table {
	return p.tables[gvr{group, version, resource}]
}

func (p *Printers) add(group, version, resource string, t *registry.Table) {
	p.tables[gvr{group, version, resource}] = t
}

// cellFunc computes one cell from an object at a time.
type cellFunc func(o registry.Object, now time.Time) any

// column is a column definition with the rule for its cell.
type column struct {
	def  registry.TableColumn
	cell cellFunc
	// reads selects all the cell reads of an object; nil when not declared,
	// and then rows of the table are decoded whole.
	reads *schema.Selection
	// fields and value are a colOf column's.
	fields []schema.FieldPath
	value  func(v []any, now time.Time) any
}

// colOf is a column whose cell value computes from the values at a few
// fields of an object (a counted field reads its size, as size does): its
// rows can be read straight from stored bytes (registry.Table.RowValues).
func colOf(name, typ, description string, fields []schema.FieldPath, value func(v []any, now time.Time) any) column {
	c := col(name, typ, description, func(o registry.Object, now time.Time) any {
		return value(fieldValues(o, fields), now)
	}).reading(fields...)
	c.fields, c.value = fields, value
	return c
}

// reading declares every field c's cell reads (a counted one only for its
// size): rows of a table whose columns all declare theirs are decoded
// from those fields only.
func (c column) reading(fields ...schema.FieldPath) column {
	c.reads = new(schema.Selection)
	for _, f := range fields {
		if f.Count {
			c.reads.Count(f.Path...)
		} else {
			c.reads.Add(f.Path...)
		}
	}
	return c
}

// integerCol is a column of the integer at path (0 when unset).
func integerCol(name, typ, description string, path ...string) column {
	return col(name, typ, description, integerAt(path...)).reading(field(path...))
}

// field and counted name the fields a colOf cell reads.
func field(path ...string) schema.FieldPath   { return schema.FieldPath{Path: path} }
func counted(path ...string) schema.FieldPath { return schema.FieldPath{Path: path, Count: true} }

// fieldValues reads fields of a decoded object as ScanStored reads them
// from stored bytes.
func fieldValues(o registry.Object, fields []schema.FieldPath) []any {
	vals := make([]any, len(fields))
	for i, f := range fields {
		if f.Count {
			vals[i] = size(o, f.Path...)
		} else {
			vals[i] = at(o, f.Path...)
		}
	}
	return vals
}

func col(name, typ, description string, cell cellFunc) column {
	return column{def: registry.TableColumn{Name: name, Type: typ, Description: description}, cell: cell}
}

// wide marks a column shown only in wide output.
func (c column) wide() column {
	c.def.Priority = 1
	return c
}

// named marks a column as holding the object's name.
func (c column) named() column {
	c.def.Format = "name"
	return c
}

// Cell readers for the common declarative columns.

// text reads a string at path; unset reads "".
func text(path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any { return str(o, path...) }
}

// textOr reads a string at path, or fallback when unset or empty.
func textOr(fallback string, path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any {
		if s := str(o, path...); s != "" {
			return s
		}
		return fallback
	}
}

// textSet reads an optional string at path, or fallback when unset; a set
// empty string stays empty.
func textSet(fallback string, path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any {
		if s, ok := strOK(o, path...); ok {
			return s
		}
		return fallback
	}
}

// count is the number of members or elements at path, as an integer.
func count(path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any { return size(o, path...) }
}

// integerAt reads an integer at path; unset reads 0.
func integerAt(path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any { return num(o, path...) }
}

// boolAt reads a boolean at path; unset reads fallback.
func boolAt(fallback bool, path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any {
		if b, ok := boolOK(o, path...); ok {
			return b
		}
		return fallback
	}
}

// ageOf is the time elapsed since the timestamp at path.
func ageOf(path ...string) cellFunc {
	return func(o registry.Object, now time.Time) any { return since(timestamp(o, path...), now) }
}

func nameColumn() column {
	return colOf("Name", "string", "Name of the object.", []schema.FieldPath{field("metadata", "name")}, textValue).named()
}

func ageColumn() column {
	return colOf("Age", "string", "Time since the object was created.", []schema.FieldPath{field("metadata", "creationTimestamp")},
		func(v []any, now time.Time) any { s, _ := v[0].(string); return since(timestampOf(s), now) })
}

// countValue is a counted field's size.
func countValue(v []any, _ time.Time) any { return v[0] }

// textValue is a string value; anything else reads "".
func textValue(v []any, _ time.Time) any {
	if _, ok := v[0].(string); ok {
		return v[0]
	}
	return ""
}

// columns builds a Table whose cells each come from their own column rule.
func columns(cols ...column) *registry.Table {
	defs := make([]registry.TableColumn, len(cols))
	reads := new(schema.Selection)
	for i, c := range cols {
		defs[i] = c.def
		if reads != nil && c.reads != nil {
			reads.Merge(c.reads)
		} else {
			reads = nil
		}
	}
	t := &registry.Table{
		Columns: defs,
		Reads:   reads,
		Row: func(o registry.Object, now time.Time) ([]any, []any) {
			cells := make([]any, len(cols))
			for i, c := range cols {
				cells[i] = c.cell(o, now)
			}
			return cells, nil
		},
	}
	t.Fields, t.RowValues = rowValues(cols)
	return t
}

// rowValues is the row of cols from stored bytes, when every column is a
// colOf one and no field is read twice; nil otherwise.
func rowValues(cols []column) (*schema.Fields, func(dst, vals []any, now time.Time) ([]any, []any)) {
	var fields []schema.FieldPath
	ends := make([]int, len(cols))
	for i, c := range cols {
		if c.value == nil {
			return nil, nil
		}
		fields = append(fields, c.fields...)
		ends[i] = len(fields)
	}
	f := schema.NewFields(fields)
	if f == nil {
		return nil, nil
	}
	return f, func(dst, vals []any, now time.Time) ([]any, []any) {
		start := 0
		for i, c := range cols {
			dst = append(dst, c.value(vals[start:ends[i]:ends[i]], now))
			start = ends[i]
		}
		return dst, nil
	}
}

// ordered sets the order of a list Table's rows, for the resources whose
// rows upstream sorts rather than keeping the list's order.
func ordered(order func(a, b registry.Object) int, t *registry.Table) *registry.Table {
	t.Order = order
	t.Reads = nil // what order reads is not declared
	return t
}

// computed builds a Table whose row is computed as a whole, for printers
// whose cells share one pass over the object.
func computed(defs []registry.TableColumn, row func(o registry.Object, now time.Time) ([]any, []any)) *registry.Table {
	return &registry.Table{Columns: defs, Row: row}
}

// def is a bare column definition for a computed table.
func def(name, typ, description string) registry.TableColumn {
	return registry.TableColumn{Name: name, Type: typ, Description: description}
}

// Column definitions shared by the workload printers.
func containersColumn(path ...string) column {
	return col("Containers", "string", "Names of the containers in the pod template.", func(o registry.Object, _ time.Time) any {
		names, _ := containerCells(list(o, path...))
		return names
	}).reading(field(path...))
}

func imagesColumn(path ...string) column {
	return col("Images", "string", "Images of the containers in the pod template.", func(o registry.Object, _ time.Time) any {
		_, images := containerCells(list(o, path...))
		return images
	}).reading(field(path...))
}

// containerCells lays the containers' names and images each on one line,
// comma separated.
func containerCells(containers []any) (names, images string) {
	for i, c := range containers {
		if i > 0 {
			names += ","
			images += ","
		}
		names += str(c, "name")
		images += str(c, "image")
	}
	return names, images
}

// selectorColumn prints the label selector at path.
func selectorColumn(description string, path ...string) column {
	return col("Selector", "string", description, func(o registry.Object, _ time.Time) any {
		return formatSelector(object(o, path...))
	}).reading(field(path...))
}

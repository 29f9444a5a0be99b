package registry

import (
	"time"

	"platd/server/schema"
)

// TableColumn describes one column of a Table, as the Table's
// columnDefinitions carry it.
type TableColumn struct {
	Name string
	// Type is the OpenAPI type of the cells: string, integer, number,
	// boolean or date.
	Type string
	// Format refines Type ("name" marks the column holding the object's
	// name).
	Format      string
	Description string
	// Priority 0 columns are always shown; higher ones only in wide output.
	Priority int
}

// Table says how a resource prints as a Table (spec §2.4): its columns and
// how one object fills a row. A descriptor without one prints the default
// Name and Created At columns.
type Table struct {
	Columns []TableColumn
	// Row returns one cell per column for obj, a decoded object of the
	// descriptor's schema and version, and the row's conditions in their
	// JSON form (nil when none). Cells are JSON values: string, int64,
	// float64, bool or nil. now is the time ages are measured to. Row must
	// not modify obj and is called concurrently.
	Row func(obj Object, now time.Time) (cells []any, conditions []any)
	// StoredForm makes Row (and Order, Reads, Fields) read objects of a
	// descriptor that converts (Storage) in their stored form rather than
	// the served version's: upstream prints the one internal form of a
	// type, so every served version of it prints the same rows.
	StoredForm bool
	// Order, when set, sorts the rows of a list Table (a negative result
	// puts a first); nil keeps the list's order.
	Order func(a, b Object) int
	// ReadsManagedFields is set when a column may read
	// metadata.managedFields (a custom resource's column can name any
	// path): rows are then decoded with them. Without it they are cut
	// before decoding, as most of a small object's bytes.
	ReadsManagedFields bool
	// Reads, when set, selects every part of an object that Row and Order
	// read: rows are then built from those parts only
	// (schema.DecodeStoredSelected), and the rest of a stored object is
	// skipped, not decoded. nil decodes whole objects. It must not be
	// changed once the Table is in use.
	Reads *schema.Selection
	// Fields and RowValues, when both set, make the cells and conditions
	// Row makes from the values at a few paths only, read straight from
	// stored bytes without decoding the object (schema.ScanStored).
	// RowValues gets the values in the order of Fields, a count as an
	// int64, appends the cells to dst and returns them with the row's
	// conditions. It is called concurrently and keeps neither slice.
	Fields    *schema.Fields
	RowValues func(dst, vals []any, now time.Time) (cells, conditions []any)
}

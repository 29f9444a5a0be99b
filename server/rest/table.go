package rest

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"platd/codec"
	"platd/server/registry"
	"platd/server/schema"
)

// defaultColumns are the columns of a resource that has no printer: its
// name and when it was created.
var defaultColumns = []registry.TableColumn{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the object, unique within its namespace."},
	{Name: "Created At", Type: "date", Description: "When the object was created, in RFC 3339 form and UTC."},
}

// listMeta is the metadata of a list (and of a Table made from one).
type listMeta struct {
	rv        string
	cont      string
	remaining *int64
}

// appendListMetaJSON appends a ListMeta object.
func appendListMetaJSON(b []byte, lm listMeta) []byte {
	b = append(b, '{')
	if lm.rv != "" {
		b = append(b, `"resourceVersion":`...)
		b = codec.AppendJSONString(b, lm.rv)
	}
	if lm.cont != "" {
		b = appendComma(b)
		b = append(b, `"continue":`...)
		b = codec.AppendJSONString(b, lm.cont)
	}
	if lm.remaining != nil {
		b = appendComma(b)
		b = append(b, `"remainingItemCount":`...)
		b = strconv.AppendInt(b, *lm.remaining, 10)
	}
	return append(b, '}')
}

// appendComma separates a member from the one before it, if any.
func appendComma(b []byte) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	return b
}

// asMap is the generic JSON form of a ListMeta, for the protobuf encoder.
func (lm listMeta) asMap() map[string]any {
	m := map[string]any{"resourceVersion": lm.rv}
	if lm.cont != "" {
		m["continue"] = lm.cont
	}
	if lm.remaining != nil {
		m["remainingItemCount"] = *lm.remaining
	}
	return m
}

// tableBuilder accumulates a Table response (spec §2.4) row by row.
type tableBuilder struct {
	rd   *renderer
	buf  []byte
	rows int
	// cut holds the bytes of the last object decoded by rowObject.
	cut []byte
	// vals and cells are scanRow's, reused from row to row; metaFields
	// are metaFieldsOf's paths and then the raw metadata (nil: cannot be).
	vals, cells  []any
	raws         [][]byte
	metaFields   *schema.Fields
	metaFieldsOf *schema.Fields
	// chunked rows go to buffers of tableChunks: the full ones are in
	// chunks, in order, before buf.
	chunked bool
	chunks  [][]byte
	// follows says rows were written before this builder's: its first
	// row is preceded by a comma too.
	follows bool
}

// newTable starts a Table with the resource's column definitions.
func (rd *renderer) newTable(lm listMeta) *tableBuilder {
	return rd.newTableWith(lm, true)
}

// newTableWith starts a Table; without columns its columnDefinitions are
// null, as in every watch event after the first.
func (rd *renderer) newTableWith(lm listMeta, columns bool) *tableBuilder {
	t := &tableBuilder{rd: rd}
	b := typePrefix(make([]byte, 0, 1024), "Table", rd.metaGroupVersion())
	b = append(b, `"metadata":`...)
	b = appendListMetaJSON(b, lm)
	b = append(b, `,"columnDefinitions":`...)
	if columns {
		b = appendColumns(b, rd.columns())
	} else {
		b = append(b, "null"...)
	}
	t.buf = append(b, `,"rows":[`...)
	return t
}

// columns are the resource's column definitions.
func (rd *renderer) columns() []registry.TableColumn {
	if rd.d.Table != nil {
		return rd.d.Table.Columns
	}
	return defaultColumns
}

func appendColumns(b []byte, cols []registry.TableColumn) []byte {
	b = append(b, '[')
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = codec.AppendJSONString(b, c.Name)
		b = append(b, `,"type":`...)
		b = codec.AppendJSONString(b, c.Type)
		b = append(b, `,"format":`...)
		b = codec.AppendJSONString(b, c.Format)
		b = append(b, `,"description":`...)
		b = codec.AppendJSONString(b, c.Description)
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(c.Priority), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// addRow appends the row of one stored object.
func (t *tableBuilder) addRow(stored []byte) error {
	if cells, conds, meta, ok := t.scanRow(stored); ok {
		return t.addCells(cells, conds, stored, meta)
	}
	obj, meta, err := t.rowObject(stored)
	if err != nil {
		return err
	}
	return t.addRowOf(obj, stored, meta)
}

// scanRow computes the cells and conditions of a stored object from the
// few values they read, without decoding it (registry.Table.RowValues); ok is false when
// the resource's Table cannot, or the object is not read that way. When
// the row's object is its metadata, that is found by the same scan (else
// nil). The cells are valid until the next call.
func (t *tableBuilder) scanRow(stored []byte) (cells, conds []any, meta []byte, ok bool) {
	d := t.rd.rows
	f, row := defaultFields, defaultRowValues
	if d.Table != nil {
		f, row = d.Table.Fields, d.Table.RowValues
	}
	if f == nil || row == nil || d.Storage != nil || stale(d, stored) {
		return nil, nil, nil, false
	}
	n := f.Len()
	if t.rd.include == includeMetadata && bytes.HasPrefix(stored, metadataKey) {
		if t.metaFieldsOf != f {
			t.metaFields = f.With(schema.FieldPath{Path: []string{"metadata"}, Raw: true})
			t.metaFieldsOf = f
		}
		if t.metaFields != nil {
			f = t.metaFields
		}
	}
	if cap(t.vals) < n {
		t.vals = make([]any, n)
	}
	t.vals = t.vals[:n]
	t.raws = t.raws[:0]
	for range f.RawLen() {
		t.raws = append(t.raws, nil)
	}
	if !schema.ScanStored(stored, d.Schema, f, t.vals, t.raws) {
		return nil, nil, nil, false
	}
	if len(t.raws) == 1 {
		// The raw metadata, first in stored: what storedMetadata returns.
		if m := t.raws[0]; len(m) > 0 && m[0] == '{' {
			meta = m
		}
	}
	t.cells, conds = row(t.cells[:0], t.vals, t.rd.now)
	return t.cells, conds, meta, true
}

// defaultFields and defaultRowValues make the default columns' cells.
var defaultFields = schema.NewFields([]schema.FieldPath{{Path: []string{"metadata", "name"}}, {Path: []string{"metadata", "creationTimestamp"}}})

func defaultRowValues(dst, vals []any, _ time.Time) ([]any, []any) {
	name, _ := vals[0].(string)
	created, _ := vals[1].(string)
	return append(dst, name, created), nil
}

// rowObject decodes a stored object for its row's cells (the row's object
// is rendered from the stored bytes). Unless a column may read them
// (registry.Table.ReadsManagedFields), managedFields are most of a small
// object's JSON and most of its decoding, so they are cut from the bytes
// first where the server writes them: the last member of the metadata,
// which comes first.
// The stored metadata is returned too when it was found (else nil).
func (t *tableBuilder) rowObject(stored []byte) (Object, []byte, error) {
	d := t.rd.rows
	if sel := rowReads(d); sel != nil && d.Storage == nil && !stale(d, stored) {
		// Converted and stale objects are changed whole after decoding.
		obj, err := schema.DecodeStoredSelected(stored, d.Schema, sel)
		if err != nil {
			return nil, nil, fmt.Errorf("decoding stored %s: %w", d.Kind, err)
		}
		return obj, nil, nil
	}
	if tb := d.Table; tb != nil && tb.ReadsManagedFields {
		obj, err := decodeTransient(d, stored)
		return obj, nil, err
	}
	if cut, meta, ok := cutManagedFields(t.cut[:0], stored); ok {
		t.cut = cut
		obj, err := decodeTransient(d, cut)
		return obj, meta, err
	}
	obj, err := decodeTransient(d, stored)
	return obj, nil, err
}

// rowForm is the descriptor whose objects d's Table rows read: d's stored
// form, printed with d's Table, when the Table reads that form; else d.
// It is computed once per response.
func rowForm(d *registry.Descriptor) *registry.Descriptor {
	if d.Table == nil || !d.Table.StoredForm || d.Storage == nil {
		return d
	}
	sd := *d.Storage.Descriptor
	sd.Table = d.Table
	return &sd
}

// defaultReads are what the default columns read.
var defaultReads = new(schema.Selection).Add("metadata", "name").Add("metadata", "creationTimestamp")

// rowReads is what a row of d's objects reads, nil when not known.
func rowReads(d *registry.Descriptor) *schema.Selection {
	if d.Table == nil {
		return defaultReads
	}
	return d.Table.Reads
}

var managedFieldsMember = []byte(`,"managedFields":[`)

// cutManagedFields appends stored without the metadata's managedFields to
// dst, when they are the metadata's last member, and returns the stored
// metadata; ok is false otherwise.
func cutManagedFields(dst, stored []byte) (out, meta []byte, ok bool) {
	m, err := storedMetadata(stored)
	if err != nil {
		return dst, nil, false
	}
	i := bytes.LastIndex(m, managedFieldsMember)
	if i < 0 {
		return dst, nil, false
	}
	arr := m[i+len(managedFieldsMember)-1:]
	if n, err := containerEnd(arr); err != nil || n != len(arr)-1 {
		return dst, nil, false // not the last member of the metadata
	}
	head := len(metadataKey) + i
	dst = append(dst, stored[:head]...)
	return append(dst, stored[len(metadataKey)+len(m)-1:]...), m, true
}

// addRows appends the rows of a list, sorted when the resource's Table
// orders its rows.
func (t *tableBuilder) addRows(items []storedKV) error {
	t.reserve(items)
	tab := t.rd.d.Table
	if tab == nil || tab.Order == nil {
		return t.addRowsInParts(items)
	}
	type row struct {
		obj    Object
		stored []byte
	}
	rows := make([]row, len(items))
	for i := range items {
		obj, _, err := t.rowObject(items[i].Value)
		if err != nil {
			return err
		}
		rows[i] = row{obj, items[i].Value}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return tab.Order(a.obj, b.obj) })
	for _, r := range rows {
		if err := t.addDecodedRow(r.obj, r.stored); err != nil {
			return err
		}
	}
	return nil
}

// addRowsInParts appends the rows of items in order; a long list is
// rendered in parts by several goroutines, each with a renderer and
// buffer of its own, and the parts joined.
func (t *tableBuilder) addRowsInParts(items []storedKV) error {
	parts := listParts(len(items))
	per := (len(items) + parts - 1) / parts
	subs := make([]*tableBuilder, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		part := items[min(p*per, len(items)):min((p+1)*per, len(items))]
		rd := *t.rd
		rd.scratch = nil
		sub := &tableBuilder{rd: &rd}
		sub.reserve(part)
		subs[p] = sub
		wg.Go(func() { errs[p] = sub.addRowsOf(part) })
	}
	errs[0] = t.addRowsOf(items[:min(per, len(items))])
	wg.Wait()
	for p := range parts {
		if errs[p] != nil {
			return errs[p]
		}
		if p == 0 || subs[p].rows == 0 {
			continue
		}
		if t.rows > 0 {
			t.buf = append(t.buf, ',')
		}
		t.buf = append(t.buf, subs[p].buf...)
		t.rows += subs[p].rows
	}
	return nil
}

// rowParts renders the whole Table of items, whose rows are not sorted,
// in parts by several goroutines as addRowsInParts does, without joining
// them: the parts, written one after the other, are the Table. The first
// holds t's head. The parts are buffers of tableChunks, to hand back with
// releaseTableChunks once written.
func (t *tableBuilder) rowParts(items []storedKV) ([][]byte, error) {
	parts := listParts(len(items))
	per := (len(items) + parts - 1) / parts
	part := func(p int) []storedKV { return items[min(p*per, len(items)):min((p+1)*per, len(items))] }
	subs := make([]*tableBuilder, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		rd := *t.rd
		rd.scratch = nil
		sub := &tableBuilder{rd: &rd, follows: true, chunked: true, buf: getTableChunk()}
		subs[p] = sub
		wg.Go(func() { errs[p] = sub.addRowsOf(part(p)) })
	}
	t.buf = append(getTableChunk(), t.buf...)
	t.chunked = true
	subs[0] = t
	errs[0] = t.addRowsOf(part(0))
	wg.Wait()
	out := make([][]byte, 0, parts)
	rows := 0
	for p := range parts {
		if errs[p] != nil {
			return nil, errs[p]
		}
		rows += subs[p].rows
		out = append(out, subs[p].chunks...)
		out = append(out, subs[p].buf)
	}
	if rows == 0 {
		return [][]byte{t.finish()}, nil
	}
	out[len(out)-1] = append(out[len(out)-1], "]}\n"...)
	return out, nil
}

// addRowsOf appends the rows of items one by one.
func (t *tableBuilder) addRowsOf(items []storedKV) error {
	for i := range items {
		if err := t.addRow(items[i].Value); err != nil {
			return err
		}
		if t.chunked && len(t.buf) >= tableChunkFill {
			t.chunks = append(t.chunks, t.buf)
			t.buf = getTableChunk()
		}
	}
	return nil
}

// tableChunkSize is the size of the buffers a streamed Table is rendered
// into, and tableChunkFill how full one gets before the next is started
// (a row seldom needs more than the rest). Reused buffers of a fixed size
// spare a long Table the growing, copying and clearing of one large
// buffer; they hold nothing between responses.
const (
	tableChunkSize = 64 << 10
	tableChunkFill = tableChunkSize - 4<<10
)

var tableChunks = sync.Pool{New: func() any { return new([]byte) }}

// getTableChunk returns an empty buffer of tableChunks.
func getTableChunk() []byte {
	b := *tableChunks.Get().(*[]byte)
	if cap(b) < tableChunkSize {
		return make([]byte, 0, tableChunkSize)
	}
	return b[:0]
}

// releaseTableChunks hands the buffers of rowParts back once written; a
// buffer a large row grew far is dropped.
func releaseTableChunks(parts [][]byte) {
	for _, b := range parts {
		if c := cap(b); c >= tableChunkSize && c <= 4*tableChunkSize {
			b := b[:0]
			tableChunks.Put(&b)
		}
	}
}

// rowOverhead is about the bytes of a row besides its object: the cells
// and the JSON around them.
const rowOverhead = 128

// reserve grows the buffer once for the rows of items: the objects as
// included, guessed from their stored size (metadata is about half).
func (t *tableBuilder) reserve(items []storedKV) {
	n := len(items) * rowOverhead
	for i := range items {
		switch t.rd.include {
		case includeObject:
			n += len(items[i].Value) + 64
		case includeMetadata:
			n += len(items[i].Value) / 2
		}
	}
	t.buf = slices.Grow(t.buf, n)
}

// addDecodedRow appends the row of obj, decoded from stored.
func (t *tableBuilder) addDecodedRow(obj Object, stored []byte) error {
	return t.addRowOf(obj, stored, nil)
}

// addRowOf appends the row of obj, decoded from stored, whose metadata is
// meta when the caller found it (else nil).
func (t *tableBuilder) addRowOf(obj Object, stored, meta []byte) error {
	rd := t.rd
	var cells, conds []any
	if rd.d.Table != nil {
		cells, conds = rd.d.Table.Row(obj, rd.now)
	} else {
		cells = []any{metaString(obj, "name"), metaString(obj, "creationTimestamp")}
	}
	return t.addCells(cells, conds, stored, meta)
}

// addCells appends a row of cells and conditions for the object stored,
// whose metadata is meta when the caller found it (else nil).
func (t *tableBuilder) addCells(cells, conds []any, stored, meta []byte) error {
	rd := t.rd
	var err error
	b := t.buf
	if t.rows > 0 || t.follows {
		b = append(b, ',')
	}
	t.rows++
	b = append(b, `{"cells":[`...)
	for i, c := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = schema.AppendAny(b, c); err != nil {
			return err
		}
	}
	b = append(b, ']')
	if len(conds) > 0 {
		b = append(b, `,"conditions":`...)
		if b, err = schema.AppendAny(b, conds); err != nil {
			return err
		}
	}
	b = append(b, `,"object":`...)
	switch rd.include {
	case includeNone:
		b = append(b, "null"...)
	case includeObject:
		b, err = rd.objectJSON(b, stored)
	default:
		if meta != nil {
			b = rd.appendMetadataJSON(b, meta)
		} else {
			b, err = rd.metadataJSON(b, stored)
		}
	}
	t.buf = append(b, '}')
	return err
}

// finish closes the Table and returns its JSON. A resource without a
// printer lists no rows as null, one with a printer as [], as upstream.
func (t *tableBuilder) finish() []byte {
	if t.rows == 0 && t.rd.d.Table == nil {
		t.buf = append(t.buf[:len(t.buf)-1], "null}\n"...)
		return t.buf
	}
	return append(t.buf, "]}\n"...)
}

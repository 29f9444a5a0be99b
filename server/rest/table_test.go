package rest

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"

	"platd/server/printers"
)

// TestTableInParts: a long Table, rendered in parts, is the Table rendered
// row by row, for every includeObject choice.
func TestTableInParts(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	items := benchItems(t, d, 2*minItemsPerWorker+5)
	for _, include := range []string{"", includeNone, includeObject} {
		r := httptest.NewRequest("GET", "/api/v1/configmaps?includeObject="+include, nil)
		rd, err := h.newRenderer(r, d, output{format: formatJSON, as: asTable, asVersion: metaV1})
		if err != nil {
			t.Fatal(err)
		}
		lm := listMeta{rv: "3"}
		got, err := rd.list(lm, items)
		if err != nil {
			t.Fatal(err)
		}
		one := rd.newTable(lm)
		if err := one.addRowsOf(items); err != nil {
			t.Fatal(err)
		}
		if want := one.finish(); !bytes.Equal(got, want) {
			t.Fatalf("includeObject=%q: Table in parts differs from row by row (%d vs %d bytes)", include, len(got), len(want))
		}
		if n := bytes.Count(got, []byte(`{"cells":`)); n != len(items) {
			t.Fatalf("includeObject=%q: %d rows", include, n)
		}
		// Streamed, with one part or several.
		for _, n := range []int{0, 1, len(items)} {
			w := httptest.NewRecorder()
			h.streamTable(w, r, rd, lm, items[:n])
			one := rd.newTable(lm)
			if err := one.addRowsOf(items[:n]); err != nil {
				t.Fatal(err)
			}
			want := one.finish()
			if _, cl := w.Header()["Content-Length"]; !bytes.Equal(w.Body.Bytes(), want) || cl {
				t.Fatalf("includeObject=%q: streamed Table of %d rows differs (%d vs %d bytes, Content-Length %q)", include, n, w.Body.Len(), len(want), w.Header().Get("Content-Length"))
			}
		}
	}
}

// TestCutManagedFields: managedFields are cut only as the metadata's last
// member; the rest of the object is left byte for byte.
func TestCutManagedFields(t *testing.T) {
	t.Parallel()
	mf := `"managedFields":[{"manager":"m","fieldsV1":{"f:data":{".":{}}}}]`
	for _, c := range []struct{ in, want string }{
		{`{"metadata":{"name":"a",` + mf + `},"data":{"k":"v"}}`, `{"metadata":{"name":"a"},"data":{"k":"v"}}`},
		{`{"metadata":{"name":"a",` + mf + `}}`, `{"metadata":{"name":"a"}}`},
		// Not the last member, the first, or only inside a string: kept.
		{`{"metadata":{"name":"a",` + mf + `,"uid":"u"},"data":{}}`, ""},
		{`{"metadata":{` + mf + `},"data":{}}`, ""},
		{`{"metadata":{"name":"a","annotations":{"x":"\",\"managedFields\":[]"}},"data":{}}`, ""},
		{`{"metadata":{"name":"a"},"data":{"k":",\"managedFields\":[]"}}`, ""},
		{`{"data":{},"metadata":{"name":"a",` + mf + `}}`, ""},
		{`{"metadata":{"name":"a",` + mf, ""},
	} {
		got, meta, ok := cutManagedFields([]byte("x"), []byte(c.in))
		if ok && !bytes.HasSuffix(meta, []byte(mf+"}")) {
			t.Errorf("%s: metadata %s", c.in, meta)
		}
		if ok != (c.want != "") || ok && string(got) != "x"+c.want || !ok && string(got) != "x" {
			t.Errorf("%s: got %s %v, want %s", c.in, got, ok, c.want)
		}
	}
}

// TestTableRowsWithoutManagedFields: rows computed with managedFields cut
// from the decoded objects are the rows of the whole objects.
func TestTableRowsWithoutManagedFields(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	items := apibenchItems(t, d, 50)
	rd, err := h.newRenderer(httptest.NewRequest("GET", "/api/v1/configmaps", nil), d, output{format: formatJSON, as: asTable, asVersion: metaV1})
	if err != nil {
		t.Fatal(err)
	}
	lm := listMeta{rv: "3"}
	got, err := rd.list(lm, items)
	if err != nil {
		t.Fatal(err)
	}
	whole := rd.newTable(lm)
	for _, kv := range items {
		if _, _, ok := cutManagedFields(nil, kv.Value); !ok {
			t.Fatalf("nothing to cut in %s", kv.Value)
		}
		obj, err := decodeTransient(d, kv.Value)
		if err != nil {
			t.Fatal(err)
		}
		if err := whole.addDecodedRow(obj, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	if want := whole.finish(); !bytes.Equal(got, want) {
		t.Fatalf("rows differ:\n%s\n%s", got[:300], want[:300])
	}
}

// A custom resource's column may read managedFields: its rows are then
// decoded with them, and the cell holds the manager.
func TestTableColumnReadsManagedFields(t *testing.T) {
	t.Parallel()
	h, cm := configMapHandler(t)
	for _, tc := range []struct {
		path    string
		managed bool
		want    string
	}{
		{".metadata.managedFields[0].manager", true, "apibench"},
		{".metadata.managedFields[*].operation", true, "Update"},
		{".data.payload", false, ""},
	} {
		tb, err := printers.CustomResourceTable([]printers.Column{{Name: "Manager", Type: "string", JSONPath: tc.path}})
		if err != nil {
			t.Fatal(err)
		}
		if tb.ReadsManagedFields != tc.managed {
			t.Errorf("%s: ReadsManagedFields %v, want %v", tc.path, tb.ReadsManagedFields, tc.managed)
		}
		d := *cm
		d.Table = tb
		rd, err := h.newRenderer(httptest.NewRequest("GET", "/api/v1/configmaps", nil), &d, output{format: formatJSON, as: asTable, asVersion: metaV1})
		if err != nil {
			t.Fatal(err)
		}
		out, err := rd.list(listMeta{rv: "3"}, apibenchItems(t, &d, 2))
		if err != nil {
			t.Fatal(err)
		}
		var table struct {
			Rows []struct{ Cells []any } `json:"rows"`
		}
		if err := json.Unmarshal(out, &table); err != nil || len(table.Rows) != 2 {
			t.Fatalf("%s: %v %s", tc.path, err, out)
		}
		if tc.want != "" {
			for _, r := range table.Rows {
				if len(r.Cells) != 2 || r.Cells[1] != tc.want {
					t.Errorf("%s: cells %v, want the second %q", tc.path, r.Cells, tc.want)
				}
			}
		}
	}
}

// FuzzCutManagedFields: a cut leaves valid JSON valid, removes only a
// managedFields member, and keeps every other byte in order.
func FuzzCutManagedFields(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"data":{"k":"v"}}`))
	f.Add([]byte(`{"metadata":{"name":"a","managedFields":[],"uid":"u"}}`))
	f.Add([]byte(`{"metadata":{"name":"a\",\"managedFields\":[]"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, meta, ok := cutManagedFields(nil, in)
		if !ok {
			return
		}
		if !bytes.Contains(in, meta) || len(out) >= len(in) || !bytes.HasPrefix(in, out[:bytes.Index(in, managedFieldsMember)]) {
			t.Fatalf("cut %s into %s", in, out)
		}
		// Stored objects hold no duplicate members; compare those alone.
		if json.Valid(in) && bytes.Count(in, []byte(`"managedFields"`)) == 1 {
			if !json.Valid(out) {
				t.Fatalf("cut valid %s into invalid %s", in, out)
			}
			var a, b map[string]any
			_ = json.Unmarshal(in, &a)
			_ = json.Unmarshal(out, &b)
			if m, ok := a["metadata"].(map[string]any); ok {
				delete(m, "managedFields")
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("cut %s into %s", in, out)
			}
		}
	})
}

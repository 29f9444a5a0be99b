package rest

import (
	"bytes"
	"net/http/httptest"
	"testing"
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
	}
}

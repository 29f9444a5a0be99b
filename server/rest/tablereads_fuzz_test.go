package rest

import (
	"reflect"
	"slices"
	"testing"

	"platd/bolt"
	"platd/server/registry"
	"platd/server/schema"
)

// FuzzTableRowsFromReads feeds objects of every resource whose Table
// declares its reads, shaped by the fuzzer, through the three ways a row
// is computed (whole object, selected parts, scanned values) and wants the
// same row, and the same field selector answers, from each.
func FuzzTableRowsFromReads(f *testing.F) {
	_, reg, br := tablePinHandler(&testing.T{})
	fixtures, _ := tableReadsFixtures(&testing.T{})
	keys := make([]string, 0, len(fixtures))
	for key := range fixtures {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	descs := make([]*registry.Descriptor, len(keys))
	for i, key := range keys {
		descs[i] = tablePinDescriptor(&testing.T{}, reg, br, key)
		for _, o := range fixtures[key] {
			f.Add(uint8(i), []byte(o))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, doc []byte) {
		d := descs[int(which)%len(descs)]
		obj, err := schema.DecodeAny(doc)
		if err != nil {
			return
		}
		m, ok := obj.(map[string]any)
		if !ok {
			return
		}
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if name == "" {
			return
		}
		ns, _ := meta["namespace"].(string)
		kv := bolt.KV{Key: d.Key(ns, name), Value: schema.Encode(nil, m, storedForm(d).Schema)}
		whole, err := schema.DecodeStored(kv.Value, d.Schema)
		if err != nil {
			return
		}
		checkRowsFromReads(t, d, kv, whole)
		checkSelectorsFromReads(t, d, kv)
	})
}

func checkRowsFromReads(t *testing.T, d *registry.Descriptor, kv bolt.KV, whole map[string]any) {
	tb := d.Table
	if tb == nil {
		return
	}
	wantCells, wantConds := tb.Row(whole, tablePinNow)
	if tb.Reads != nil {
		obj, err := schema.DecodeStoredSelected(kv.Value, d.Schema, tb.Reads)
		if err != nil {
			t.Fatalf("%s: whole object decodes, selected parts do not: %v", kv.Value, err)
		}
		cells, conds := tb.Row(obj, tablePinNow)
		if !reflect.DeepEqual(cells, wantCells) || !reflect.DeepEqual(conds, wantConds) {
			t.Errorf("%s: row from the selected parts %v %v, from the whole object %v %v", kv.Value, cells, conds, wantCells, wantConds)
		}
	}
	if tb.Fields != nil && tb.RowValues != nil {
		vals, raws := make([]any, tb.Fields.Len()), make([][]byte, tb.Fields.RawLen())
		if !schema.ScanStored(kv.Value, d.Schema, tb.Fields, vals, raws) {
			return
		}
		cells, conds := tb.RowValues(nil, vals, tablePinNow)
		if !reflect.DeepEqual(cells, wantCells) || !reflect.DeepEqual(conds, wantConds) {
			t.Errorf("%s: row from the scanned values %v %v, from the whole object %v %v", kv.Value, cells, conds, wantCells, wantConds)
		}
	}
}

func checkSelectorsFromReads(t *testing.T, d *registry.Descriptor, kv bolt.KV) {
	whole, err := decodeTransient(d, kv.Value)
	if err != nil {
		return
	}
	for field, fs := range d.FieldSelectors {
		want := fs.Get(whole)
		for _, q := range []string{field + "=" + want, field + "!=" + want} {
			p, err := parsePredicate(d, "", q)
			if err != nil {
				continue
			}
			if got, want := selected(p.matchesStored(kv.Value)), p.matchesObject(whole); got != want {
				t.Errorf("%s: %s matches the stored object: %v, the decoded one: %v", kv.Value, q, got, want)
			}
		}
	}
	for _, q := range []string{"app=web", "app", "!app", "app in (web,db),tier!=x"} {
		p, err := parsePredicate(d, q, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := selected(p.matchesStored(kv.Value)), p.matchesObject(whole); got != want {
			t.Errorf("%s: labels %s match the stored object: %v, the decoded one: %v", kv.Value, q, got, want)
		}
	}
}

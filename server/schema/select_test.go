package schema

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkSelection fails unless got holds what full holds at every path sel
// selects: equal whole values, equal sizes of counted ones.
func checkSelection(t *testing.T, where string, full, got any, sel *Selection) {
	t.Helper()
	switch {
	case sel.whole:
		if !reflect.DeepEqual(full, got) {
			t.Fatalf("%s: got %#v, want %#v", where, got, full)
		}
	case sel.count:
		if selSize(full) != selSize(got) {
			t.Fatalf("%s: size %d, want %d (%#v)", where, selSize(got), selSize(full), got)
		}
		if _, isMap := full.(map[string]any); !isMap {
			if _, isList := full.([]any); !isList && !reflect.DeepEqual(full, got) {
				t.Fatalf("%s: got %#v, want %#v", where, got, full)
			}
		}
	default:
		fm, ok := full.(map[string]any)
		if !ok {
			if !reflect.DeepEqual(full, got) {
				t.Fatalf("%s: got %#v, want %#v", where, got, full)
			}
			return
		}
		gm, ok := got.(map[string]any)
		if !ok {
			t.Fatalf("%s: got %#v, want an object", where, got)
		}
		for k, child := range sel.members {
			fv, fok := fm[k]
			gv, gok := gm[k]
			if fok != gok {
				t.Fatalf("%s.%s: present %v, want %v", where, k, gok, fok)
			}
			checkSelection(t, where+"."+k, fv, gv, child)
		}
	}
}

func selSize(v any) int {
	switch x := v.(type) {
	case map[string]any:
		return len(x)
	case []any:
		return len(x)
	}
	return -1
}

func selectionCases() []*Selection {
	return []*Selection{
		new(Selection).Add("metadata", "name").Add("metadata", "creationTimestamp").Count("data").Count("binaryData"),
		new(Selection).Add("metadata", "labels", "app").Add("spec", "containers").Count("status", "containerStatuses").Add("status", "phase"),
		new(Selection).Count("spec", "limits").Add("metadata", "managedFields").Count("metadata", "labels"),
		new(Selection).Add("kind").Add("spec", "names", "kind").Count("spec", "versions").Add("status", "conditions"),
		new(Selection).Count("data").Add("data", "a").Merge(new(Selection).Count("metadata").Add("metadata", "name")),
		new(Selection),
	}
}

func TestDecodeStoredSelected(t *testing.T) {
	c := testCatalog(t, "kubernetes")
	cm := c.ByGVK("", "v1", "ConfigMap")
	pod := c.ByGVK("", "v1", "Pod")
	for _, tc := range []struct {
		name string
		s    *Schema
		data string
	}{
		{"configmap", cm, `{"metadata":{"name":"a","namespace":"n","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"app":"x","b":"y"},"managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}]},"data":{"a":"1","b\u00e9":"\n","c":""},"binaryData":{"x":"AA=="}}`},
		{"configmap without data", cm, `{"metadata":{"name":"a"}}`},
		{"configmap null data", cm, `{"metadata":{"name":"a"},"data":null,"binaryData":{}}`},
		{"pod", pod, `{"metadata":{"name":"p","labels":{"app":"w"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]},"status":{"phase":"Running","containerStatuses":[{"name":"c","ready":true,"restartCount":2,"image":"i","imageID":""},{"name":"d","ready":false,"restartCount":0,"image":"i","imageID":""}]}}`},
		{"escaped keys", cm, `{"meta\u0064ata":{"na\u006de":"a"},"\u0064ata":{"k":"v"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, err := DecodeStored([]byte(tc.data), tc.s)
			if err != nil {
				t.Fatal(err)
			}
			for i, sel := range selectionCases() {
				got, err := DecodeStoredSelected([]byte(tc.data), tc.s, sel)
				if err != nil {
					t.Fatalf("selection %d: %v", i, err)
				}
				checkSelection(t, "", full, got, sel)
			}
		})
	}
}

func TestSelectionSkipsUnselected(t *testing.T) {
	c := testCatalog(t, "kubernetes")
	sel := new(Selection).Add("metadata", "name").Count("data")
	got, err := DecodeStoredSelected([]byte(`{"metadata":{"name":"a","uid":"u","labels":{"x":"y"}},"data":{"k":"v","l":"w"},"binaryData":{"b":"AA=="}}`), c.ByGVK("", "v1", "ConfigMap"), sel)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": nil, "l": nil}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

func TestSelectionBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		sel  *Selection
		want *Selection
	}{
		{"count then member", new(Selection).Count("data").Add("data", "a"), new(Selection).Add("data")},
		{"member then count", new(Selection).Add("data", "a").Count("data"), new(Selection).Add("data")},
		{"under whole", new(Selection).Add("spec").Add("spec", "x").Count("spec", "y"), new(Selection).Add("spec")},
		{"merge", new(Selection).Add("a", "b").Merge(new(Selection).Count("c").Add("a", "d")), new(Selection).Add("a", "b").Add("a", "d").Count("c")},
		{"merge whole", new(Selection).Add("a", "b").Merge(new(Selection).Add()), new(Selection).Add()},
	} {
		if !reflect.DeepEqual(tc.sel, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.sel, tc.want)
		}
	}
}

// FuzzDecodeStoredSelected: whenever DecodeStored reads data, the
// selected decode reads it too, with the same values at every selected
// path.
func FuzzDecodeStoredSelected(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"metadata":{"name":"a","labels":{"x":"\ud800"}},"data":{"k":1},"binaryData":{"b":"AA=="}}`))
	f.Add([]byte(`{"metadata":{"name":"a"},"data":{"k":"v","k":"w"},"data":{"l":"x"}}`))
	f.Add([]byte(`{"spec":{"limits":[{"max":{"cpu":"0.1"},"type":"Pod","x":[1,2.5e3,true,null]}]}}`))
	c := testCatalog(f, "kubernetes")
	schemas := []*Schema{
		c.ByGVK("", "v1", "ConfigMap"), c.ByGVK("", "v1", "LimitRange"), c.ByGVK("", "v1", "Pod"),
		c.ByGVK(kn("apiextensions.@D@"), "v1", "CustomResourceDefinition"),
	}
	sels := selectionCases()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range schemas {
			full, err := DecodeStored(data, s)
			for i, sel := range sels {
				got, serr := DecodeStoredSelected(data, s, sel)
				if err != nil {
					continue // unselected values are not checked against s
				}
				if serr != nil {
					t.Fatalf("selection %d: %v, DecodeStored reads it", i, serr)
				}
				checkSelection(t, "", full, got, sel)
			}
		}
	})
}

// checkFields fails unless ScanStored reads data as DecodeStored does.
func checkFields(t *testing.T, data []byte, s *Schema, paths []FieldPath, mustScan bool) {
	t.Helper()
	f := NewFields(paths)
	if f == nil {
		t.Fatalf("NewFields(%v) = nil", paths)
	}
	full, err := DecodeStored(data, s)
	out := make([]any, f.Len())
	raws := make([][]byte, f.RawLen())
	ok := ScanStored(data, s, f, out, raws)
	if err != nil {
		if mustScan {
			t.Fatalf("DecodeStored: %v", err)
		}
		return
	}
	if !ok {
		if mustScan {
			t.Fatalf("ScanStored of %s refused", data)
		}
		return
	}
	vi, ri := 0, 0
	for _, p := range paths {
		var v any = full
		present := true
		for _, name := range p.Path {
			m, _ := v.(map[string]any)
			v, present = m[name]
		}
		if p.Raw {
			// A member the schema drops may or may not be read.
			raw := raws[ri]
			ri++
			if raw == nil {
				if present {
					t.Fatalf("%s: %v not read", data, p)
				}
				continue
			}
			v, _ = DecodeAny(data)
			for _, name := range p.Path {
				m, _ := v.(map[string]any)
				v = m[name]
			}
			if rv, err := DecodeAny(raw); err != nil || !reflect.DeepEqual(rv, v) {
				t.Fatalf("%s: %v = %s, want %#v", data, p, raw, v)
			}
			continue
		}
		if p.Count {
			n := int64(0)
			switch x := v.(type) {
			case map[string]any:
				n = int64(len(x))
			case []any:
				n = int64(len(x))
			}
			v = n
		}
		if !reflect.DeepEqual(out[vi], v) {
			t.Fatalf("%s: %v = %#v, want %#v", data, p, out[vi], v)
		}
		vi++
	}
}

func fieldCases() [][]FieldPath {
	w := func(p ...string) FieldPath { return FieldPath{Path: p} }
	n := func(p ...string) FieldPath { return FieldPath{Path: p, Count: true} }
	r := func(p ...string) FieldPath { return FieldPath{Path: p, Raw: true} }
	return [][]FieldPath{
		{w("metadata", "name"), w("metadata", "creationTimestamp"), n("data"), n("binaryData"), r("metadata")},
		{r("metadata"), w("metadata", "name"), r("data"), r("spec", "containers")},
		{w("metadata", "labels", "app"), w("spec", "containers"), n("status", "containerStatuses"), w("status", "phase"), n("metadata", "annotations")},
		{n("spec", "limits"), w("metadata", "managedFields"), w("kind"), w("apiVersion"), w("metadata", "labels", "x")},
		{w("spec", "names", "kind"), n("spec", "versions"), w("status", "conditions"), w("data", "a"), n("metadata")},
	}
}

func TestScanStored(t *testing.T) {
	c := testCatalog(t, "kubernetes")
	cm := c.ByGVK("", "v1", "ConfigMap")
	pod := c.ByGVK("", "v1", "Pod")
	for _, tc := range []struct {
		s    *Schema
		data string
	}{
		{cm, `{"metadata":{"name":"a","namespace":"n","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"app":"x","b":"y"},"managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}]},"data":{"a":"1","b\u00e9":"\n","c":""},"binaryData":{"x":"AA=="}}`},
		{cm, `{"metadata":{"name":"a"}}`},
		{cm, `{"metadata":{"name":"a","labels":{"app":null}},"data":null,"binaryData":{}}`},
		{cm, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"creationTimestamp":"2026-01-02T03:04:05.5+01:00"},"data":{"a":null}}`},
		{pod, `{"metadata":{"name":"p","labels":{"app":"w"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]},"status":{"phase":"Running","containerStatuses":[{"name":"c","ready":true,"restartCount":2,"image":"i","imageID":""},{"name":"d","ready":false,"restartCount":0,"image":"i","imageID":""}]}}`},
		{cm, `{"meta\u0064ata":{"na\u006de":"a"},"\u0064ata":{"k":"v","\u006b":"w"}}`},
		{cm, manyKeys(40)},
	} {
		for _, paths := range fieldCases() {
			checkFields(t, []byte(tc.data), tc.s, paths, true)
		}
	}
}

// manyKeys is a ConfigMap whose data has n keys, every fifth one written
// twice, so a count past a short list of keys still drops the repeats.
func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString(`{"metadata":{"name":"a"},"data":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":"v"`, i)
		if i%5 == 0 {
			fmt.Fprintf(&b, `,"k%d":"w"`, i)
		}
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestCountManyKeys: a map of many keys is counted with each key once.
func TestCountManyKeys(t *testing.T) {
	c := testCatalog(t, "kubernetes")
	f := NewFields([]FieldPath{{Path: []string{"data"}, Count: true}})
	out := make([]any, 1)
	if !ScanStored([]byte(manyKeys(50000)), c.ByGVK("", "v1", "ConfigMap"), f, out, nil) || out[0] != int64(50000) {
		t.Fatalf("count of 50000 keys: %v", out[0])
	}
}

func TestScanStoredRefusesRepeatedMembers(t *testing.T) {
	c := testCatalog(t, "kubernetes")
	f := NewFields([]FieldPath{{Path: []string{"metadata", "name"}}})
	out := make([]any, 1)
	if ScanStored([]byte(`{"metadata":{"name":"a"},"metadata":{"uid":"u"}}`), c.ByGVK("", "v1", "ConfigMap"), f, out, nil) {
		t.Fatal("a repeated member on a path is scanned")
	}
	if !ScanStored([]byte(`{"metadata":{"name":"a"},"data":{},"data":{}}`), c.ByGVK("", "v1", "ConfigMap"), f, out, nil) || out[0] != "a" {
		t.Fatalf("a repeated member off the paths is refused (%v)", out)
	}
}

func TestNewFieldsRefuses(t *testing.T) {
	for _, paths := range [][]FieldPath{
		{{Path: nil}},
		{{Path: []string{"a"}}, {Path: []string{"a", "b"}}},
		{{Path: []string{"a", "b"}}, {Path: []string{"a"}}},
		{{Path: []string{"a"}}, {Path: []string{"a"}, Count: true}},
		{{Path: []string{"a"}}, {Path: []string{"a"}, Raw: true}},
		{{Path: []string{"a"}, Raw: true}, {Path: []string{"a"}, Raw: true}},
		{{Path: []string{"a"}}, {Path: []string{"a", "b"}, Raw: true}},
	} {
		if NewFields(paths) != nil {
			t.Errorf("NewFields(%v) accepted", paths)
		}
	}
}

// FuzzScanStored: whenever DecodeStored reads data and ScanStored does
// not refuse it, they read the same values.
func FuzzScanStored(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"metadata":{"name":"a","labels":{"x":"\ud800"}},"data":{"k":1},"binaryData":{"b":"AA=="}}`))
	f.Add([]byte(`{"metadata":{"name":"a"},"data":{"k":"v","k":"w"},"data":{"l":"x"}}`))
	f.Add([]byte(`{"spec":{"limits":[{"max":{"cpu":"0.1"},"type":"Pod","x":[1,2.5e3,true,null]}]}}`))
	c := testCatalog(f, "kubernetes")
	schemas := []*Schema{
		c.ByGVK("", "v1", "ConfigMap"), c.ByGVK("", "v1", "LimitRange"), c.ByGVK("", "v1", "Pod"),
		c.ByGVK(kn("apiextensions.@D@"), "v1", "CustomResourceDefinition"),
	}
	cases := fieldCases()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range schemas {
			for _, paths := range cases {
				checkFields(t, data, s, paths, false)
			}
		}
	})
}

func TestSpecialByte(t *testing.T) {
	special := func(b byte) bool { return b == '"' || b == '\\' || b < 0x20 || b >= 0x80 }
	word := func(w []byte) uint64 {
		var x uint64
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(w[i])
		}
		return x
	}
	// The lowest mark is the first special byte, whatever follows it.
	check := func(w []byte) {
		t.Helper()
		first := 8
		for i, b := range w {
			if special(b) {
				first = i
				break
			}
		}
		m := specialBytes(word(w))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != first || m&^(bytesOf80) != 0 {
			t.Fatalf("%q: marks %#x, first special byte %d, want %d", w, m, got, first)
		}
	}
	for b := 0; b < 256; b++ {
		for pos := range 8 {
			w := []byte("abcdefgh")
			w[pos] = byte(b)
			check(w)
			for _, after := range []byte{0, 0x1f, 0x20, '!', '"', '#', '[', '\\', ']', 0x7f, 0x80, 0xff} {
				if pos < 7 {
					w2 := append([]byte(nil), w...)
					w2[pos+1] = after
					check(w2)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		w := make([]byte, 8)
		for i := range w {
			w[i] = byte(r.Uint32())
		}
		check(w)
	}
}

package fieldmanager

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"platd/config"
	"platd/server/schema"
)

// generalCreate is the ownership the general comparison records for a
// create of obj: the FieldsV1 trie ("" when nothing is owned), and false
// when the comparison fails.
func generalCreate(t testing.TB, r *Resource, obj map[string]any, manager string) (string, bool) {
	t.Helper()
	managed, err := r.update(nil, obj, emptyManaged(), manager, false)
	if err != nil {
		return "", false
	}
	entries, err := Encode(managed)
	if err != nil {
		t.Fatalf("encoding %v: %v", managed, err)
	}
	switch len(entries) {
	case 0:
		return "", true
	case 1:
		return string(entries[0].(map[string]any)["fieldsV1"].(schema.RawJSON)), true
	}
	t.Fatalf("a create recorded %d entries", len(entries))
	return "", false
}

// checkCreate holds the direct walk of a create to the general
// comparison: the same bytes, and no answer exactly where the comparison
// fails. It says whether the walk answered.
func checkCreate(t *testing.T, name string, r *Resource, obj map[string]any) bool {
	t.Helper()
	raw, ok := r.createdFields(obj)
	want, wantOK := generalCreate(t, r, obj, "m")
	if !ok {
		// Leaving a create the comparison takes to it costs time, not
		// correctness; the walk's cases cover every object made here.
		if wantOK {
			t.Errorf("%s: the walk left to the comparison %s", name, encodeJSON(t, obj))
		}
		return false
	}
	if !wantOK {
		t.Errorf("%s: the walk owns %s where the comparison fails, for %s", name, raw, encodeJSON(t, obj))
		return true
	}
	if string(raw) != want {
		t.Errorf("%s: for %s\n walk       %s\n comparison %s", name, encodeJSON(t, obj), raw, want)
	}
	return true
}

// catalogKinds are the root kinds of the catalog: group, version, kind.
func catalogKinds(t *testing.T) [][3]string {
	t.Helper()
	raw, err := os.ReadFile("../schema/data/catalog.txt")
	if err != nil {
		t.Fatal(err)
	}
	domain := config.Brands["plat"].Domain
	var out [][3]string
	for _, line := range strings.Split(string(raw), "\n") {
		col := strings.Split(line, "\t")
		if col[0] != "G" || len(col) != 5 {
			continue
		}
		out = append(out, [3]string{strings.ReplaceAll(col[1], "@D@", domain), col[2], col[3]})
	}
	return out
}

// TestCreatedFieldsEqualCompare checks the direct walk of a create
// against structured-merge-diff's comparison with the zero object, over
// random objects of every kind of the catalog, decoded, defaulted and
// made canonical as a create's body is, with and without status reset.
func TestCreatedFieldsEqualCompare(t *testing.T) {
	t.Parallel()
	const perKind = 40
	kinds := catalogKinds(t)
	if len(kinds) < 200 {
		t.Fatalf("only %d kinds in the catalog", len(kinds))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	walked, total := 0, 0
	for _, k := range kinds {
		s := kindSchema(t, k[0], k[1], k[2])
		gv := k[1]
		if k[0] != "" {
			gv = k[0] + "/" + k[1]
		}
		plain := New(Options{Group: k[0], Version: k[1], Kind: k[2], Schema: s})
		resources := []*Resource{plain}
		if s.Field("status") != nil {
			resources = append(resources, New(Options{Group: k[0], Version: k[1], Kind: k[2], Schema: s, Reset: []string{"status"}}))
		}
		for i := range perKind {
			g := &objectGen{rng: rng}
			obj, ok := g.object(s, 0).(map[string]any)
			if !ok {
				continue
			}
			if i%2 == 0 {
				obj["apiVersion"], obj["kind"] = gv, k[2]
			}
			body, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := schema.Decode(body, s)
			if err != nil {
				continue
			}
			schema.ApplyDefaults(dec.Object, s)
			canon := schema.Canonical(dec.Object, s)
			for _, r := range resources {
				total++
				if checkCreate(t, fmt.Sprintf("%s %d", gv+"/"+k[2], i), r, canon) {
					walked++
				}
			}
		}
	}
	t.Logf("the walk answered %d of %d creates", walked, total)
	if walked < total*3/4 {
		t.Errorf("the walk answered only %d of %d creates", walked, total)
	}
}

// TestCreatedFieldsCases pins the walk on the shapes that decide
// ownership: nulls the zero object holds, empty values, keyed lists with
// defaulted and repeated keys, sets, escaped names, and the fields the
// server keeps.
func TestCreatedFieldsCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		group, kind, obj string
		reset            bool
		want             string
	}{
		{"", "ConfigMap", `{"metadata":{"name":"c","namespace":"n","uid":"u","creationTimestamp":null},"data":{"a":"1"}}`, false,
			`{"f:data":{".":{},"f:a":{}}}`},
		{"", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, false, ``},
		{"", "ConfigMap", `{"metadata":{"name":"c","labels":{"a<b":"1","q\"x":"2","ü":"3"}},"data":{},"binaryData":null}`, false,
			`{"f:binaryData":{},"f:data":{},"f:metadata":{"f:labels":{".":{},"f:a<b":{},"f:q\"x":{},"f:ü":{}}}}`},
		{"", "Pod", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"b","ports":[{"containerPort":80},{"containerPort":80,"protocol":"UDP"}]},{"name":"a"}],"nodeName":""},"status":{"phase":"Pending"}}`, true,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:name":{}},"k:{\"name\":\"b\"}":{".":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}},"k:{\"containerPort\":80,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}},"f:nodeName":{}}}`},
		{"", "Pod", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","env":[{"name":"X","value":"1"},{"name":"X","value":"2"}]}]},"status":{"phase":"Pending"}}`, false,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"X\"}":{}},"f:name":{}}}},"f:status":{"f:phase":{}}}`},
		{"", "Namespace", `{"metadata":{"name":"n","finalizers":["b","a","b"]},"spec":{"finalizers":["x"]}}`, false,
			`{"f:metadata":{"f:finalizers":{".":{},"v:\"a\"":{},"v:\"b\"":{}}},"f:spec":{"f:finalizers":{}}}`},
	} {
		s := kindSchema(t, tc.group, "v1", tc.kind)
		o := Options{Group: tc.group, Version: "v1", Kind: tc.kind, Schema: s}
		if tc.reset {
			o.Reset = []string{"status"}
		}
		r := New(o)
		obj := object(t, tc.obj)
		raw, ok := r.createdFields(obj)
		if !ok {
			t.Errorf("%s: the walk did not answer", tc.obj)
			continue
		}
		if string(raw) != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.obj, raw, tc.want)
		}
		checkCreate(t, tc.obj, r, obj)
	}
}

// objectGen makes random values of a schema: every member shape, small
// value pools so that list keys repeat and values meet the zero object's,
// nulls, and names that need escaping.
type objectGen struct{ rng *rand.Rand }

var genStrings = []string{"", "a", "b", "x<y&z", `q"t`, "ü", "tab\tx", "ns/name"}

func (g *objectGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *objectGen) value(s *schema.Schema, depth int) any {
	if s == nil {
		return g.anyValue(depth)
	}
	if g.rng.IntN(20) == 0 {
		return nil
	}
	switch s.Type {
	case schema.Object:
		return g.object(s, depth)
	case schema.Map:
		m := map[string]any{}
		for range g.rng.IntN(3) {
			m[g.pick(genStrings)] = g.value(s.Elem, depth+1)
		}
		return m
	case schema.Array:
		var out []any
		for range g.rng.IntN(4) {
			e := g.value(s.Elem, depth+1)
			if m, ok := e.(map[string]any); ok && g.rng.IntN(10) > 0 {
				// Keys from small pools, so that items repeat one.
				for _, k := range s.ListMapKeys {
					if f := s.Elem.Field(k); f != nil && g.rng.IntN(4) > 0 {
						m[k] = g.value(f.Schema, depth+2)
					}
				}
			}
			out = append(out, e)
		}
		if out == nil && g.rng.IntN(2) == 0 {
			out = []any{}
		}
		return out
	case schema.String:
		if len(s.Enum) > 0 && g.rng.IntN(3) > 0 {
			return g.pick(s.Enum)
		}
		return g.pick(genStrings)
	case schema.Integer:
		return g.rng.IntN(3)
	case schema.Number:
		return []float64{0, 0.5, 2}[g.rng.IntN(3)]
	case schema.Boolean:
		return g.rng.IntN(2) == 0
	case schema.IntOrString:
		return []any{0, 8080, "http", ""}[g.rng.IntN(4)]
	case schema.Quantity:
		return g.pick([]string{"0", "1", "250m", "1Gi"})
	case schema.Time:
		return "2025-01-02T03:04:05Z"
	case schema.MicroTime:
		return "2025-01-02T03:04:05.000001Z"
	case schema.Bytes:
		return "aGk="
	}
	return g.anyValue(depth)
}

func (g *objectGen) object(s *schema.Schema, depth int) any {
	m := map[string]any{}
	if depth > 6 {
		return m
	}
	keep := 2 + depth
	for _, f := range s.Fields {
		if f.Name == "" || g.rng.IntN(keep) != 0 && !(depth == 0 && f.Name == "metadata") {
			continue
		}
		m[f.Name] = g.value(f.Schema, depth+1)
	}
	if s.PreserveUnknown && g.rng.IntN(3) == 0 {
		m[g.pick(genStrings)] = g.anyValue(depth + 1)
	}
	return m
}

func (g *objectGen) anyValue(depth int) any {
	n := 6
	if depth > 6 {
		n = 4
	}
	switch g.rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return g.pick(genStrings)
	case 2:
		return g.rng.IntN(3)
	case 3:
		return g.rng.IntN(2) == 0
	case 4:
		return []any{g.anyValue(depth + 1), g.anyValue(depth + 1)}
	}
	return map[string]any{g.pick(genStrings): g.anyValue(depth + 1)}
}

// FuzzCreatedFields decodes arbitrary bodies as a Pod, a Deployment and
// a ConfigMap, as a create does, and holds the walk of each to the
// general comparison (see checkCreate).
func FuzzCreatedFields(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80},{"containerPort":80,"protocol":"UDP"}]}]}}`,
		`{"metadata":{"name":"d","finalizers":["a","a"]},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","env":[{"name":"X"},{"name":"X","value":"1"}]}]}}}}`,
		`{"metadata":{"name":"c","annotations":{"x<y":"1","ü":""}},"data":{"k":""},"binaryData":{}}`,
		`{"metadata":{"name":"p","ownerReferences":[{"uid":"u"},{"uid":"u"}]},"spec":{"containers":[],"volumes":[{"name":"v","emptyDir":{}}]},"status":{"conditions":[{}]}}`,
	} {
		f.Add([]byte(seed))
	}
	type kind struct{ group, kind string }
	kinds := []kind{{"", "Pod"}, {"apps", "Deployment"}, {"", "ConfigMap"}}
	resources := map[kind]*Resource{}
	for _, k := range kinds {
		s := kindSchema(f, k.group, "v1", k.kind)
		o := Options{Group: k.group, Version: "v1", Kind: k.kind, Schema: s}
		if s.Field("status") != nil {
			o.Reset = []string{"status"}
		}
		resources[k] = New(o)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range kinds {
			r := resources[k]
			dec, err := schema.Decode(data, r.o.Schema)
			if err != nil {
				continue
			}
			schema.ApplyDefaults(dec.Object, r.o.Schema)
			checkCreate(t, k.kind, r, schema.Canonical(dec.Object, r.o.Schema))
		}
	})
}

package jsonpath

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// decode reads JSON into the generic form objects are held in: integers
// as int64, other numbers as float64.
func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return generic(v)
}

func generic(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = generic(e)
		}
	case []any:
		for i, e := range x {
			x[i] = generic(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

type execCase struct {
	name     string
	template string
	want     string
	wantErr  bool
}

func runExec(t *testing.T, data any, allowMissing bool, cases []execCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Parse(c.template)
			if err != nil {
				if !c.wantErr {
					t.Fatalf("parse %q: %v", c.template, err)
				}
				return
			}
			var buf bytes.Buffer
			err = tpl.Execute(&buf, data, allowMissing)
			if c.wantErr {
				if err == nil {
					t.Fatalf("%q: want an error, got %q", c.template, buf.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", c.template, err)
			}
			if got := buf.String(); got != c.want {
				t.Errorf("%q = %q, want %q", c.template, got, c.want)
			}
		})
	}
}

func TestTypes(t *testing.T) {
	data := decode(t, `{
		"bools": [true, false, true, false],
		"integers": [1, 2, 3, 4],
		"floats": [1.5, 2.2, 3.3, 4.5],
		"strings": ["one", "two", "three", "four"],
		"interfaces": [true, "one", 1, 1.1],
		"maps": [{"name": "one", "value": 1}, {"name": "two", "value": 2.02},
		         {"name": "three", "value": 3.03}, {"name": "four", "value": 4.04}]
	}`)
	runExec(t, data, false, []execCase{
		{"boolSlice", `{ .bools }`, `[true,false,true,false]`, false},
		{"boolSliceIndex", `{ .bools[0] }`, `true`, false},
		{"boolSliceIndexLast", `{ .bools[-1] }`, `false`, false},
		{"boolSubSlice", `{ .bools[0:2] }`, `true false`, false},
		{"boolSubSliceFirst2", `{ .bools[:2] }`, `true false`, false},
		{"boolSubSliceStep2", `{ .bools[:4:2] }`, `true true`, false},
		{"integerSlice", `{ .integers }`, `[1,2,3,4]`, false},
		{"integerSliceIndexReverse", `{ .integers[-2] }`, `3`, false},
		{"integerSubSliceStep2", `{ .integers[:4:2] }`, `1 3`, false},
		{"floatSlice", `{ .floats }`, `[1.5,2.2,3.3,4.5]`, false},
		{"floatSliceIndexReverse", `{ .floats[-2] }`, `3.3`, false},
		{"stringSlice", `{ .strings }`, `["one","two","three","four"]`, false},
		{"stringSliceIndex", `{ .strings[0] }`, `one`, false},
		{"stringSubSliceStep2", `{ .strings[:4:2] }`, `one three`, false},
		{"interfaceSlice", `{ .interfaces }`, `[true,"one",1,1.1]`, false},
		{"interfaceSubSliceStep2", `{ .interfaces[:4:2] }`, `true 1`, false},
		{"mapSliceIndex", `{ .maps[0] }`, `{"name":"one","value":1}`, false},
		{"mapSubSliceStepOdd", `{ .maps[::2] }`, `{"name":"one","value":1} {"name":"three","value":3.03}`, false},
		{"mapSubSliceStepEven", `{ .maps[1::2] }`, `{"name":"two","value":2.02} {"name":"four","value":4.04}`, false},
	})
}

// TestStore runs upstream's cases over its store as decoded JSON: members
// of an object are visited in key order (upstream visits a struct in field
// order and a map in Go's random order).
func TestStore(t *testing.T) {
	store := decode(t, `{
		"Name": "jsonpath",
		"Book": [
			{"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
			{"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
			{"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99}],
		"Bicycle": [
			{"Color": "red", "Price": 19.95, "IsNew": true},
			{"Color": "green", "Price": 20.01, "IsNew": false}],
		"Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
		"Employees": {"jason": "manager", "dan": "clerk"}
	}`)
	runExec(t, nil, false, []execCase{
		{"plain", "hello jsonpath", "hello jsonpath", false},
		{"quote", `{"{"}`, "{", false},
	})
	runExec(t, decode(t, `[1, 2, 3]`), false, []execCase{{"recursive", "{..}", "[1,2,3]", false}})
	runExec(t, decode(t, `[2, 6, 3, 7]`), false, []execCase{{"filter", "{[?(@<5)]}", "2 3", false}})
	runExec(t, decode(t, `[0, 1, 2, 3, 4]`), false, []execCase{{"union", "{[1,3,4]}", "1 3 4", false}})
	runExec(t, decode(t, `["Monday", "Tudesday"]`), false, []execCase{{"array", "{[0:2]}", "Monday Tudesday", false}})
	runExec(t, store, false, []execCase{
		{"variable", "hello {.Name}", "hello jsonpath", false},
		{"dict/", "{$.Labels.web/html}", "15", false},
		{"dict/ employees", "{$.Employees.jason}", "manager", false},
		{"dict-", "{.Labels.k8s-app}", "20", false},
		{"nest", "{.Bicycle[*].Color}", "red green", false},
		{"allarray", "{.Book[*].Author}", "Nigel Rees Evelyn Waugh Herman Melville", false},
		{"allfields", `{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}`, "{red true 19.95} {green false 20.01} ", false},
		{"recurfields", "{..Price}", "19.95 20.01 8.95 12.99 8.99", false},
		{"recurdotfields", "{...Price}", "19.95 20.01 8.95 12.99 8.99", false},
		{"superrecurfields", "{............................................................Price}", "", true},
		{"lastarray", "{.Book[-1:]}", `{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}`, false},
		{"recurarray", "{..Book[2]}", `{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}`, false},
		{"bool", "{.Bicycle[?(@.IsNew==true)]}", `{"Color":"red","IsNew":true,"Price":19.95}`, false},
		{"invalid identifier", "{hello}", "", true},
		{"nonexistent field", "{.hello}", "", true},
		{"invalid array", "{.Labels[0]}", "", true},
		{"invalid filter operator", "{.Book[?(@.Price<>10)]}", "", true},
		{"redundant end", "{range .Labels.*}{@}{end}{end}", "", true},
		{"float against int", "{.Book[?(@.Price>8)].Title}", "", true},
		{"float filter", "{.Book[?(@.Price>9.0)].Title}", "Sword of Honour", false},
		{"string order", `{.Book[?(@.Author<"F")].Title}`, "Sword of Honour", false},
	})
	runExec(t, store, true, []execCase{
		{"nonexistent field allowed", "{.hello}", "", false},
		{"nonexistent field between text", "before-{.hello}after", "before-after", false},
	})
}

func TestErrorTexts(t *testing.T) {
	store := decode(t, `{"Labels": {"a": 1}, "Book": [{"Price": 1.5}], "n": 3}`)
	for _, c := range []struct{ template, want string }{
		{"{hello}", "unrecognized identifier hello"},
		{"{.hello}", "hello is not found"},
		{"{.Labels[0]}", "map[string]interface {} is not array or slice"},
		{"{.n[0]}", "int64 is not array or slice"},
		{"{.Book[?(@.Price<>10)]}", "unrecognized filter operator <>"},
		{"{.Book[?(@.Price>1)]}", "incompatible types for comparison"},
		{"{range .Labels.*}{@}{end}{end}", "not in range, nothing to end"},
		{"{.Book[3]}", "array index out of bounds: index 3, length 1"},
		{"{.Book[0:2]}", "array index out of bounds: index 1, length 1"},
		{"{.Book[0:1:0]}", "step must be > 0"},
		{"{.Labels[?(@.x)]}", "map[a:1] is not array or slice and cannot be filtered"},
	} {
		tpl, err := Parse(c.template)
		if err != nil {
			t.Fatalf("parse %q: %v", c.template, err)
		}
		_, err = tpl.FindResults(store, false)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.template, err, c.want)
		}
	}
}

func TestJSONInput(t *testing.T) {
	points := decode(t, `[
		{"id": "i1", "x":4, "y":-5},
		{"id": "i2", "x":-2, "y":-5, "z":1},
		{"id": "i3", "x":  8, "y":  3 },
		{"id": "i4", "x": -6, "y": -1 },
		{"id": "i5", "x":  0, "y":  2, "z": 1 },
		{"id": "i6", "x":  1, "y":  4 }
	]`)
	runExec(t, points, false, []execCase{
		{"exists filter", "{[?(@.z)].id}", "i2 i5", false},
		{"bracket key", "{[0]['id']}", "i1", false},
		{"negative compare", "{[?(@.x<0)].id}", "i2 i4", false},
		{"greater equal", "{[?(@.y>=3)].id}", "i3 i6", false},
		{"not equal", "{[?(@.x!=0)].id}", "i1 i2 i3 i4 i6", false},
	})
}

const nodesJSON = `{
  "kind": "List",
  "items":[
    {
      "kind":"None",
      "metadata":{"name":"127.0.0.1", "labels":{"example.com/hostname":"127.0.0.1"}},
      "status":{
        "capacity":{"cpu":"4"},
        "ready": true,
        "addresses":[{"type": "LegacyHostIP", "address":"127.0.0.1"}]
      }
    },
    {
      "kind":"None",
      "metadata":{"name":"127.0.0.2", "labels":{"example.com/hostname":"127.0.0.2"}},
      "status":{
        "capacity":{"cpu":"8"},
        "ready": false,
        "addresses":[
          {"type": "LegacyHostIP", "address":"127.0.0.2"},
          {"type": "another", "address":"127.0.0.3"}
        ]
      }
    }
  ],
  "users":[
    {"name": "myself", "user": {}},
    {"name": "e2e", "user": {"username": "admin", "password": "secret"}}
  ]
}`

func TestNodes(t *testing.T) {
	data := decode(t, nodesJSON)
	runExec(t, data, false, []execCase{
		{"range item", `{range .items[*]}{.metadata.name}, {end}{.kind}`, "127.0.0.1, 127.0.0.2, List", false},
		{"range item with quote", `{range .items[*]}{.metadata.name}{"\t"}{end}`, "127.0.0.1\t127.0.0.2\t", false},
		{"range addresses", `{.items[*].status.addresses[*].address}`, "127.0.0.1 127.0.0.2 127.0.0.3", false},
		{"double range", `{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}`, "127.0.0.1, 127.0.0.2, 127.0.0.3, ", false},
		{"item name", `{.items[*].metadata.name}`, "127.0.0.1 127.0.0.2", false},
		{"union nodes capacity", `{.items[*]['metadata.name', 'status.capacity']}`, `127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}`, false},
		{"range nodes capacity", `{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}`, `[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] `, false},
		{"user password", `{.users[?(@.name=="e2e")].user.password}`, "secret", false},
		{"hostname", `{.items[0].metadata.labels.example\.com/hostname}`, "127.0.0.1", false},
		{"hostname filter", `{.items[?(@.metadata.labels.example\.com/hostname=="127.0.0.1")].kind}`, "None", false},
		{"bool item", `{.items[?(@..ready==true)].metadata.name}`, "127.0.0.1", false},
		{"quoted key with dot", `{.items[0].metadata.labels['example\.com/hostname']}`, "127.0.0.1", false},
		{"current object", `{@.kind}`, "List", false},
		{"filter type", `{.items[1].status.addresses[?(@.type=="another")].address}`, "127.0.0.3", false},
		{"single quoted filter", `{.items[1].status.addresses[?(@.type=='another')].address}`, "127.0.0.3", false},
	})

	// Map members are visited in key order, so the recursive output is
	// stable; upstream's order is Go's map order, so only the set matches.
	tpl, err := Parse("{..name}")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, data, false); err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(buf.String())
	sort.Strings(got)
	if want := "127.0.0.1 127.0.0.2 e2e myself"; strings.Join(got, " ") != want {
		t.Errorf("{..name} = %v, want %s", got, want)
	}
}

func TestFilterMissing(t *testing.T) {
	data := decode(t, `{"kind": "List", "items": [
		{"metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
		{"metadata": {"name": "pod2"}},
		{"metadata": {"name": "pod3", "annotations": {"color": "green"}}},
		{"metadata": {"name": "pod4", "annotations": {"color": "blue"}}}]}`)
	tpl := `{.items[?(@.metadata.annotations.color=="blue")].metadata.name}`
	runExec(t, data, true, []execCase{{"tolerate missing", tpl, "pod1 pod4", false}})
	runExec(t, data, false, []execCase{{"error on missing", tpl, "", true}})
}

func TestEmptyRange(t *testing.T) {
	data := decode(t, `{"items":[]}`)
	runExec(t, data, true, []execCase{
		{"empty range", `{range .items[*]}{.metadata.name}{end}`, "", false},
		{"empty nested range", `{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}`, "", false},
		{"after empty range", `{range .items[*]}{.metadata.name}{end}after`, "after", false},
	})
}

func TestNestedRanges(t *testing.T) {
	data := decode(t, `{"items": [
		{"metadata": {"name": "pod1"}, "spec": {"containers": [
			{"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
			{"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
		{"metadata": {"name": "pod2"}, "spec": {"containers": [
			{"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}]}}]}`)
	runExec(t, data, false, []execCase{
		{"nested", `{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}`,
			"pod1:foo,bar,+pod2:baz,+", false},
		{"three levels", `{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}`,
			"pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#", false},
		{"siblings", `{range .items[*]}{.metadata.name}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\n"}{end}`,
			"pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n", false},
	})
}

func TestIndexes(t *testing.T) {
	data := decode(t, `{"spec": {"containers": [
		{"name": "fake0"}, {"name": "fake1"}, {"name": "fake2"},
		{"name": "fake3"}, {"name": "fake4"}, {"name": "fake5"}]}}`)
	runExec(t, data, false, []execCase{
		{"[0]", `{.spec.containers[0].name}`, "fake0", false},
		{"[0:0]", `{.spec.containers[0:0].name}`, "", false},
		{"[0:-1]", `{.spec.containers[0:-1].name}`, "fake0 fake1 fake2 fake3 fake4", false},
		{"[-1:0]", `{.spec.containers[-1:0].name}`, "", true},
		{"[-1]", `{.spec.containers[-1].name}`, "fake5", false},
		{"[-1:]", `{.spec.containers[-1:].name}`, "fake5", false},
		{"[-6:]", `{.spec.containers[-6:].name}`, "fake0 fake1 fake2 fake3 fake4 fake5", false},
		{"[-7]", `{.spec.containers[-7].name}`, "", true},
		{"[7:7]", `{.spec.containers[7:7].name}`, "", false},
		{"[-7:-7]", `{.spec.containers[-7:-7].name}`, "", false},
		{"[3:1]", `{.spec.containers[3:1].name}`, "", true},
		{"[6]", `{.spec.containers[6].name}`, "", true},
		{"[0:6:]", `{.spec.containers[0:6:].name}`, "fake0 fake1 fake2 fake3 fake4 fake5", false},
		{"[0:6:0]", `{.spec.containers[0:6:0].name}`, "", true},
		{"[0:6:-1]", `{.spec.containers[0:6:-1].name}`, "", true},
		{"[1:4:2]", `{.spec.containers[1:4:2].name}`, "fake1 fake3", false},
		{"[1:4:4]", `{.spec.containers[1:4:4].name}`, "fake1", false},
		{"[0:6:5]", `{.spec.containers[0:6:5].name}`, "fake0 fake5", false},
		{"[*]", `{.spec.containers[*].name}`, "fake0 fake1 fake2 fake3 fake4 fake5", false},
		{"union of indexes", `{.spec.containers[0,2].name}`, "fake0 fake2", false},
	})
}

func TestResultsShape(t *testing.T) {
	data := decode(t, `{"spec": {"servers": [{"hosts": ["foo"]}, {"hosts": ["bar", "baz"]}]}, "n": null}`)
	for _, c := range []struct {
		template string
		want     [][]any
	}{
		{"{.spec.servers[0].hosts[0]}", [][]any{{"foo"}}},
		{"{.spec.servers[*].hosts[*]}", [][]any{{"foo", "bar", "baz"}}},
		{"{.missing}", [][]any{{}}},
		{"{.n}", [][]any{{nil}}},
		{"{.n.x}", [][]any{{}}},
		{"a{.spec.servers[1].hosts[1]}b", [][]any{{"a"}, {"baz"}, {"b"}}},
		{"{.spec.servers[0].hosts[0]}{.spec.servers[1].hosts[0]}", [][]any{{"foo"}, {"bar"}}},
		{"{.spec.servers[0].hosts[0] 7 2.5 true}", [][]any{{true}}},
	} {
		tpl, err := Parse(c.template)
		if err != nil {
			t.Fatalf("parse %q: %v", c.template, err)
		}
		got, err := tpl.FindResults(data, true)
		if err != nil {
			t.Fatalf("%q: %v", c.template, err)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(c.want)
		if string(gb) != string(wb) {
			t.Errorf("%q = %s, want %s", c.template, gb, wb)
		}
	}
}

func TestWildcardOverString(t *testing.T) {
	// Upstream walks a string as bytes: they print as numbers.
	data := decode(t, `{"s": "ab"}`)
	runExec(t, data, false, []execCase{{"bytes", "{.s.*}", "97 98", false}})
}

package fieldmanager

import (
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"platd/server/schema"
)

// decodeJSON reads a JSON test literal into its generic form.
func decodeJSON(t testing.TB, text string) any {
	t.Helper()
	v, err := schema.DecodeAny([]byte(text))
	if err != nil {
		t.Fatalf("decoding %s: %v", text, err)
	}
	return v
}

// encodeJSON renders a generic value as compact JSON with sorted keys.
func encodeJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := schema.AppendAny(nil, v)
	if err != nil {
		t.Fatalf("encoding %v: %v", v, err)
	}
	return string(b)
}

func entries(t *testing.T, text string) []any {
	t.Helper()
	list, ok := decodeJSON(t, text).([]any)
	if !ok {
		t.Fatalf("%s is not a list", text)
	}
	return list
}

func TestDecodeEncodeRoundTrip(t *testing.T) {
	cases := []struct{ name, in string }{
		{"one update", `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}}},"manager":"kubectl-create","operation":"Update","time":"2025-01-02T03:04:05Z"}]`},
		{"apply, update and status update",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}},"manager":"kubectl","operation":"Apply","time":"2025-01-02T03:05:00Z"},` +
				`{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:j":{}}},"manager":"kubectl-create","operation":"Update","time":"2025-01-02T03:04:05Z"},` +
				`{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:phase":{}}},"manager":"kubectl-edit","operation":"Update","subresource":"status","time":"2025-01-02T03:06:00Z"}]`},
		{"keyed, set and no time",
			`[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"a\"":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}}},"manager":"m","operation":"Update"}]`},
		{"keyed items in key value order, not text order",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{},"k:{\"port\":100,\"protocol\":\"TCP\"}":{}},"f:set":{"v:9":{},"v:10":{}}}},"manager":"m","operation":"Update","time":"2025-01-02T03:04:05Z"}]`},
		{"an entry owning nothing", `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{},"manager":"m","operation":"Update","time":"2025-01-02T03:04:05Z"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(entries(t, c.in))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			if got := encodeJSON(t, out); got != c.in {
				t.Errorf("round trip:\n got %s\nwant %s", got, c.in)
			}
		})
	}
}

func TestDecodeIdentity(t *testing.T) {
	m, err := Decode(entries(t, `[
		{"manager":"a","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}},
		{"manager":"a","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}},"time":"2025-01-02T03:04:05Z"},
		{"manager":"a","operation":"Update","apiVersion":"v1","subresource":"status","fieldsType":"FieldsV1","fieldsV1":{"f:status":{}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		`{"manager":"a","operation":"Apply"}`:                                           true,
		`{"manager":"a","operation":"Update","apiVersion":"v1"}`:                        false,
		`{"manager":"a","operation":"Update","apiVersion":"v1","subresource":"status"}`: false,
	}
	if len(m.Fields) != len(want) {
		t.Fatalf("managers %v, want %v", keys(m.Fields), keys(want))
	}
	for k, applied := range want {
		vs, ok := m.Fields[k]
		if !ok {
			t.Errorf("no manager %s in %v", k, keys(m.Fields))
			continue
		}
		if vs.Applied() != applied || vs.APIVersion() != "v1" {
			t.Errorf("%s: applied %v version %q", k, vs.Applied(), vs.APIVersion())
		}
	}
	if got := m.Times[`{"manager":"a","operation":"Update","apiVersion":"v1"}`]; got != "2025-01-02T03:04:05Z" {
		t.Errorf("time %q", got)
	}
	if _, ok := m.Times[`{"manager":"a","operation":"Apply"}`]; ok {
		t.Errorf("an entry without time got one")
	}
}

func TestDecodeErrors(t *testing.T) {
	const ok = `{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{}}`
	cases := []struct{ name, in, want string }{
		{"operation missing", `[{"manager":"m","apiVersion":"v1","fieldsType":"FieldsV1"}]`, "operation must be `Apply` or `Update`"},
		{"operation invalid", `[{"manager":"m","operation":"Patch","apiVersion":"v1","fieldsType":"FieldsV1"}]`, "operation must be `Apply` or `Update`"},
		{"apiVersion missing", `[{"manager":"m","operation":"Apply","fieldsType":"FieldsV1"}]`, "apiVersion must not be empty"},
		{"fieldsType missing", `[` + ok + `,{"manager":"m","operation":"Apply","apiVersion":"v1"}]`, "missing fieldsType in managed fields entry 1"},
		{"fieldsType invalid", `[{"manager":"m","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV2"}]`, `invalid fieldsType "FieldsV2" in managed fields entry 0`},
		{"not an object", `[` + ok + `,"x"]`, "managed fields entry 1 is not an object"},
		{"bad fields", `[{"manager":"m","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:a":{"xy":{}}}}]`, "error decoding versioned set from entry 0: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(entries(t, c.in))
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if strings.HasSuffix(c.want, ": ") {
				if !strings.HasPrefix(err.Error(), c.want) {
					t.Errorf("error %q, want prefix %q", err, c.want)
				}
			} else if err.Error() != c.want {
				t.Errorf("error %q, want %q", err, c.want)
			}
		})
	}
}

func TestEncodeOrder(t *testing.T) {
	entry := func(manager, op, version, sub, time string) string {
		s := `{"manager":"` + manager + `","operation":"` + op + `","apiVersion":"` + version + `","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}`
		if sub != "" {
			s += `,"subresource":"` + sub + `"`
		}
		if time != "" {
			s += `,"time":"` + time + `"`
		}
		return s + "}"
	}
	const t1, t2, t3 = "2025-01-01T00:00:01Z", "2025-01-01T00:00:02Z", "2025-01-01T00:00:03Z"
	in := "[" + strings.Join([]string{
		entry("z", "Update", "v1", "", t1),
		entry("b", "Update", "v2", "", t2),
		entry("b", "Update", "v1", "status", t2),
		entry("b", "Update", "v1", "", t2),
		entry("a", "Update", "v1", "", t3),
		entry("c", "Update", "v1", "", ""),
		entry("y", "Apply", "v1", "", t3),
		entry("x", "Apply", "v1", "", t1),
		entry("w", "Apply", "v1", "", "not a time"),
	}, ",") + "]"
	m, err := Decode(entries(t, in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range out {
		em := e.(map[string]any)
		got = append(got, str(em, "operation")+" "+str(em, "manager")+" "+str(em, "apiVersion")+" "+str(em, "subresource"))
	}
	want := []string{
		"Apply w v1 ", // an unreadable time sorts as none
		"Apply x v1 ",
		"Apply y v1 ",
		"Update c v1 ",
		"Update z v1 ",
		"Update b v1 ",
		"Update b v1 status",
		"Update b v2 ",
		"Update a v1 ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("order:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestEncodeEmpty(t *testing.T) {
	out, err := Encode(emptyManaged())
	if err != nil || out != nil {
		t.Errorf("Encode(empty) = %v, %v; want nil", out, err)
	}
}

func TestCapUpdaters(t *testing.T) {
	// entry is an Update entry at hour order owning the top-level fields
	// named.
	entry := func(manager, version string, order int, fields ...string) string {
		f := map[string]any{}
		for _, n := range fields {
			f["f:"+n] = map[string]any{}
		}
		return `{"apiVersion":"` + version + `","fieldsType":"FieldsV1","fieldsV1":` + encodeJSON(t, f) +
			`,"manager":"` + manager + `","operation":"Update","time":"2025-01-01T` + twoDigits(order) + `:00:00Z"}`
	}
	list := func(e ...string) string { return "[" + strings.Join(e, ",") + "]" }
	cases := []struct{ name, in, want string }{
		{
			name: "ten updaters are kept",
			in: list(entry("m01", "v1", 1, "a"), entry("m02", "v1", 2, "b"), entry("m03", "v1", 3, "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j")),
			want: list(entry("m01", "v1", 1, "a"), entry("m02", "v1", 2, "b"), entry("m03", "v1", 3, "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j")),
		},
		{
			// Twelve updaters in two versions: the oldest v1 one is held
			// back as its version's first until a second v1 one comes;
			// the v2 one in between has no partner, so it stays.
			name: "twelve updaters of two versions",
			in: list(entry("m01", "v1", 1, "a"), entry("m02", "v2", 2, "b"), entry("m03", "v1", 3, "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v2", 11, "k"), entry("m12", "v1", 12, "l")),
			want: list(entry("m02", "v2", 2, "b"), entry("ancient-changes", "v1", 4, "a", "c", "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v2", 11, "k"), entry("m12", "v1", 12, "l")),
		},
		{
			name: "an existing bucket takes the next oldest",
			in: list(entry("ancient-changes", "v1", 2, "a", "b"), entry("m03", "v1", 3, "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v1", 11, "k"), entry("m12", "v1", 12, "l")),
			want: list(entry("ancient-changes", "v1", 3, "a", "b", "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v1", 11, "k"), entry("m12", "v1", 12, "l")),
		},
		{
			name: "each version gets its own bucket",
			in: list(entry("m01", "v1", 1, "a"), entry("m02", "v2", 2, "b"), entry("m03", "v2", 3, "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v3", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v1", 11, "k"), entry("m12", "v1", 12, "l")),
			want: list(entry("ancient-changes", "v2", 3, "b", "c"), entry("ancient-changes", "v1", 4, "a", "d"),
				entry("m05", "v3", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v1", 11, "k"), entry("m12", "v1", 12, "l")),
		},
		{
			// Appliers are never folded, nor counted.
			name: "appliers do not count",
			in: list(`{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:z":{}},"manager":"ap","operation":"Apply","time":"2025-01-01T00:00:00Z"}`,
				entry("m01", "v1", 1, "a"), entry("m02", "v1", 2, "b"), entry("m03", "v1", 3, "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v1", 11, "k")),
			want: list(`{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:z":{}},"manager":"ap","operation":"Apply","time":"2025-01-01T00:00:00Z"}`,
				entry("ancient-changes", "v1", 2, "a", "b"), entry("m03", "v1", 3, "c"), entry("m04", "v1", 4, "d"),
				entry("m05", "v1", 5, "e"), entry("m06", "v1", 6, "f"), entry("m07", "v1", 7, "g"), entry("m08", "v1", 8, "h"),
				entry("m09", "v1", 9, "i"), entry("m10", "v1", 10, "j"), entry("m11", "v1", 11, "k")),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(entries(t, c.in))
			if err != nil {
				t.Fatal(err)
			}
			capUpdaters(m)
			out, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			if got := encodeJSON(t, out); got != c.want {
				t.Errorf("capped:\n got %s\nwant %s", got, c.want)
			}
			// Capping again changes nothing.
			capUpdaters(m)
			if again, _ := Encode(m); encodeJSON(t, again) != c.want {
				t.Errorf("capping is not idempotent: %s", encodeJSON(t, again))
			}
		})
	}
}

func twoDigits(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

func TestIsReset(t *testing.T) {
	cases := []struct {
		name    string
		v       any
		present bool
		want    bool
	}{
		{"absent", nil, false, false},
		{"null", nil, true, false},
		{"empty list", []any{}, true, true},
		{"one empty entry", []any{map[string]any{}}, true, true},
		{"one entry of empty values", []any{map[string]any{"manager": "", "time": nil}}, true, true},
		{"one entry with empty fields", []any{map[string]any{"fieldsV1": map[string]any{}}}, true, false},
		{"one entry with null fields", []any{map[string]any{"fieldsV1": nil}}, true, true},
		{"one entry with a manager", []any{map[string]any{"manager": "m"}}, true, false},
		{"two empty entries", []any{map[string]any{}, map[string]any{}}, true, false},
		{"a list of null", []any{nil}, true, false},
		{"not a list", "x", true, false},
		{"a real entry", entries(t, `[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:a":{}}}]`), true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := isReset(c.v, c.present); got != c.want {
				t.Errorf("isReset(%v, %v) = %v, want %v", c.v, c.present, got, c.want)
			}
		})
	}
}

func TestFieldsToSet(t *testing.T) {
	cases := []struct {
		name, in string
		want     []fieldpath.Path
		err      bool
	}{
		{"null", `null`, nil, false},
		{"empty", `{}`, nil, false},
		{"fields", `{"f:a":{},"f:b":{"f:c":{}}}`, []fieldpath.Path{fieldpath.MakePathOrDie("a"), fieldpath.MakePathOrDie("b", "c")}, false},
		{"self and child", `{"f:b":{".":{},"f:c":{}}}`, []fieldpath.Path{fieldpath.MakePathOrDie("b"), fieldpath.MakePathOrDie("b", "c")}, false},
		{"key", `{"f:l":{"k:{\"name\":\"x\"}":{}}}`, []fieldpath.Path{fieldpath.MakePathOrDie("l", fieldpath.KeyByFields("name", "x"))}, false},
		{"value", `{"f:l":{"v:\"x\"":{}}}`, []fieldpath.Path{fieldpath.MakePathOrDie("l", mustValue(t, `"x"`))}, false},
		{"index", `{"f:l":{"i:3":{}}}`, []fieldpath.Path{fieldpath.MakePathOrDie("l", 3)}, false},
		{"unknown prefix is dropped", `{"x:a":{},"f:a":{}}`, []fieldpath.Path{fieldpath.MakePathOrDie("a")}, false},
		{"no colon", `{"fa":{}}`, nil, true},
		{"not an object", `[1]`, nil, true},
		{"bad key", `{"f:l":{"k:{":{}}}`, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set, err := FieldsToSet(decodeJSON(t, c.in))
			if c.err {
				if err == nil {
					t.Fatalf("no error, set %v", set)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := fieldpath.NewSet(c.want...)
			if !set.Equals(want) {
				t.Errorf("set\n%v\nwant\n%v", set, want)
			}
		})
	}
}

// mustValue is a set-list element identified by its JSON value.
func mustValue(t *testing.T, text string) value.Value {
	t.Helper()
	v, err := value.FromJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

package codec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseAccept(t *testing.T) {
	t.Parallel()
	type mr = MediaRange
	p := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name   string
		header string
		want   []MediaRange
	}{
		{"empty", "", nil},
		{"single", "application/json", []mr{{"application", "json", p(), 1}}},
		{"bare star", "*", []mr{{"*", "*", p(), 1}}},
		{"params and q", "application/json;as=Table;v=v1;g=meta.example;q=0.9",
			[]mr{{"application", "json", p("as", "Table", "v", "v1", "g", "meta.example"), float64(float32(0.9))}}},
		{"q sorts descending", "application/yaml;q=0.5, application/json",
			[]mr{{"application", "json", p(), 1}, {"application", "yaml", p(), 0.5}}},
		{"q=0 kept", "application/json;q=0, application/yaml",
			[]mr{{"application", "yaml", p(), 1}, {"application", "json", p(), 0}}},
		{"concrete type before wildcard", "*/*, application/json",
			[]mr{{"application", "json", p(), 1}, {"*", "*", p(), 1}}},
		{"concrete subtype before wildcard", "application/*, application/json",
			[]mr{{"application", "json", p(), 1}, {"application", "*", p(), 1}}},
		{"equal weight keeps order", "application/vnd.example.protobuf, application/json",
			[]mr{{"application", "vnd.example.protobuf", p(), 1}, {"application", "json", p(), 1}}},
		{"spaces trimmed", "  application/json ; pretty = 1 ",
			[]mr{{"application", "json", p("pretty", "1"), 1}}},
		{"bad q weighs zero", "application/json;q=abc, application/yaml;q=0.1",
			[]mr{{"application", "yaml", p(), float64(float32(0.1))}, {"application", "json", p(), 0}}},
		{"param without value skipped", "application/json;stream", []mr{{"application", "json", p(), 1}}},
		{"malformed clauses skipped", "text, a/b/c, , application/json",
			[]mr{{"application", "json", p(), 1}}},
		{"case kept", "Application/JSON", []mr{{"Application", "JSON", p(), 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ParseAccept(tt.header)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseAccept(%q)\n got %+v\nwant %+v", tt.header, got, tt.want)
			}
		})
	}
}

func TestRouterAcceptable(t *testing.T) {
	t.Parallel()
	produced := []string{"application/json", "application/yaml", "application/vnd.example.protobuf",
		"application/json;stream=watch", "application/vnd.example.protobuf;stream=watch"}
	tests := []struct {
		header string
		want   bool
	}{
		{"", true},
		{"*/*", true},
		{"text/foo, */*;q=0.1", true},
		{"application/json", true},
		{"application/json;as=Table;v=v1;g=meta.example", true},
		{"application/vnd.example.protobuf;stream=watch", true},
		{" application/yaml ", true},
		{"application/*", false},
		{"*", false},
		{"text/foo", false},
		{"application/cbor", false},
		{"Application/JSON", false},
		{"  ", false},
	}
	for _, tt := range tests {
		if got := RouterAcceptable(tt.header, produced); got != tt.want {
			t.Errorf("RouterAcceptable(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{"", "*", "application/json;q=0.5, */*", "a/b;c=d;q=1e400", ";;;,,,/", "*/*;q=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got := ParseAccept(h)
		if len(got) > strings.Count(h, ",")+1 {
			t.Fatalf("more clauses than parts: %d", len(got))
		}
		for _, m := range got {
			if m.Params == nil {
				t.Fatal("nil params")
			}
		}
		_ = RouterAcceptable(h, []string{"application/json"})
	})
}

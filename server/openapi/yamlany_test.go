package openapi

import "testing"

// yamlCases pairs a JSON value with the YAML text an upstream server
// stores for it in the protobuf form of its v2 document.
var yamlCases = []struct{ json, yaml string }{
	{"\"get\"", "get\n"},
	{"\"watchlist\"", "watchlist\n"},
	{"\"merge,retainKeys\"", "merge,retainKeys\n"},
	{"[{\"group\":\"\",\"kind\":\"ConfigMap\",\"version\":\"v1\"}]", "- group: \"\"\n  kind: ConfigMap\n  version: v1\n"},
	{"[{\"group\":\"apps\",\"kind\":\"Deployment\",\"version\":\"v1\"},{\"group\":\"\",\"kind\":\"DeleteOptions\",\"version\":\"v1\"}]", "- group: apps\n  kind: Deployment\n  version: v1\n- group: \"\"\n  kind: DeleteOptions\n  version: v1\n"},
	{"{\"group\":\"\",\"kind\":\"ConfigMap\",\"version\":\"v1\"}", "group: \"\"\nkind: ConfigMap\nversion: v1\n"},
	{"[\"name\"]", "- name\n"},
	{"[\"type\",\"protocol\"]", "- type\n- protocol\n"},
	{"true", "true\n"},
	{"false", "false\n"},
	{"null", "null\n"},
	{"30", "30\n"},
	{"1.50", "1.50\n"},
	{"-0", "-0\n"},
	{"1e3", "1e3\n"},
	{"\"\"", "\"\"\n"},
	{"\"true\"", "\"true\"\n"},
	{"\"True\"", "\"True\"\n"},
	{"\"null\"", "\"null\"\n"},
	{"\"~\"", "\"~\"\n"},
	{"\"1e3\"", "\"1e3\"\n"},
	{"\"0x1F\"", "\"0x1F\"\n"},
	{"\"0o17\"", "\"0o17\"\n"},
	{"\"0b101\"", "\"0b101\"\n"},
	{"\"1_000\"", "\"1_000\"\n"},
	{"\".5\"", "\".5\"\n"},
	{"\".inf\"", "\".inf\"\n"},
	{"\"-.Inf\"", "\"-.Inf\"\n"},
	{"\"2024-01-01\"", "\"2024-01-01\"\n"},
	{"\"2024-01-01T00:00:00Z\"", "\"2024-01-01T00:00:00Z\"\n"},
	{"\"12:30\"", "12:30\n"},
	{"\"yes\"", "yes\n"},
	{"\"y\"", "y\n"},
	{"\"ON\"", "ON\n"},
	{"\"<<\"", "<<\n"},
	{"\"*/*\"", "'*/*'\n"},
	{"\"application/json\"", "application/json\n"},
	{"\"a: b\"", "'a: b'\n"},
	{"\"x:\"", "'x:'\n"},
	{"\":x\"", ":x\n"},
	{"\"?x\"", "?x\n"},
	{"\"? x\"", "'? x'\n"},
	{"\"-x\"", "-x\n"},
	{"\"- x\"", "'- x'\n"},
	{"\"-\"", "'-'\n"},
	{"\"---\"", "'---'\n"},
	{"\"...x\"", "'...x'\n"},
	{"\"#x\"", "'#x'\n"},
	{"\"a#b\"", "a#b\n"},
	{"\"a #b\"", "'a #b'\n"},
	{"\"{x\"", "'{x'\n"},
	{"\"x}\"", "x}\n"},
	{"\"@x\"", "'@x'\n"},
	{"\"%x\"", "'%x'\n"},
	{"\"`x\"", "'`x'\n"},
	{"\"'q'\"", "'''q'''\n"},
	{"\"it's\"", "it's\n"},
	{"\" lead\"", "' lead'\n"},
	{"\"trail \"", "'trail '\n"},
	{"\"tab\\there\"", "\"tab\\there\"\n"},
	{"\"\\u0001\"", "\"\\x01\"\n"},
	{"\"\\u007f\"", "\"\\x7F\"\n"},
	{"\"é\"", "é\n"},
	{"\"\\u00a0x\"", "\u00a0x\n"},
	{"\"\\u0085x\"", "\"\\Nx\"\n"},
	{"\"😀\"", "\"\\U0001F600\"\n"},
	{"\"say \\\"hi\\\"\"", "say \"hi\"\n"},
	{"\"back\\\\slash\"", "back\\slash\n"},
	{"\"line1\\nline2\"", "|-\n    line1\n    line2\n"},
	{"\"line1\\nline2\\n\"", "|\n    line1\n    line2\n"},
	{"\"x\\n\\n\"", "|+\n    x\n\n"},
	{"\"a\\nb\\n\\nc\\n\\n\"", "|+\n    a\n    b\n\n    c\n\n"},
	{"\"x \\ny\"", "\"x \\ny\"\n"},
	{"\"x\\n y\"", "|-\n    x\n     y\n"},
	{"\"x\\ty\\nz\"", "|-\n    x\ty\n    z\n"},
	{"\"a\\r\\nb\"", "\"a\\r\\nb\"\n"},
	{"\"tab\\t\\nx\"", "|-\n    tab\t\n    x\n"},
	// A literal block whose first line starts with a tab does not read
	// back: the parser takes the tab for indentation.
	{"\"\\t\\n\"", "\"\\t\\n\"\n"},
	{"\"\\tx\\ny\"", "\"\\tx\\ny\"\n"},
	{"\"x\\n\\ty\"", "|-\n    x\n    \ty\n"},
	{"{\"a\":{\"b\":[1,\"x\",{\"q\":[]}]},\"c\":[],\"d\":{},\"e\":null}", "a:\n    b:\n        - 1\n        - x\n        - q: []\nc: []\nd: {}\ne: null\n"},
	{"{\"a\":[{\"q\":{\"r\":1,\"s\":[1,{\"t\":2}]},\"u\":2}],\"b\":\"x\\ny\"}", "a:\n    - q:\n        r: 1\n        s:\n            - 1\n            - t: 2\n      u: 2\nb: |-\n    x\n    y\n"},
	{"[\"x\\ny\",{\"k\":\"a\\nb\"},[[\"x\\ny\"]]]", "- |-\n  x\n  y\n- k: |-\n    a\n    b\n- - - |-\n      x\n      y\n"},
	{"{\"k\":{\"k2\":\"a\\nb\\n\\nc\\n\\n\"}}", "k:\n    k2: |+\n        a\n        b\n\n        c\n\n"},
	{"[[1,2],[3]]", "- - 1\n  - 2\n- - 3\n"},
	{"[[]]", "- []\n"},
	{"[{}]", "- {}\n"},
	{"{}", "{}\n"},
	{"[]", "[]\n"},
	{"{\"\":2,\"true\":3,\"*k\":4,\"ke y\":{\"x\":[]},\"a: b\":1}", "\"\": 2\n\"true\": 3\n'*k': 4\nke y:\n    x: []\n'a: b': 1\n"},
	{"{\"port\":{\"x-kubernetes-int-or-string\":true},\"protocol\":\"TCP\"}", "port:\n    x-kubernetes-int-or-string: true\nprotocol: TCP\n"},
	{"[{\"a\":[{\"b\":\"x\\ny\"}]}]", "- a:\n    - b: |-\n        x\n        y\n"},
}

func TestAppendYAMLMatchesUpstream(t *testing.T) {
	t.Parallel()
	for _, c := range yamlCases {
		v, err := parseTree([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if got := string(appendYAML(nil, v)); got != c.yaml {
			t.Errorf("%s:\n got %q\nwant %q", c.json, got, c.yaml)
		}
	}
}

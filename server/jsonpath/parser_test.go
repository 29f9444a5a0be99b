package jsonpath

import (
	"fmt"
	"strings"
	"testing"
)

// dump renders a parse tree compactly for comparison.
func dump(n node) string {
	switch n := n.(type) {
	case *listNode:
		parts := make([]string, len(n.nodes))
		for i, c := range n.nodes {
			parts[i] = dump(c)
		}
		return "(" + strings.Join(parts, " ") + ")"
	case *textNode:
		return fmt.Sprintf("text:%q", n.text)
	case *fieldNode:
		return "field:" + n.name
	case *identifierNode:
		return "ident:" + n.name
	case *arrayNode:
		var s []string
		for _, p := range n.params {
			switch {
			case p.derived:
				s = append(s, fmt.Sprintf("%d*", p.value))
			case p.known:
				s = append(s, fmt.Sprint(p.value))
			default:
				s = append(s, "_")
			}
		}
		return "array:" + strings.Join(s, ",")
	case *filterNode:
		return "filter:" + dump(n.left) + n.op + dump(n.right)
	case *intNode:
		return fmt.Sprintf("int:%d", n.value)
	case *floatNode:
		return fmt.Sprintf("float:%g", n.value)
	case *boolNode:
		return fmt.Sprintf("bool:%t", n.value)
	case *wildcardNode:
		return "*"
	case *recursiveNode:
		return ".."
	case *unionNode:
		parts := make([]string, len(n.lists))
		for i, l := range n.lists {
			parts[i] = dump(l)
		}
		return "union" + strings.Join(parts, "|")
	}
	return "?"
}

func TestParser(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"plain", `hello jsonpath`, `(text:"hello jsonpath")`},
		{"variable", `hello {.jsonpath}`, `(text:"hello " (field:jsonpath))`},
		{"arrayfield", `hello {['jsonpath']}`, `(text:"hello " (field:jsonpath))`},
		{"quote", `{"{"}`, `((text:"{"))`},
		{"array", `{[1:3]}`, `((array:1,3,_))`},
		{"allarray", `{.book[*].author}`, `((field:book array:_,_,_ field:author))`},
		{"wildcard", `{.bicycle.*}`, `((field:bicycle *))`},
		{"filter", `{[?(@.price<3)]}`, `((filter:(field:price)<(int:3)))`},
		{"recursive", `{..}`, `((..))`},
		{"recurField", `{..price}`, `((.. field:price))`},
		{"arraydict", `{['book.price']}`, `((field:book field:price))`},
		{"union", `{['bicycle.price', 3, 'book.price']}`, `((union(field:bicycle field:price)|(array:3,4*,_)|(field:book field:price)))`},
		{"range", `{range .items}{.name},{end}`, `((ident:range field:items) (field:name) text:"," (ident:end))`},
		{"paren in quotes", `{[?(@.status.nodeInfo.osImage == "()")]}`, `((filter:(field:status field:nodeInfo field:osImage)==(text:"()")))`},
		{"escaped quotes", `{[?(@.status.nodeInfo.osImage == "(\"\")")]}`, `((filter:(field:status field:nodeInfo field:osImage)==(text:"(\"\")")))`},
		{"unbalanced in quotes", `{[?(@.test == "())(")]}`, `((filter:(field:test)==(text:"())(")))`},
		{"single quotes", `{[?(@.status.nodeInfo.osImage == 'Linux')]}`, `((filter:(field:status field:nodeInfo field:osImage)==(text:"Linux")))`},
		{"braces in quotes", `{[?(@.status.nodeInfo.osImage == "{[()]}")]}`, `((filter:(field:status field:nodeInfo field:osImage)==(text:"{[()]}")))`},
		{"double inside single", `{[?(@.status.nodeInfo.osImage == "''")]}`, `((filter:(field:status field:nodeInfo field:osImage)==(text:"''")))`},
		{"single inside double", `{[?(@.status.nodeInfo.osImage == '""')]}`, `((filter:(field:status field:nodeInfo field:osImage)==(text:"\"\"")))`},
		{"escaped single", `{[?(@.status.nodeInfo.osImage == '\\\'')]}`, `((filter:(field:status field:nodeInfo field:osImage)==(text:"\\'")))`},
		{"negative start", `{[-5:]}`, `((array:-5,_,_))`},
		{"negative index", `{[-1]}`, `((array:-1,0*,_))`},
		{"negative end", `{[1:-1]}`, `((array:1,-1,_))`},
		{"escaped dot", `{.metadata.labels.example\.com/name}`, `((field:metadata field:labels field:example.com/name))`},
		{"bool and float", `{[?(@.ok==true)]}{[?(@.f>1.5)]}`, `((filter:(field:ok)==(bool:true)) (filter:(field:f)>(float:1.5)))`},
		{"exists", `{.items[?(@.z)]}`, `((field:items filter:(field:z)exists()))`},
		{"dollar", `{$.kind}`, `((field:kind))`},
	} {
		tpl, err := Parse(c.text)
		if err != nil {
			t.Errorf("%s: parse %q: %v", c.name, c.text, err)
			continue
		}
		if got := dump(tpl.root); got != c.want {
			t.Errorf("%s: %q parsed as\n %s\nwant\n %s", c.name, c.text, got, c.want)
		}
	}
}

func TestParserErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unclosed action", "{.hello", "unclosed action"},
		{"unrecognized character", "{*}", "unrecognized character in action: U+002A '*'"},
		{"invalid number", "{+12.3.0}", "cannot parse number +12.3.0"},
		{"unterminated array", "{[1}", "unterminated array"},
		{"unterminated filter", "{[?(.price]}", "unterminated filter"},
		{"invalid multiple recursive descent", "{........}", "invalid multiple recursive descent"},
		{"malformed", `{\\\}`, `unrecognized character in action: U+005C '\'`},
		{"invalid index", "{[a]}", "invalid array index a"},
		{"not a number", "{[-]}", "array index - is not a number"},
		{"unterminated quote", `{"abc}`, "unterminated quoted string"},
		{"unclosed filter", "{[?(@.a)x]}", "unclosed array expect ]"},
		{"newline in action", "{.a\n}", "unclosed action"},
	} {
		_, err := Parse(c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: Parse(%q) error %v, want %q", c.name, c.text, err, c.want)
		}
	}
}

func TestUnquote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"a"`, "a"},
		{`'a'`, "a"},
		{`'it\'s'`, "it's"},
		{`"\t\u00e9"`, "\té"},
		{`'multi char'`, "multi char"},
	} {
		got, err := Unquote(c.in)
		if err != nil || got != c.want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{`"`, `"a'`, `ab`, `"\q"`} {
		if _, err := Unquote(in); err == nil {
			t.Errorf("Unquote(%s) succeeded", in)
		}
	}
}

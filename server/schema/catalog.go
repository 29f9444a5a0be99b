package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"platd/config"
)

//go:generate go run ./gen -openapi ../../../shared/golden/openapi/v3 -ref ../../../shared/reference -out data/catalog.txt

//go:embed data/catalog.txt
var catalogText string

// Placeholders the generator writes for the brand's spellings.
const (
	phReverse = "@R@"
	phDomain  = "@D@"
	phLong    = "@L@"
)

// Catalog holds the schemas of the built-in types for one brand. It is
// immutable after Load and safe for concurrent use.
type Catalog struct {
	byName map[string]*Schema
	byGVK  map[gvkKey]*Schema
	// kinds lists, per schema name, the kinds it is the schema of.
	kinds map[string][]GVK
}

// GVK names a kind: its group (branded, "" for core), version and kind.
type GVK struct{ Group, Version, Kind string }

type gvkKey struct{ group, version, kind string }

// Load builds the catalog of built-in types with the brand's domain in every
// schema name, group name and protobuf message name. Every call returns a
// new, sealed graph.
func Load(b config.Brand) (*Catalog, error) {
	return parseCatalog(catalogText, brandSpeller{reverse: ReverseDomain(b.Domain), domain: b.Domain, long: b.LongDomain})
}

// brandSpeller writes the brand's spellings over the placeholders of one
// catalog column. Only names carry placeholders: every other column is
// kept as a slice of the embedded text, not copied.
type brandSpeller struct{ reverse, domain, long string }

func (b brandSpeller) spell(s string) string {
	i := strings.IndexByte(s, '@')
	if i < 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s) + len(b.reverse))
	for ; i >= 0; i = strings.IndexByte(s, '@') {
		out.WriteString(s[:i])
		s = s[i:]
		var ph, with string
		switch {
		case strings.HasPrefix(s, phReverse):
			ph, with = phReverse, b.reverse
		case strings.HasPrefix(s, phDomain):
			ph, with = phDomain, b.domain
		case strings.HasPrefix(s, phLong):
			ph, with = phLong, b.long
		default:
			out.WriteByte('@')
			s = s[1:]
			continue
		}
		out.WriteString(with)
		s = s[len(ph):]
	}
	out.WriteString(s)
	return out.String()
}

// ReverseDomain reverses the labels of a domain: "a.example" → "example.a".
func ReverseDomain(d string) string {
	p := strings.Split(d, ".")
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return strings.Join(p, ".")
}

// Schema returns the named schema (branded name), or nil.
func (c *Catalog) Schema(name string) *Schema { return c.byName[name] }

// ByGVK returns the schema of a kind (branded group, "" for core), or nil.
func (c *Catalog) ByGVK(group, version, kind string) *Schema {
	return c.byGVK[gvkKey{group, version, kind}]
}

// KindsOf returns the kinds the named schema is the schema of, in catalog
// order (the upstream documents' x-kubernetes-group-version-kind); nil for
// none. The slice is shared: callers must not change it.
func (c *Catalog) KindsOf(name string) []GVK { return c.kinds[name] }

// Len returns the number of named schemas.
func (c *Catalog) Len() int { return len(c.byName) }

var typeNames = map[string]Type{
	"object": Object, "map": Map, "array": Array, "string": String, "integer": Integer,
	"number": Number, "boolean": Boolean, "intorstring": IntOrString, "quantity": Quantity,
	"time": Time, "microtime": MicroTime, "bytes": Bytes, "any": Any,
}

func parseCatalog(text string, b brandSpeller) (*Catalog, error) {
	n, nf := countLines(text, "S\t"), countLines(text, "F\t")
	// Schemas and fields live in two arrays, not thousands of small
	// objects: the catalog is built at every start and kept whole.
	all := make([]Schema, n)
	fields := make([]Field, nf)
	fieldPtrs := make([]*Field, nf)
	nextField, first := 0, 0
	// endFields gives the schema being read the fields read since it
	// began, capped so that an append copies.
	endFields := func(cur int) {
		if cur >= 0 && nextField > first {
			all[cur].Fields = fieldPtrs[first:nextField:nextField]
		}
		first = nextField
	}
	ref := func(s string) (*Schema, error) {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("%w: bad schema reference %q", ErrCatalog, s)
		}
		return &all[i], nil
	}
	c := &Catalog{byName: make(map[string]*Schema, n), byGVK: map[gvkKey]*Schema{}, kinds: map[string][]GVK{}}
	cur := -1
	var colBuf [13]string
	for ln, rest := 0, text; rest != ""; ln++ {
		l := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if l == "" || l[0] == '#' {
			continue
		}
		col := splitTabs(colBuf[:0], l)
		for i := range col {
			col[i] = b.spell(col[i])
		}
		bad := func() error { return fmt.Errorf("%w: line %d malformed", ErrCatalog, ln+1) }
		switch col[0] {
		case "S":
			if len(col) != 13 {
				return nil, bad()
			}
			endFields(cur)
			cur++
			s := &all[cur]
			s.Name = col[1]
			t, ok := typeNames[col[2]]
			if !ok {
				return nil, bad()
			}
			s.Type, s.Format = t, col[3]
			if col[4] != "-" {
				e, err := ref(col[4])
				if err != nil {
					return nil, err
				}
				s.Elem = e
			}
			s.ListType = col[5]
			if col[6] != "" {
				s.ListMapKeys = strings.Split(col[6], ",")
			}
			s.MapType = col[7]
			if col[8] != "" {
				s.Enum = parseEnum(col[8])
			}
			s.PreserveUnknown = strings.Contains(col[9], "U")
			s.Nullable = strings.Contains(col[9], "N")
			s.EmbeddedResource = strings.Contains(col[9], "E")
			s.Untyped = strings.Contains(col[9], "T")
			s.ProtoMessage = col[10]
			if col[11] != "" {
				u, err := parseUnions(col[11])
				if err != nil {
					return nil, fmt.Errorf("%w: line %d: %w", ErrCatalog, ln+1, err)
				}
				s.Unions = u
			}
			if col[12] != "" {
				s.RequiredOrder = strings.Split(col[12], ",")
			}
			if s.Name != "" {
				c.byName[s.Name] = s
			}
		case "F":
			if len(col) != 10 || cur < 0 {
				return nil, bad()
			}
			fs, err := ref(col[2])
			if err != nil {
				return nil, err
			}
			num, err := strconv.Atoi(col[4])
			if err != nil {
				return nil, bad()
			}
			f := &fields[nextField]
			*f = Field{
				Name: col[1], Schema: fs, ProtoNumber: num,
				Required:      strings.Contains(col[3], "R"),
				OmitEmpty:     strings.Contains(col[3], "O"),
				Pointer:       strings.Contains(col[3], "P"),
				ProtoAlways:   strings.Contains(col[3], "A"),
				Inline:        strings.Contains(col[3], "L"),
				DocBareRef:    strings.Contains(col[3], "B"),
				PatchStrategy: col[5], PatchMergeKey: col[6],
				DocListType: col[8], DocMapType: col[9],
			}
			if col[7] != "" {
				f.Default = []byte(col[7])
			}
			fieldPtrs[nextField] = f
			nextField++
		case "G":
			if len(col) != 5 {
				return nil, bad()
			}
			s, err := ref(col[4])
			if err != nil {
				return nil, err
			}
			c.byGVK[gvkKey{col[1], col[2], col[3]}] = s
			c.kinds[s.Name] = append(c.kinds[s.Name], GVK{col[1], col[2], col[3]})
		default:
			return nil, bad()
		}
	}
	endFields(cur)
	for i := range all {
		all[i].Seal()
	}
	return c, nil
}

// countLines counts the lines of text that start with prefix.
func countLines(text, prefix string) int {
	n := strings.Count(text, "\n"+prefix)
	if strings.HasPrefix(text, prefix) {
		n++
	}
	return n
}

// splitTabs appends the tab-separated columns of l to buf (strings.Split
// without its allocation per line).
func splitTabs(buf []string, l string) []string {
	for {
		i := strings.IndexByte(l, '\t')
		if i < 0 {
			return append(buf, l)
		}
		buf = append(buf, l[:i])
		l = l[i+1:]
	}
}

// parseEnum reads the catalog's JSON array of strings.
// parseUnions reads an x-kubernetes-unions value.
func parseUnions(s string) ([]Union, error) {
	var raw []struct {
		Discriminator string            `json:"discriminator"`
		Fields        map[string]string `json:"fields-to-discriminateBy"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("unions: %w", err)
	}
	out := make([]Union, len(raw))
	for i, r := range raw {
		out[i] = Union{Discriminator: r.Discriminator, Fields: r.Fields}
	}
	return out, nil
}

func parseEnum(s string) []string {
	v, err := decodeAny([]byte(s))
	if err != nil {
		return nil
	}
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if str, ok := x.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

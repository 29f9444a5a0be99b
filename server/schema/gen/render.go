package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"platd/config"
)

// Placeholders for the brand's spellings in the catalog text. The loader
// replaces them; they can occur in no upstream name.
const (
	phReverse = "@R@"
	phDomain  = "@D@"
	phLong    = "@L@"
)

// render writes the catalog:
//
//	S <name> <type> <format> <elem> <listType> <keys> <mapType> <enum> <flags> <proto> <unions> <required>
//	F <name> <schema> <flags> <protoNumber> <patchStrategy> <mergeKey> <default> <refListType> <refMapType>
//	G <group> <version> <kind> <schema>
//
// Columns are tab-separated; schemas are numbered by their S line order, and
// F lines belong to the S line above them.
func (b *builder) render() []byte {
	var sb strings.Builder
	sb.WriteString("# platd schema catalog: structure of the built-in types (generated, do not edit)\n")
	for _, s := range b.list {
		elem := "-"
		if s.elem != nil {
			elem = fmt.Sprint(s.elem.idx)
		}
		enum := ""
		if len(s.enum) > 0 {
			e, _ := json.Marshal(s.enum)
			enum = string(e)
		}
		writeRow(&sb, "S", s.name, s.typ, s.format, elem, s.listType, strings.Join(s.keys, ","), s.mapType, enum, s.flags(), s.proto, s.unions, strings.Join(s.required, ","))
		for _, f := range s.fields {
			writeRow(&sb, "F", f.name, fmt.Sprint(f.schema.idx), f.flags(), fmt.Sprint(f.protoNum), f.patchStrategy, f.mergeKey, f.def, f.refListType, f.refMapType)
		}
	}
	for _, g := range b.gvks {
		writeRow(&sb, "G", g.g.Group, g.g.Version, g.g.Kind, fmt.Sprint(g.schema.idx))
	}
	long := config.Brands["kubernetes"].LongDomain
	r := strings.NewReplacer(b.rev, phReverse, b.up, phDomain, long, phLong)
	return []byte(r.Replace(sb.String()))
}

func writeRow(sb *strings.Builder, cols ...string) {
	for i, c := range cols {
		if i > 0 {
			sb.WriteByte('\t')
		}
		c = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
		sb.WriteString(c)
	}
	sb.WriteByte('\n')
}

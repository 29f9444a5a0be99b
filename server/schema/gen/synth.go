package main

import (
	"sort"
	"strings"
)

// protoOnlyPackages are the protobuf packages (after the upstream domain)
// of types served on the wire that no OpenAPI document describes: the
// aggregated discovery documents. Their schemas are made from the
// protobuf tables.
var protoOnlyPackages = []string{"api.apidiscovery.v2", "api.apidiscovery.v2beta1"}

// synthesize adds to docs a schema for every message of the proto-only
// packages, and for every message those refer to that docs lacks, from
// the message's protobuf fields: strings, booleans and integers as such,
// messages by reference, repeated fields as arrays.
func synthesize(docs map[string]*oaSchema, protos protoTables, up string) {
	b := &builder{protos: protos, up: up, rev: reverseDomain(up)}
	var msgs []string
	for msg := range protos {
		for _, pkg := range protoOnlyPackages {
			if strings.HasPrefix(msg, up+"."+pkg+".") {
				msgs = append(msgs, msg)
			}
		}
	}
	sort.Strings(msgs)
	var add func(msg string)
	add = func(msg string) {
		name := b.openapiName(msg)
		if docs[name] != nil {
			return
		}
		s := &oaSchema{Type: "object", Properties: map[string]*oaSchema{}}
		docs[name] = s
		for _, f := range protos[msg] {
			var prop *oaSchema
			switch f.Type {
			case "string":
				prop = &oaSchema{Type: "string"}
			case "bool":
				prop = &oaSchema{Type: "boolean"}
			case "int32", "int64":
				prop = &oaSchema{Type: "integer", Format: f.Type}
			default:
				if _, ok := protos[f.Type]; !ok {
					continue
				}
				add(f.Type)
				prop = &oaSchema{Ref: "#/components/schemas/" + b.openapiName(f.Type)}
			}
			if f.Label == "repeated" {
				prop = &oaSchema{Type: "array", Items: prop}
			}
			s.Properties[f.JSONName] = prop
		}
	}
	for _, msg := range msgs {
		add(msg)
	}
}

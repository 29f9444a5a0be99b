// Command gen turns the upstream OpenAPI v3 documents and the protobuf field
// tables into the compact schema catalog that package schema embeds. It keeps
// structure only (no description text) and replaces the upstream domain with
// placeholders that the loader substitutes with the chosen brand.
//
// Usage (from go:generate in package schema):
//
//	go run ./gen -openapi DIR -ref DIR -out data/catalog.txt
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"platd/config"
)

func main() {
	openapiDir := flag.String("openapi", "", "directory of upstream OpenAPI v3 documents (api__v1.json, apis__<group>__<version>.json)")
	refDir := flag.String("ref", "", "directory holding protobuf-fields.tsv and protobuf-fields-emit.tsv")
	out := flag.String("out", "data/catalog.txt", "output file")
	flag.Parse()
	if *openapiDir == "" || *refDir == "" {
		fmt.Fprintln(os.Stderr, "gen: -openapi and -ref are required")
		os.Exit(2)
	}
	if err := run(*openapiDir, *refDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(openapiDir, refDir, out string) error {
	docs, err := readOpenAPI(openapiDir)
	if err != nil {
		return err
	}
	protos, err := readProto(refDir)
	if err != nil {
		return err
	}
	synthesize(docs, protos, config.UpstreamDomain())
	b := newBuilder(docs, protos)
	if err := b.build(); err != nil {
		return err
	}
	text := b.render()
	if err := os.WriteFile(out, text, 0o644); err != nil {
		return err
	}
	slog.Info("catalog written", "file", out, "bytes", len(text), "schemas", len(b.list), "kinds", len(b.gvks))
	for _, w := range b.warnings {
		slog.Warn(w)
	}
	return nil
}

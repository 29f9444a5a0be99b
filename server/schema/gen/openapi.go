package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// oaSchema is the subset of an OpenAPI v3 schema object the catalog keeps.
type oaSchema struct {
	Ref                  string               `json:"$ref"`
	Type                 string               `json:"type"`
	Format               string               `json:"format"`
	AllOf                []*oaSchema          `json:"allOf"`
	OneOf                []*oaSchema          `json:"oneOf"`
	Items                *oaSchema            `json:"items"`
	AdditionalProperties json.RawMessage      `json:"additionalProperties"`
	Properties           map[string]*oaSchema `json:"properties"`
	Required             []string             `json:"required"`
	Default              json.RawMessage      `json:"default"`
	Enum                 []json.RawMessage    `json:"enum"`
	Nullable             bool                 `json:"nullable"`
	ListType             string               `json:"x-kubernetes-list-type"`
	ListMapKeys          []string             `json:"x-kubernetes-list-map-keys"`
	MapType              string               `json:"x-kubernetes-map-type"`
	PatchStrategy        string               `json:"x-kubernetes-patch-strategy"`
	PatchMergeKey        string               `json:"x-kubernetes-patch-merge-key"`
	PreserveUnknown      bool                 `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString          bool                 `json:"x-kubernetes-int-or-string"`
	EmbeddedResource     bool                 `json:"x-kubernetes-embedded-resource"`
	GVK                  []gvk                `json:"x-kubernetes-group-version-kind"`
	Unions               json.RawMessage      `json:"x-kubernetes-unions"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// additional returns the additionalProperties schema, or nil when absent or
// a boolean.
func (s *oaSchema) additional() *oaSchema {
	if len(s.AdditionalProperties) == 0 || s.AdditionalProperties[0] != '{' {
		return nil
	}
	var a oaSchema
	if err := json.Unmarshal(s.AdditionalProperties, &a); err != nil {
		return nil
	}
	return &a
}

// refTarget returns the schema name a property points at through $ref or a
// single-element allOf, or "".
func (s *oaSchema) refTarget() string {
	if s.Ref != "" {
		return strings.TrimPrefix(s.Ref, "#/components/schemas/")
	}
	if len(s.AllOf) == 1 && s.AllOf[0].Ref != "" {
		return strings.TrimPrefix(s.AllOf[0].Ref, "#/components/schemas/")
	}
	return ""
}

// readOpenAPI merges the component schemas of every group-version document
// (api__v1.json and apis__<group>__<version>.json) in dir, and of the two
// root documents (api.json, apis.json), whose discovery types are served
// in protobuf too.
func readOpenAPI(dir string) (map[string]*oaSchema, error) {
	files, err := filepath.Glob(filepath.Join(dir, "ap*__*.json"))
	if err != nil {
		return nil, err
	}
	files = append(files, filepath.Join(dir, "api.json"), filepath.Join(dir, "apis.json"))
	sort.Strings(files)
	all := map[string]*oaSchema{}
	n := 0
	for _, f := range files {
		base := filepath.Base(f)
		if base != "api__v1.json" && base != "api.json" && base != "apis.json" && strings.Count(base, "__") != 2 {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Components struct {
				Schemas map[string]*oaSchema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", base, err)
		}
		for name, s := range doc.Components.Schemas {
			all[name] = s
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("no group-version documents in %s", dir)
	}
	return all, nil
}

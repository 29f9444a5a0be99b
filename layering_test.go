package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"platd/config"
)

// layers ranks the packages of the module: a package may import only
// packages of a lower rank, so imports point downward (DESIGN.md §3).
// Packages under one listed path share its rank; a new package must be
// placed here before it can be imported by anything.
var layers = map[string]int{
	// Process-wide runtime settings, below the leaves that change them,
	// and the name rules every layer checks names with.
	"platd/gcpace":            -1,
	"platd/server/validation": -1,
	// Leaves: they import nothing of ours but the settings above.
	"platd/config":        0,
	"platd/bolt":          0,
	"platd/codec":         0,
	"platd/health":        0,
	"platd/server/apierr": 0,
	"platd/server/pool":   0,
	// Calls the webhooks the API objects configure.
	"platd/server/webhookclient": 0,
	"platd/uuid":                 0,
	"platd/etcd/etcdtest":        0, // tests' embedded etcd
	// Small shared value types and the schema model.
	"platd/security":          1,
	"platd/security/encrypt":  1,
	"platd/server/schema":     1,
	"platd/bolt/storetest":    1,
	"platd/etcd":              1,
	"platd/server/schema/gen": 1,
	"platd/server/jsonpath":   1,
	// What is derived from schemas.
	"platd/server/registry":      2,
	"platd/security/rbac":        2,
	"platd/security/flowcontrol": 2,
	"platd/server/selector":      2,
	"platd/server/protobuf":      2,
	"platd/server/patch":         2,
	"platd/server/fieldmanager":  2,
	"platd/server/audit":         2,
	"platd/server/jsonschema":    2,
	// Validation rules of custom resource schemas.
	"platd/server/cel": 3,
	// ResourceQuota usage of every type's objects.
	"platd/server/quota": 3,
	// Printers, the documents derived from the registry, request info.
	"platd/server/printers":   3,
	"platd/server/request":    3,
	"platd/server/rbacpolicy": 3,
	"platd/server/discovery":  3,
	"platd/server/openapi":    3,
	// The filters, which act on request info.
	"platd/server/filters": 4,
	// The admission policies, enforced by the verbs.
	"platd/server/admission": 4,
	"platd/server/metrics":   4,
	// The proxy to extension API servers.
	"platd/server/aggregator": 4,
	// The built-in types (with their printers) and the verbs.
	"platd/server/builtin": 5,
	"platd/server/rest":    5,
	// Custom resource types, built from CRDs at run time.
	"platd/server/customresource": 5,
	"platd/server/controllers":    6,
	// Assembly, and the command that wires it.
	"platd/server": 7,
	"platd":        8,
}

// forbiddenModules are the upstream libraries the product never imports:
// it implements the API itself. (Test modules under testdata/ may.)
func forbiddenModules() []string {
	up := config.UpstreamDomain()
	return []string{up + "/apimachinery", up + "/apiserver", up + "/api", up + "/client-go"}
}

func rank(t *testing.T, pkg string) int {
	t.Helper()
	r, ok := layers[pkg]
	if !ok {
		t.Errorf("package %s has no layer: add it to layers", pkg)
	}
	return r
}

// TestImportsPointDownward checks every package's imports of this module
// against the layers.
func TestImportsPointDownward(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		for _, dep := range p.Deps {
			for _, bad := range forbiddenModules() {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					t.Errorf("%s depends on %s: the product does not use the upstream API machinery", p.ImportPath, dep)
				}
			}
		}
		own := rank(t, p.ImportPath)
		for _, imp := range p.Imports {
			if imp != "platd" && !strings.HasPrefix(imp, "platd/") {
				continue
			}
			if r := rank(t, imp); r >= own {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point downward", p.ImportPath, own, imp, r)
			}
		}
	}
	if seen < len(layers)-1 {
		t.Errorf("go list saw %d packages, fewer than the layers name", seen)
	}
}

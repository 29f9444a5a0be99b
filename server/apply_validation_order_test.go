package server_test

import (
	"strings"
	"testing"
)

// TestApplyFieldValidationAfterMerge checks that duplicate fields in an
// apply body count only once the configuration merges, as upstream: a
// conflict is reported first, and a warning comes only with a merge.
func TestApplyFieldValidationAfterMerge(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps/"
	e.do("PATCH", base+"vorder?fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vorder\ndata:\n  k: v\n", "Content-Type", applyCT).mustCode(t, 201)
	dup := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vorder\ndata:\n  k: w\n  k: x\n"
	cases := []struct {
		name, query string
		code        int
		message     string
		warnings    string
	}{
		{"strict, conflicting", "fieldManager=b&fieldValidation=Strict", 409,
			`Apply failed with 1 conflict: conflict with "a": .data.k`, ""},
		{"warn, conflicting", "fieldManager=b&fieldValidation=Warn", 409,
			`Apply failed with 1 conflict: conflict with "a": .data.k`, ""},
		{"strict, merging", "fieldManager=a&fieldValidation=Strict&dryRun=All", 400,
			"error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"k\" already set in map", ""},
		{"warn, merging", "fieldManager=a&fieldValidation=Warn&dryRun=All", 200, "",
			`299 - "line 7: key \"k\" already set in map"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("PATCH", base+"vorder?"+c.query, dup, "Content-Type", applyCT).mustCode(t, c.code)
			if c.message != "" {
				r.mustMessage(t, c.message)
			}
			if got := strings.Join(r.header.Values("Warning"), "|"); got != c.warnings {
				t.Errorf("warnings %q, want %q", got, c.warnings)
			}
		})
	}
}

// TestApplyForceValues checks that force reads as upstream reads a
// boolean query parameter: only "0" and "false" are false.
func TestApplyForceValues(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps/"
	e.do("PATCH", base+"vforce?fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vforce\ndata:\n  k: v\n", "Content-Type", applyCT).mustCode(t, 201)
	for _, c := range []struct {
		force string
		code  int
	}{
		{"false", 409}, {"FALSE", 409}, {"0", 409},
		{"true", 200}, {"maybe", 200}, {"", 200}, {"no", 200},
	} {
		e.do("PATCH", base+"vforce?fieldManager=b&dryRun=All&force="+c.force, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vforce\ndata:\n  k: w\n",
			"Content-Type", applyCT).mustCode(t, c.code)
	}
}

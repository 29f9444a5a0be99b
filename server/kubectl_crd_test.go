//go:build linux

package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"platd/config"
)

// kubectlCRD is a CRD of group's widgets: a status and a scale
// subresource, printer columns (Color only in the wide output), a
// described and defaulted spec.
func kubectlCRD(brand config.Brand, group string) string {
	return `apiVersion: ` + brand.Group("apiextensions") + `/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.` + group + `
spec:
  group: ` + group + `
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: What the widget should be.
            properties:
              size: {type: integer, description: How many parts.}
              color: {type: string, default: grey}
              tags: {type: array, items: {type: string}}
              replicas: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
              replicas: {type: integer}
`
}

// kubectlCR is a Widget of group in namespace ns.
func kubectlCR(group, ns, name string) string {
	return fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  size: 3\n", group, name, ns)
}

// printedRows splits kubectl's table output into rows of cells keyed by
// column header, cutting each line at the columns' start offsets (so an
// empty cell reads "").
func printedRows(t *testing.T, out string) []map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var heads []string
	var starts []int
	for _, m := range regexp.MustCompile(`\S+`).FindAllStringIndex(lines[0], -1) {
		heads, starts = append(heads, lines[0][m[0]:m[1]]), append(starts, m[0])
	}
	var rows []map[string]string
	for _, line := range lines[1:] {
		row := map[string]string{}
		for i, h := range heads {
			end := len(line)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(line))
			}
			if starts[i] < end {
				row[h] = strings.TrimSpace(line[starts[i]:end])
			} else {
				row[h] = ""
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// checkTable checks kubectl's table output: its headers in order, then
// each row's cells (an "age" cell is matched as a duration).
func checkTable(t *testing.T, what, out string, heads []string, rows ...map[string]string) {
	t.Helper()
	first, _, _ := strings.Cut(out, "\n")
	if got := strings.Fields(first); strings.Join(got, " ") != strings.Join(heads, " ") {
		t.Errorf("%s: headers %q, want %q\n%s", what, got, heads, out)
		return
	}
	got := printedRows(t, out)
	if len(got) != len(rows) {
		t.Errorf("%s: %d rows, want %d\n%s", what, len(got), len(rows), out)
		return
	}
	age := regexp.MustCompile(`^[0-9]+s$`)
	for i, want := range rows {
		for h, cell := range want {
			if cell == "age" && age.MatchString(got[i][h]) {
				continue
			}
			if got[i][h] != cell {
				t.Errorf("%s: row %d %s = %q, want %q\n%s", what, i, h, got[i][h], cell, out)
			}
		}
	}
}

// TestKubectlCustomResources drives kubectl through a CRD's life: apply
// it and, in the very next command, a custom resource of it; print the
// printer columns; explain the schema; merge patch, edit, scale and write
// status; refuse the strategic merge patch kubectl sends by default; and
// delete the CRD. The server is its own: the CRDs change discovery, which
// other kubectl tests compare with upstream's.
func TestKubectlCustomResources(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	// crd is how kubectl names the CRD resource.
	crd := "customresourcedefinition." + k.brand.Group("apiextensions")

	t.Run("lifecycle", func(t *testing.T) {
		t.Parallel()
		const group = "kc.example.com"
		ns := k.namespace(t, "kc-crd")
		// Two invocations: a single `apply -f` of a manifest holding both
		// the CRD and a custom resource fails against every API server,
		// because kubectl maps every object to a resource before it sends
		// any (see the one-manifest subtest). The second command comes
		// straight after the first returns, with no wait or retry.
		if out := k.must(t, "apply", "-f", manifest(t, kubectlCRD(k.brand, group))); out != crd+"/widgets."+group+" created\n" {
			t.Errorf("apply CRD printed %q", out)
		}
		if out := k.must(t, "apply", "-f", manifest(t, kubectlCR(group, ns, "w1"))); out != "widget."+group+"/w1 created\n" {
			t.Errorf("apply CR printed %q", out)
		}
		p := "/apis/" + group + "/v1/namespaces/" + ns + "/widgets/w1"
		if o := k.object(t, p); path(o, "spec.size") != 3.0 || path(o, "spec.color") != "grey" || path(o, "metadata.generation") != 1.0 {
			t.Errorf("applied custom resource: %v", o)
		}
		if out := k.must(t, "wait", "--for=condition=Established", "crd/widgets."+group, "--timeout=5s"); out != crd+"/widgets."+group+" condition met\n" {
			t.Errorf("wait printed %q", out)
		}

		// Printer columns: Color has priority 1, so only -o wide shows it.
		checkTable(t, "get widgets", k.must(t, "get", "widgets", "-n", ns), []string{"NAME", "SIZE", "PHASE", "AGE"},
			map[string]string{"NAME": "w1", "SIZE": "3", "PHASE": "", "AGE": "age"})
		if out := k.must(t, "patch", "widget", "w1", "-n", ns, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Ready"}}`); out != "widget."+group+"/w1 patched\n" {
			t.Errorf("status patch printed %q", out)
		}
		checkTable(t, "get wdg -o wide", k.must(t, "get", "wdg", "w1", "-n", ns, "-o", "wide"), []string{"NAME", "SIZE", "COLOR", "PHASE", "AGE"},
			map[string]string{"NAME": "w1", "SIZE": "3", "COLOR": "grey", "PHASE": "Ready", "AGE": "age"})

		out := k.must(t, "explain", "widgets.spec")
		for _, want := range []string{"GROUP:      " + group + "\n", "KIND:       Widget\n", "VERSION:    v1\n", "FIELD: spec <Object>\n",
			"What the widget should be.", "size\t<integer>\n    How many parts.", "color\t<string>", "tags\t<[]string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain widgets.spec lacks %q:\n%s", want, out)
			}
		}
		if out := k.must(t, "explain", "widget.spec.size"); !strings.Contains(out, "FIELD: size <integer>\n") {
			t.Errorf("explain widget.spec.size:\n%s", out)
		}

		// Merge patch; kubectl's default strategic merge patch is refused
		// as upstream refuses it for custom resources.
		if out := k.must(t, "patch", "widget", "w1", "-n", ns, "--type=merge", "-p", `{"spec":{"size":5}}`); out != "widget."+group+"/w1 patched\n" {
			t.Errorf("merge patch printed %q", out)
		}
		if o := k.object(t, p); path(o, "spec.size") != 5.0 || path(o, "metadata.generation") != 2.0 || path(o, "status.phase") != "Ready" {
			t.Errorf("after the merge patch: %v", o)
		}
		_, errOut, err := k.run(t, "patch", "widget", "w1", "-n", ns, "-p", `{"spec":{"size":6}}`)
		want := "error: application/strategic-merge-patch+json is not supported by " + group + "/v1, Kind=Widget: " +
			"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml\n"
		if err == nil || errOut != want {
			t.Errorf("strategic patch: %v, stderr %q, want %q", err, errOut, want)
		}

		// kubectl edit sends a merge patch of what the editor changed.
		editor := filepath.Join(t.TempDir(), "editor")
		if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/^  size: 5$/  size: 7/' \"$1\"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		if out, errOut, err := k.runEnv(t, []string{"KUBE_EDITOR=" + editor}, "edit", "widget", "w1", "-n", ns); err != nil || out != "widget."+group+"/w1 edited\n" {
			t.Errorf("edit: %v, stdout %q, stderr %q", err, out, errOut)
		}
		if out := k.must(t, "scale", "widget", "w1", "-n", ns, "--replicas=2"); out != "widget."+group+"/w1 scaled\n" {
			t.Errorf("scale printed %q", out)
		}
		if o := k.object(t, p); path(o, "spec.size") != 7.0 || path(o, "spec.replicas") != 2.0 || path(o, "metadata.generation") != 4.0 {
			t.Errorf("after edit and scale: %v", o)
		}

		// delete waits for the CRD to go; its resource goes with it.
		if out := k.must(t, "delete", "crd", "widgets."+group); out != crd+` "widgets.`+group+`" deleted`+"\n" {
			t.Errorf("delete crd printed %q", out)
		}
		if code, _ := k.apiGet(t, "/apis/"+k.brand.Group("apiextensions")+"/v1/customresourcedefinitions/widgets."+group); code != http.StatusNotFound {
			t.Errorf("CRD after kubectl delete: status %d", code)
		}
		if out := k.must(t, "api-resources", "--api-group="+group, "-o", "name"); out != "" {
			t.Errorf("api-resources of the deleted CRD's group: %q", out)
		}
		if _, errOut, err := k.run(t, "get", "widgets."+group, "-n", ns); err == nil || errOut != `error: the server doesn't have a resource type "widgets"`+"\n" {
			t.Errorf("get widgets after the CRD is gone: %v, stderr %q", err, errOut)
		}
	})

	// A manifest of both a CRD and a custom resource of it fails the first
	// time, as against upstream: kubectl maps every object before sending
	// any, and the custom resource's kind is not served yet. The CRD is
	// applied regardless, so applying the manifest again succeeds.
	t.Run("one-manifest", func(t *testing.T) {
		t.Parallel()
		const group = "one.example.com"
		ns := k.namespace(t, "kc-crd-one")
		f := manifest(t, kubectlCRD(k.brand, group)+"---\n"+kubectlCR(group, ns, "w1"))
		out, errOut, err := k.run(t, "apply", "-f", f)
		if err == nil || out != crd+"/widgets."+group+" created\n" ||
			!strings.Contains(errOut, `no matches for kind "Widget" in version "`+group+`/v1"`) {
			t.Errorf("apply of both: %v, stdout %q, stderr %q", err, out, errOut)
		}
		out = k.must(t, "apply", "-f", f)
		if out != crd+"/widgets."+group+" unchanged\nwidget."+group+"/w1 created\n" {
			t.Errorf("second apply of both printed %q", out)
		}
	})
}

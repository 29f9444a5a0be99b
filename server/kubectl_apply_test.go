//go:build linux

package server_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestKubectlApply drives kubectl's apply against the real binary:
// server-side apply (create, update, field removal, conflicts and
// forcing, dry runs and diff, subresources), the migration from
// client-side apply, multi-document manifests and the managers kubectl's
// other commands record. The scenarios are independent (each in its own
// namespace) and run in parallel against one server.
func TestKubectlApply(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)

	t.Run("configmap", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-cm")
		v1 := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels:\n    app: cfg\ndata:\n  a: \"1\"\n  b: \"2\"\n")
		if out := k.must(t, "apply", "--server-side", "-f", v1, "-n", ns); out != "configmap/cfg serverside-applied\n" {
			t.Errorf("apply printed %q", out)
		}
		p := "/api/v1/namespaces/" + ns + "/configmaps/cfg"
		created := k.object(t, p)
		if got := dataOf(created); got != `{"a":"1","b":"2"}` {
			t.Errorf("data after create: %s", got)
		}
		mustOwn(t, created, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}},"manager":"kubectl","operation":"Apply"}]`)

		// The same configuration again changes nothing, not even the
		// entry's time: nothing is written.
		k.must(t, "apply", "--server-side", "-f", v1, "-n", ns)
		if again := k.object(t, p); path(again, "metadata.resourceVersion") != path(created, "metadata.resourceVersion") {
			t.Errorf("a repeated apply wrote: resourceVersion %v, was %v; managedFields %s", path(again, "metadata.resourceVersion"), path(created, "metadata.resourceVersion"), ownership(t, again))
		}

		// b left the configuration and nobody else owns it: it is gone.
		v2 := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels:\n    app: cfg\ndata:\n  a: \"10\"\n")
		if out := k.must(t, "apply", "--server-side", "-f", v2, "-n", ns); out != "configmap/cfg serverside-applied\n" {
			t.Errorf("apply printed %q", out)
		}
		updated := k.object(t, p)
		if got := dataOf(updated); got != `{"a":"10"}` {
			t.Errorf("data after update: %s", got)
		}
		mustOwn(t, updated, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:app":{}}}},"manager":"kubectl","operation":"Apply"}]`)
		if path(updated, "metadata.uid") != path(created, "metadata.uid") {
			t.Errorf("the update replaced the object")
		}
	})

	t.Run("deployment", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-deploy")
		const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
		const pod = "  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: nginx\n"
		v1 := manifest(t, head+"  replicas: 3\n  minReadySeconds: 5\n"+pod+"        image: nginx:1.27\n        env:\n        - {name: A, value: \"1\"}\n        - {name: B, value: \"2\"}\n")
		v2 := manifest(t, head+pod+"        image: nginx:1.28\n        env:\n        - {name: A, value: \"1\"}\n")
		if out := k.must(t, "apply", "--server-side", "-f", v1, "-n", ns); out != "deployment.apps/web serverside-applied\n" {
			t.Errorf("apply printed %q", out)
		}
		p := "/apis/apps/v1/namespaces/" + ns + "/deployments/web"
		created := k.object(t, p)
		if path(created, "spec.replicas") != float64(3) || path(created, "spec.minReadySeconds") != float64(5) || path(created, "spec.strategy.type") != "RollingUpdate" {
			t.Errorf("created spec: %v", created["spec"])
		}
		// The selector is atomic, containers and env are keyed by name;
		// the defaults the server filled in belong to nobody.
		mustOwn(t, created, `[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:minReadySeconds":{},"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:env":{"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"B\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{}}}}}}},"manager":"kubectl","operation":"Apply"}]`)

		// Fields that left the configuration are removed, or reset to
		// their default (replicas).
		k.must(t, "apply", "--server-side", "-f", v2, "-n", ns)
		updated := k.object(t, p)
		c, _ := path(updated, "spec.template.spec.containers").([]any)
		if len(c) != 1 || c[0].(map[string]any)["image"] != "nginx:1.28" {
			t.Fatalf("containers after update: %v", c)
		}
		if env := mustJSON(t, c[0].(map[string]any)["env"]); env != `[{"name":"A","value":"1"}]` {
			t.Errorf("env after update: %s", env)
		}
		if path(updated, "spec.replicas") != float64(1) || path(updated, "spec.minReadySeconds") != nil {
			t.Errorf("after update: replicas %v (want the default 1), minReadySeconds %v (want none)", path(updated, "spec.replicas"), path(updated, "spec.minReadySeconds"))
		}
		if path(updated, "metadata.generation") != float64(2) {
			t.Errorf("generation after update: %v", path(updated, "metadata.generation"))
		}
		applied := `{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:env":{"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{}}}}}}},"manager":"kubectl","operation":"Apply"}`
		mustOwn(t, updated, `[`+applied+`]`)

		// kubectl scale writes through the scale subresource as
		// "kubectl"; the replicas it set conflict with a later apply.
		k.must(t, "scale", "deployment/web", "--replicas=4", "-n", ns)
		scaled := k.object(t, p)
		scaleEntry := `{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},"manager":"kubectl","operation":"Update","subresource":"scale"}`
		mustOwn(t, scaled, `[`+applied+`,`+scaleEntry+`]`)
		v3 := manifest(t, head+"  replicas: 2\n"+pod+"        image: nginx:1.28\n        env:\n        - {name: A, value: \"1\"}\n")
		_, errOut, err := k.run(t, "apply", "--server-side", "-f", v3, "-n", ns)
		if want := k.conflictError(`Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`); err == nil || errOut != want {
			t.Errorf("apply over kubectl scale: err %v, stderr:\n%s\nwant:\n%s", err, errOut, want)
		}
		if got := k.object(t, p); path(got, "metadata.resourceVersion") != path(scaled, "metadata.resourceVersion") {
			t.Errorf("a refused apply wrote the object")
		}

		// Status is applied through its subresource; the entry says so.
		status := manifest(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nstatus:\n  observedGeneration: 3\n  replicas: 4\n")
		if out := k.must(t, "apply", "--server-side", "--subresource=status", "--field-manager=rollout-ctl", "-f", status, "-n", ns); out != "deployment.apps/web serverside-applied\n" {
			t.Errorf("apply --subresource=status printed %q", out)
		}
		withStatus := k.object(t, p)
		if got := mustJSON(t, withStatus["status"]); got != `{"observedGeneration":3,"replicas":4}` {
			t.Errorf("status after apply: %s", got)
		}
		if path(withStatus, "spec.replicas") != float64(4) {
			t.Errorf("a status apply changed the spec: replicas %v", path(withStatus, "spec.replicas"))
		}
		mustOwn(t, withStatus, `[`+applied+`,{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:observedGeneration":{},"f:replicas":{}}},"manager":"rollout-ctl","operation":"Apply","subresource":"status"},`+scaleEntry+`]`)
	})

	t.Run("conflict", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-conflict")
		mine := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  labels:\n    app: shared\ndata:\n  a: \"1\"\n  b: \"2\"\n  c: \"3\"\n")
		theirs := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  a: other\n  b: other\n")
		k.must(t, "apply", "--server-side", "-f", mine, "-n", ns)
		p := "/api/v1/namespaces/" + ns + "/configmaps/shared"
		before := k.object(t, p)

		_, errOut, err := k.run(t, "apply", "--server-side", "--field-manager=other", "-f", theirs, "-n", ns)
		if want := k.conflictError("Apply failed with 2 conflicts: conflicts with \"kubectl\":\n- .data.a\n- .data.b"); err == nil || errOut != want {
			t.Errorf("apply as other: err %v, stderr:\n%s\nwant:\n%s", err, errOut, want)
		}
		if got := k.object(t, p); path(got, "metadata.resourceVersion") != path(before, "metadata.resourceVersion") {
			t.Errorf("a refused apply wrote the object")
		}

		if out := k.must(t, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", theirs, "-n", ns); out != "configmap/shared serverside-applied\n" {
			t.Errorf("forced apply printed %q", out)
		}
		taken := k.object(t, p)
		if got := dataOf(taken); got != `{"a":"other","b":"other","c":"3"}` {
			t.Errorf("data after other forced: %s", got)
		}
		mustOwn(t, taken, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:c":{}},"f:metadata":{"f:labels":{"f:app":{}}}},"manager":"kubectl","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}}},"manager":"other","operation":"Apply"}]`)

		_, errOut, err = k.run(t, "apply", "--server-side", "-f", mine, "-n", ns)
		if want := k.conflictError("Apply failed with 2 conflicts: conflicts with \"other\":\n- .data.a\n- .data.b"); err == nil || errOut != want {
			t.Errorf("apply back: err %v, stderr:\n%s\nwant:\n%s", err, errOut, want)
		}
		if got := k.object(t, p); dataOf(got) != dataOf(taken) {
			t.Errorf("a refused apply changed the data: %s", dataOf(got))
		}

		if out := k.must(t, "apply", "--server-side", "--force-conflicts", "-f", mine, "-n", ns); out != "configmap/shared serverside-applied\n" {
			t.Errorf("forced apply printed %q", out)
		}
		back := k.object(t, p)
		if got := dataOf(back); got != `{"a":"1","b":"2","c":"3"}` {
			t.Errorf("data after kubectl forced: %s", got)
		}
		// other owns nothing any more and its entry is gone.
		mustOwn(t, back, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{},"f:c":{}},"f:metadata":{"f:labels":{"f:app":{}}}},"manager":"kubectl","operation":"Apply"}]`)
	})

	t.Run("dry-run-and-diff", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-dry")
		v1 := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n  b: \"2\"\n")
		v2 := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"10\"\n")
		k.must(t, "apply", "--server-side", "-f", v1, "-n", ns)
		p := "/api/v1/namespaces/" + ns + "/configmaps/cfg"
		before := k.object(t, p)

		if out := k.must(t, "apply", "--server-side", "--dry-run=server", "-f", v2, "-n", ns); out != "configmap/cfg serverside-applied (server dry run)\n" {
			t.Errorf("dry-run apply printed %q", out)
		}
		if after := k.object(t, p); mustJSON(t, after) != mustJSON(t, before) {
			t.Errorf("a dry-run apply changed the object:\n%s\n%s", mustJSON(t, before), mustJSON(t, after))
		}
		fresh := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\ndata:\n  x: \"1\"\n")
		if out := k.must(t, "apply", "--server-side", "--dry-run=server", "-f", fresh, "-n", ns); out != "configmap/fresh serverside-applied (server dry run)\n" {
			t.Errorf("dry-run create printed %q", out)
		}
		if code, _ := k.apiGet(t, "/api/v1/namespaces/"+ns+"/configmaps/fresh"); code != http.StatusNotFound {
			t.Errorf("dry-run apply created the object: status %d", code)
		}

		// diff asks the server for the applied result (a dry run) and
		// exits 1 when it differs from the live object.
		out, errOut, err := k.run(t, "diff", "--server-side", "-f", v2, "-n", ns)
		if code := exitCode(err); code != 1 {
			t.Errorf("diff of a change: exit %d (%v), stderr %q", code, err, errOut)
		}
		if !strings.Contains(out, "\n data:\n-  a: \"1\"\n-  b: \"2\"\n+  a: \"10\"\n kind: ConfigMap\n") {
			t.Errorf("diff of a change:\n%s", out)
		}
		if strings.Contains(out, "managedFields") || strings.Contains(out, "resourceVersion") {
			t.Errorf("diff shows server bookkeeping:\n%s", out)
		}
		if after := k.object(t, p); mustJSON(t, after) != mustJSON(t, before) {
			t.Errorf("diff changed the object")
		}
		out, errOut, err = k.run(t, "diff", "--server-side", "-f", v1, "-n", ns)
		if err != nil || out != "" {
			t.Errorf("diff of no change: err %v, stdout %q, stderr %q", err, out, errOut)
		}
		// Without --server-side diff dry-runs a client-side apply, a
		// strategic merge patch: with no configuration recorded on the
		// object, b is not known to have left it.
		out, errOut, err = k.run(t, "diff", "-f", v2, "-n", ns)
		if code := exitCode(err); code != 1 {
			t.Errorf("client-side diff of a change: exit %d (%v), stderr %q", code, err, errOut)
		}
		if !strings.Contains(out, "\n data:\n-  a: \"1\"\n+  a: \"10\"\n   b: \"2\"\n kind: ConfigMap\n") {
			t.Errorf("client-side diff of a change:\n%s", out)
		}
	})

	t.Run("from-client-side-apply", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-csa")
		last := k.brand.LastAppliedAnnotation()
		v1 := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\n  labels:\n    app: csa\ndata:\n  a: \"1\"\n  b: \"2\"\n")
		if out := k.must(t, "apply", "-f", v1, "-n", ns); out != "configmap/csa created\n" {
			t.Errorf("client-side apply printed %q", out)
		}
		p := "/api/v1/namespaces/" + ns + "/configmaps/csa"
		created := k.object(t, p)
		annotations, _ := path(created, "metadata.annotations").(map[string]any)
		if want := `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"csa"},"name":"csa","namespace":"` + ns + `"}}` + "\n"; annotations[last] != want {
			t.Errorf("last-applied annotation %q, want %q", annotations[last], want)
		}
		mustOwn(t, created, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:annotations":{".":{},"f:`+last+`":{}},"f:labels":{".":{},"f:app":{}}}},"manager":"kubectl-client-side-apply","operation":"Update"}]`)
		if out, errOut, err := k.run(t, "diff", "-f", v1, "-n", ns); err != nil || out != "" {
			t.Errorf("diff of the applied file: err %v, stdout %q, stderr %q", err, out, errOut)
		}

		// a changes, b is dropped, c and a label are added: no conflict
		// with the client-side manager, whose fields kubectl takes over
		// as the annotation shows it set them.
		v2 := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\n  labels:\n    app: csa\n    stage: two\ndata:\n  a: \"10\"\n  c: \"3\"\n")
		out, errOut, err := k.run(t, "apply", "--server-side", "-f", v2, "-n", ns)
		if err != nil || out != "configmap/csa serverside-applied\n" {
			t.Fatalf("server-side apply over client-side apply: err %v, stdout %q, stderr %q", err, out, errOut)
		}
		migrated := k.object(t, p)
		if got := dataOf(migrated); got != `{"a":"10","c":"3"}` {
			t.Errorf("data after migration: %s", got)
		}
		if got := mustJSON(t, path(migrated, "metadata.labels")); got != `{"app":"csa","stage":"two"}` {
			t.Errorf("labels after migration: %s", got)
		}
		annotations, _ = path(migrated, "metadata.annotations").(map[string]any)
		if want := `{"apiVersion":"v1","data":{"a":"10","c":"3"},"kind":"ConfigMap","metadata":{"labels":{"app":"csa","stage":"two"},"name":"csa","namespace":"` + ns + `"}}` + "\n"; annotations[last] != want {
			t.Errorf("last-applied annotation after migration %q, want %q", annotations[last], want)
		}
		// kubectl records the annotation as a manager of its own, then
		// re-applies; the two entries' order follows their times.
		mustOwnUnordered(t, migrated, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:c":{}},"f:metadata":{"f:labels":{"f:app":{},"f:stage":{}}}},"manager":"kubectl","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:`+last+`":{}}}},"manager":"kubectl-last-applied","operation":"Apply"}]`)
	})

	t.Run("multi-document", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-multi")
		m := manifest(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  mode: fast
---
apiVersion: v1
kind: Service
metadata:
  name: app
spec:
  selector: {app: app}
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
      - name: app
        image: nginx:1.27
`)
		const printed = "configmap/app serverside-applied\nservice/app serverside-applied\ndeployment.apps/app serverside-applied\n"
		if out := k.must(t, "apply", "--server-side", "-f", m, "-n", ns); out != printed {
			t.Errorf("apply printed %q", out)
		}
		cmo := k.object(t, "/api/v1/namespaces/"+ns+"/configmaps/app")
		mustOwn(t, cmo, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:mode":{}}},"manager":"kubectl","operation":"Apply"}]`)
		svc := k.object(t, "/api/v1/namespaces/"+ns+"/services/app")
		if ip, _ := path(svc, "spec.clusterIP").(string); ip == "" || path(svc, "spec.type") != "ClusterIP" {
			t.Errorf("service spec: %v", svc["spec"])
		}
		// Ports are keyed by port and protocol, the protocol defaulted.
		mustOwn(t, svc, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{},"f:targetPort":{}}},"f:selector":{}}},"manager":"kubectl","operation":"Apply"}]`)
		dep := k.object(t, "/apis/apps/v1/namespaces/"+ns+"/deployments/app")
		mustOwn(t, dep, `[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}}},"manager":"kubectl","operation":"Apply"}]`)

		// Applying the file again writes none of the three.
		if out := k.must(t, "apply", "--server-side", "-f", m, "-n", ns); out != printed {
			t.Errorf("second apply printed %q", out)
		}
		for p, was := range map[string]map[string]any{
			"/api/v1/namespaces/" + ns + "/configmaps/app":        cmo,
			"/api/v1/namespaces/" + ns + "/services/app":          svc,
			"/apis/apps/v1/namespaces/" + ns + "/deployments/app": dep,
		} {
			if got := k.object(t, p); path(got, "metadata.resourceVersion") != path(was, "metadata.resourceVersion") {
				t.Errorf("%s: a repeated apply wrote: resourceVersion %v, was %v", p, path(got, "metadata.resourceVersion"), path(was, "metadata.resourceVersion"))
			}
		}
	})

	t.Run("create-and-label", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-create")
		k.must(t, "create", "configmap", "made", "--from-literal=k=v", "-n", ns)
		if out := k.must(t, "label", "configmap", "made", "tier=web", "-n", ns); out != "configmap/made labeled\n" {
			t.Errorf("label printed %q", out)
		}
		var got map[string]any
		if err := yaml.Unmarshal([]byte(k.must(t, "get", "configmap", "made", "-o", "yaml", "--show-managed-fields", "-n", ns)), &got); err != nil {
			t.Fatal(err)
		}
		mustOwn(t, got, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}}},"manager":"kubectl-create","operation":"Update"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:tier":{}}}},"manager":"kubectl-label","operation":"Update"}]`)
		for _, e := range path(got, "metadata.managedFields").([]any) {
			if ts, _ := e.(map[string]any)["time"].(string); ts == "" {
				t.Errorf("entry without time: %v", e)
			}
		}
		// Without the flag kubectl hides them.
		if out := k.must(t, "get", "configmap", "made", "-o", "yaml", "-n", ns); strings.Contains(out, "managedFields") {
			t.Errorf("get -o yaml shows managedFields:\n%s", out)
		}

		// An apply that changes both managers' fields conflicts with each,
		// Update managers named with their version.
		m := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: made\n  labels:\n    tier: db\ndata:\n  k: w\n")
		_, errOut, err := k.run(t, "apply", "--server-side", "-f", m, "-n", ns)
		if want := k.conflictError("Apply failed with 2 conflicts: conflicts with \"kubectl-create\" using v1:\n- .data.k\nconflicts with \"kubectl-label\" using v1:\n- .metadata.labels.tier"); err == nil || errOut != want {
			t.Errorf("apply over create and label: err %v, stderr:\n%s\nwant:\n%s", err, errOut, want)
		}
	})

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-refused")
		// YAML reads an unquoted y as true; a ConfigMap's data holds
		// strings. A member the type does not have is refused too. kubectl
		// goes on with the next document and reports both.
		m := manifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\ndata:\n  x: y\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unknown\nspec:\n  x: \"1\"\n")
		out, errOut, err := k.run(t, "apply", "--server-side", "-f", m, "-n", ns)
		want := "Error from server: failed to create typed patch object (" + ns + "/typed; /v1, Kind=ConfigMap): .data.x: expected string, got &value.valueUnstructured{Value:true}\n" +
			"Error from server: failed to create typed patch object (" + ns + "/unknown; /v1, Kind=ConfigMap): .spec: field not declared in schema\n"
		if err == nil || out != "" || errOut != want {
			t.Errorf("apply of wrong fields: err %v, stdout %q, stderr:\n%s\nwant:\n%s", err, out, errOut, want)
		}
		for _, name := range []string{"typed", "unknown"} {
			if code, _ := k.apiGet(t, "/api/v1/namespaces/"+ns+"/configmaps/"+name); code != http.StatusNotFound {
				t.Errorf("refused apply created %s: status %d", name, code)
			}
		}
	})

	t.Run("run", func(t *testing.T) {
		t.Parallel()
		ns := k.namespace(t, "kc-apply-run")
		k.must(t, "run", "nginx", "--image=nginx", "-n", ns)
		pod := k.object(t, "/api/v1/namespaces/"+ns+"/pods/nginx")
		if path(pod, "spec.serviceAccountName") != "default" || path(pod, "spec.tolerations") == nil {
			t.Errorf("pod spec lacks what the server adds: %v", pod["spec"])
		}
		// As upstream stores it: what kubectl sent with its defaults; the
		// containers list itself (every pod has one) and what the server
		// adds as it admits the pod (service account, tolerations,
		// priority) belong to nobody.
		mustOwn(t, pod, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:run":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}},"manager":"kubectl-run","operation":"Update"}]`)
	})

	t.Run("create-namespace", func(t *testing.T) {
		t.Parallel()
		// The name label comes from defaulting and is the creator's; the
		// finalizer the server adds as it prepares the object is nobody's.
		k.must(t, "create", "namespace", "kc-apply-ns")
		nso := k.object(t, "/api/v1/namespaces/kc-apply-ns")
		mustOwn(t, nso, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:`+k.brand.Label("metadata.name")+`":{}}}},"manager":"kubectl-create","operation":"Update"}]`)
	})
}

// namespace creates namespace name through the API and returns it.
func (k *kubectlEnv) namespace(t *testing.T, name string) string {
	t.Helper()
	code, body, err := k.proc.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"`+name+`"}}`))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("creating namespace %s: %d %v %s", name, code, err, body)
	}
	return name
}

// object reads an object through the API and fails unless it exists.
func (k *kubectlEnv) object(t *testing.T, p string) map[string]any {
	t.Helper()
	code, o := k.apiGet(t, p)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %v", p, code, o)
	}
	return o
}

// conflictError is what kubectl prints on stderr when the server refuses
// its apply with a conflict whose message is msg.
func (k *kubectlEnv) conflictError(msg string) string {
	return "error: " + msg + `
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the ` + "`--force-conflicts`" + ` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://` + k.brand.LongDomain + "/docs/reference/using-api/server-side-apply/#conflicts\n"
}

// mustOwnUnordered is mustOwn for entries whose order depends on the
// clock: want lists them by manager name.
func mustOwnUnordered(t *testing.T, obj map[string]any, want string) {
	t.Helper()
	mf, _ := path(obj, "metadata.managedFields").([]any)
	sorted := slices.Clone(mf)
	slices.SortStableFunc(sorted, func(a, b any) int {
		return strings.Compare(fmt.Sprint(a.(map[string]any)["manager"]), fmt.Sprint(b.(map[string]any)["manager"]))
	})
	mustOwn(t, map[string]any{"metadata": map[string]any{"managedFields": sorted}}, want)
}

// manifest writes text to a new file and returns its path.
func manifest(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// exitCode is a finished command's exit status (0 for no error, -1 when
// it did not run).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

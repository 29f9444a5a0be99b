//go:build linux

package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKubectlRBACSchedulingAPIService drives the rbac, scheduling and
// apiregistration groups with kubectl's own generators and printers.
func TestKubectlRBACSchedulingAPIService(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	rbac := k.brand.Group("rbac.authorization")

	t.Run("rbac", func(t *testing.T) {
		t.Parallel()
		if out := k.must(t, "create", "clusterrole", "r", "--verb=get", "--resource=pods"); out != "clusterrole."+rbac+"/r created\n" {
			t.Errorf("create clusterrole printed %q", out)
		}
		if out := k.must(t, "create", "rolebinding", "rb", "--clusterrole=r", "--user=u"); out != "rolebinding."+rbac+"/rb created\n" {
			t.Errorf("create rolebinding printed %q", out)
		}
		code, rb := k.apiGet(t, "/apis/"+rbac+"/v1/namespaces/default/rolebindings/rb")
		if code != http.StatusOK || at(rb, "roleRef", "kind") != "ClusterRole" || at(rb, "subjects", 0, "name") != "u" ||
			at(rb, "subjects", 0, "apiGroup") != rbac {
			t.Errorf("rolebinding %d: %v", code, rb)
		}
		code, cr := k.apiGet(t, "/apis/"+rbac+"/v1/clusterroles/r")
		if code != http.StatusOK || at(cr, "rules", 0, "resources", 0) != "pods" || at(cr, "rules", 0, "verbs", 0) != "get" {
			t.Errorf("clusterrole %d: %v", code, cr)
		}
		table := k.must(t, "get", "rolebinding", "rb")
		if !regexp.MustCompile(`^NAME\s+ROLE\s+AGE\n`).MatchString(table) || !strings.Contains(table, "ClusterRole/r") {
			t.Errorf("get rolebinding:\n%s", table)
		}
		// kubectl refuses what the server refuses.
		_, errOut, err := k.run(t, "create", "rolebinding", "bad", "--clusterrole=r", "--serviceaccount=default:Bad_Name")
		if err == nil || !strings.Contains(errOut, `subjects[0].name: Invalid value: "Bad_Name"`) {
			t.Errorf("bad subject: %v %s", err, errOut)
		}
	})

	t.Run("priorityclasses", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "priorityclass", "high", "--value=1000", "--description=d")
		table := k.must(t, "get", "pc", "high")
		if !regexp.MustCompile(`^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY\nhigh\s+1000\s+false\s+\S+\s+PreemptLowerPriority\n$`).MatchString(table) {
			t.Errorf("get pc:\n%s", table)
		}
	})

	t.Run("certificate approve", func(t *testing.T) {
		t.Parallel()
		req, _ := csrPEM(t)
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "node-csr"},
			"spec": map[string]any{"request": req, "signerName": "example.com/signer", "usages": []any{"client auth"}}})
		p := "/apis/" + k.brand.Group("certificates") + "/v1/certificatesigningrequests"
		if code, resp, err := k.proc.do(http.MethodPost, p, body); err != nil || code != http.StatusCreated {
			t.Fatalf("creating a CSR: %d %v %s", code, err, resp)
		}
		if out := k.must(t, "certificate", "approve", "node-csr"); !strings.Contains(out, "node-csr approved") {
			t.Errorf("certificate approve printed %q", out)
		}
		_, csr := k.apiGet(t, p+"/node-csr")
		if at(csr, "status", "conditions", 0, "type") != "Approved" || at(csr, "status", "conditions", 0, "status") != "True" ||
			at(csr, "status", "conditions", 0, "reason") != "KubectlApprove" {
			t.Errorf("approved CSR status: %v", csr["status"])
		}
		table := k.must(t, "get", "csr", "node-csr")
		if !regexp.MustCompile(`\nnode-csr\s+\S+\s+example\.com/signer\s+.*Approved\n`).MatchString(table) {
			t.Errorf("get csr:\n%s", table)
		}
		// An approved request is not denied after all.
		_, errOut, err := k.run(t, "certificate", "deny", "node-csr")
		if err == nil || !strings.Contains(errOut, `"node-csr" is already Approved`) {
			t.Errorf("deny after approve: %v %s", err, errOut)
		}
	})

	t.Run("apiservices", func(t *testing.T) {
		t.Parallel()
		// The server writes a local APIService per served group-version.
		table := k.must(t, "get", "apiservices")
		if !regexp.MustCompile(`^NAME\s+SERVICE\s+AVAILABLE\s+AGE\n`).MatchString(table) ||
			!regexp.MustCompile(`\nv1\.apps\s+Local\s+True\s+\S+\n`).MatchString(table) ||
			!regexp.MustCompile(`\nv1\.\s+Local\s+True\s+\S+\n`).MatchString(table) {
			t.Errorf("get apiservices:\n%s", table)
		}
		// One that names a service shows why it is not available, as
		// upstream's aggregator writes it.
		f := filepath.Join(t.TempDir(), "apiservice.yaml")
		if err := os.WriteFile(f, []byte(`apiVersion: `+k.brand.Group("apiregistration")+`/v1
kind: APIService
metadata: {name: v1beta1.metrics.example.com}
spec:
  group: metrics.example.com
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: metrics-server, namespace: default}
`), 0o600); err != nil {
			t.Fatal(err)
		}
		k.must(t, "create", "-f", f)
		row := regexp.MustCompile(`(?m)^v1beta1\.metrics\.example\.com\s+default/metrics-server\s+False \(ServiceNotFound\)\s+\S+$`)
		eventually(t, "the APIService unavailable", func() bool {
			table = k.must(t, "get", "apiservice", "v1beta1.metrics.example.com")
			return row.MatchString(table)
		})
	})
}

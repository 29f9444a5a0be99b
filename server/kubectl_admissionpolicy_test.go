package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubectlAdmissionPolicy applies a policy with kubectl and checks
// what kubectl prints for a deployment it denies (upstream's documented
// output) and for one a Warn binding warns of.
func TestKubectlAdmissionPolicy(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	dir := t.TempDir()
	file := func(name string, obj map[string]any) string {
		t.Helper()
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	av := k.brand.Group("admissionregistration") + "/v1"
	policy := func(name, expr string) string {
		return file(name, map[string]any{"apiVersion": av, "kind": "ValidatingAdmissionPolicy", "metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
					"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments"}}}},
				"validations": []any{map[string]any{"expression": expr}},
			}})
	}
	binding := func(name, action string) string {
		return file(name+"-binding", map[string]any{"apiVersion": av, "kind": "ValidatingAdmissionPolicyBinding", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"policyName": name, "validationActions": []any{action}}})
	}
	k.must(t, "apply", "-f", policy("replicas", "object.spec.replicas <= 5"), "-f", binding("replicas", "Deny"))
	k.must(t, "apply", "-f", policy("labelled", "has(object.metadata.labels) && 'team' in object.metadata.labels"), "-f", binding("labelled", "Warn"))
	six := file("web", deployment("web", 6))
	const denied = `The deployments "web" is invalid: : ValidatingAdmissionPolicy 'replicas' with binding 'replicas' denied request: failed expression: object.spec.replicas <= 5`
	const warned = `Warning: Validation failed for ValidatingAdmissionPolicy 'labelled' with binding 'labelled': failed expression: has(object.metadata.labels) && 'team' in object.metadata.labels`
	// Server-side dry runs wait for both bindings, so that no deployment
	// is stored while only one of them is in effect.
	eventually(t, "kubectl to be denied and warned", func() bool {
		_, errOut, _ := k.run(t, "apply", "--dry-run=server", "-f", six)
		return strings.Contains(errOut, denied) && strings.Contains(errOut, warned)
	})
	_, errOut, _ := k.run(t, "apply", "-f", six)
	if !strings.Contains(errOut, denied) || !strings.Contains(errOut, warned) {
		t.Errorf("kubectl printed %q, want the refusal %q and the warning %q", errOut, denied, warned)
	}
	out, errOut, err := k.run(t, "apply", "-f", file("web5", deployment("web", 5)))
	if err != nil || !strings.Contains(out, "deployment.apps/web created") || !strings.Contains(errOut, warned) {
		t.Errorf("within the limit: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}

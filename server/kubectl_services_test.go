//go:build linux

package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKubectlServices drives kubectl's service commands: create service,
// get svc columns, expose of a pod and a deployment, and the API's own
// service.
func TestKubectlServices(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	k.must(t, "create", "namespace", "kc-svc")

	if out := k.must(t, "create", "service", "clusterip", "my", "--tcp=80:8080", "-n", "kc-svc"); !strings.Contains(out, "service/my created") {
		t.Fatalf("create service printed %q", out)
	}
	code, obj := k.apiGet(t, "/api/v1/namespaces/kc-svc/services/my")
	if code != 200 || path(obj, "spec.type") != "ClusterIP" || path(obj, "metadata.labels.app") != "my" ||
		path(obj, "spec.selector.app") != "my" {
		t.Fatalf("created service: %d %v", code, obj)
	}
	p := obj["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	if p["name"] != "80-8080" || p["port"] != float64(80) || p["targetPort"] != float64(8080) || p["protocol"] != "TCP" {
		t.Errorf("created port %v", p)
	}
	ip := path(obj, "spec.clusterIP").(string)

	out := k.must(t, "get", "svc", "-n", "kc-svc")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$`).MatchString(lines[0]) {
		t.Fatalf("get svc printed %q", out)
	}
	if !regexp.MustCompile(`^my\s+ClusterIP\s+` + regexp.QuoteMeta(ip) + `\s+<none>\s+80/TCP\s+\d+s$`).MatchString(lines[1]) {
		t.Errorf("get svc row %q", lines[1])
	}

	// Services are in the "all" category.
	if out := k.must(t, "get", "all", "-n", "kc-svc", "-o", "name"); !strings.Contains(out, "service/my\n") {
		t.Errorf("get all printed %q", out)
	}
	out = k.must(t, "get", "svc", k.brand.APIServiceName, "-n", "default")
	if !regexp.MustCompile(`(?m)^` + k.brand.APIServiceName + `\s+ClusterIP\s+10\.0\.0\.1\s+<none>\s+443/TCP\s+`).MatchString(out) {
		t.Errorf("get svc %s printed %q", k.brand.APIServiceName, out)
	}
	out = k.must(t, "get", "endpoints", k.brand.APIServiceName, "-n", "default")
	if !regexp.MustCompile(`(?m)^` + k.brand.APIServiceName + `\s+[0-9.]+:\d+\s+`).MatchString(out) {
		t.Errorf("get endpoints printed %q", out)
	}

	// expose builds a service from a pod's labels and ports.
	k.must(t, "run", "web", "--image=nginx:1.27", "--port=80", "--labels=app=web", "-n", "kc-svc")
	if out := k.must(t, "expose", "pod", "web", "--port=8080", "--target-port=80", "--type=NodePort", "-n", "kc-svc"); !strings.Contains(out, "service/web exposed") {
		t.Fatalf("expose printed %q", out)
	}
	code, obj = k.apiGet(t, "/api/v1/namespaces/kc-svc/services/web")
	p = obj["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	if code != 200 || path(obj, "spec.type") != "NodePort" || path(obj, "spec.selector.app") != "web" ||
		p["port"] != float64(8080) || p["targetPort"] != float64(80) {
		t.Fatalf("exposed service: %d %v", code, obj)
	}
	if n, _ := p["nodePort"].(float64); n < 30000 || n > 32767 {
		t.Errorf("exposed nodePort %v", p["nodePort"])
	}
	out = k.must(t, "get", "svc", "web", "-n", "kc-svc")
	if !regexp.MustCompile(`(?m)^web\s+NodePort\s+[0-9.]+\s+<none>\s+8080:\d+/TCP\s+`).MatchString(out) {
		t.Errorf("get svc web printed %q", out)
	}
	// expose a deployment: its selector becomes the service's.
	k.must(t, "create", "deployment", "api", "--image=nginx:1.27", "--port=8080", "-n", "kc-svc")
	if out := k.must(t, "expose", "deployment", "api", "--port=80", "--target-port=8080", "-n", "kc-svc"); !strings.Contains(out, "service/api exposed") {
		t.Fatalf("expose deployment printed %q", out)
	}
	code, obj = k.apiGet(t, "/api/v1/namespaces/kc-svc/services/api")
	p = obj["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	if code != 200 || path(obj, "spec.type") != "ClusterIP" || path(obj, "spec.selector.app") != "api" || p["port"] != float64(80) || p["targetPort"] != float64(8080) {
		t.Fatalf("exposed deployment: %d %v", code, obj)
	}
	// apply twice is unchanged; a changed port is configured and keeps
	// the allocated values.
	manifest := filepath.Join(t.TempDir(), "svc.yaml")
	write := func(port int) {
		y := fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: applied\n  namespace: kc-svc\nspec:\n  type: NodePort\n  selector:\n    app: web\n  ports:\n  - name: http\n    port: %d\n", port)
		if err := os.WriteFile(manifest, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(80)
	for i, want := range []string{"service/applied created", "service/applied unchanged"} {
		if out := k.must(t, "apply", "-f", manifest); !strings.Contains(out, want) {
			t.Fatalf("apply %d printed %q", i, out)
		}
	}
	_, before := k.apiGet(t, "/api/v1/namespaces/kc-svc/services/applied")
	write(81)
	if out := k.must(t, "apply", "-f", manifest); !strings.Contains(out, "service/applied configured") {
		t.Fatalf("apply changed printed %q", out)
	}
	_, after := k.apiGet(t, "/api/v1/namespaces/kc-svc/services/applied")
	if path(after, "spec.clusterIP") != path(before, "spec.clusterIP") || fmt.Sprint(path(after, "spec.ports")) == fmt.Sprint(path(before, "spec.ports")) {
		t.Errorf("apply changed the port: before %v after %v", before["spec"], after["spec"])
	}
	if n := after["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"]; n != before["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"] {
		t.Errorf("apply of a port by name kept no node port: %v", after["spec"])
	}
	if out := k.must(t, "delete", "svc", "my", "web", "-n", "kc-svc"); !strings.Contains(out, `service "my" deleted`) {
		t.Errorf("delete printed %q", out)
	}
}

//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"platd/config"
)

// platd serve --admission-control-config-file reads the PodSecurity
// configuration inline: its default enforce level refuses a pod in a
// namespace without labels, and its exempt namespace admits anything.
func TestPodSecurityConfigFileFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "admission.yaml")
	body := "apiVersion: " + config.AdmissionConfigAPIVersions(platBrand)[1] + "\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n" +
		"    apiVersion: " + config.PodSecurityConfigAPIVersions(platBrand)[1] + "\n    kind: PodSecurityConfiguration\n" +
		"    defaults: {enforce: restricted}\n    exemptions: {namespaces: [tools]}\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startPlatd(t, filepath.Join(dir, "data"), "--admission-control-config-file", file)
	send := func(path, body string, want int) string {
		t.Helper()
		code, out, err := p.do("POST", path, []byte(body), "Content-Type", "application/json")
		if err != nil || code != want {
			t.Fatalf("POST %s: %d %s %v, want %d", path, code, out, err, want)
		}
		return string(out)
	}
	for _, ns := range []string{"open", "tools"} {
		send("/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`, 201)
	}
	pod := `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox","securityContext":{"privileged":true}}]}}`
	out := send("/api/v1/namespaces/open/pods", pod, 403)
	if want := `pods \"p\" is forbidden: violates PodSecurity \"restricted:latest\": privileged`; !strings.Contains(out, want) {
		t.Errorf("refusal %s, want %s", out, want)
	}
	send("/api/v1/namespaces/tools/pods", pod, 201)
}

package server_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"platd/config"
)

// In the plat brand kubectl is told, on discovery and on errors, to start
// platd with the brand it speaks; nobody else is.
func TestKubectlHint(t *testing.T) {
	t.Parallel()
	want := `299 - "` + platBrand.KubectlHint + `"`
	e := start(t)
	const kubectl = "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"
	for _, c := range []struct {
		path, agent string
		code        int
		hint        bool
	}{
		{"/api", kubectl, 200, true},
		{"/apis", kubectl, 200, true},
		{"/api/v1/namespaces/default/configmaps/nope", kubectl, 404, true},
		{"/api/v1/namespaces/default", kubectl, 200, false},
		{"/api", "platd-test/1.0", 200, false},
		{"/api/v1/namespaces/default/configmaps/nope", "curl/8.0", 404, false},
	} {
		r := e.do("GET", c.path, nil, "User-Agent", c.agent).mustCode(t, c.code)
		if got := r.header.Values("Warning"); c.hint != (len(got) == 1 && got[0] == want) || len(got) > 1 {
			t.Errorf("%s as %q: Warning %q, want hint %v", c.path, c.agent, got, c.hint)
		}
	}
	// A write kubectl encodes in its brand's protobuf is refused: the
	// refusal carries the hint.
	r := e.do("POST", "/api/v1/namespaces/default/configmaps", "x", "User-Agent", kubectl, "Content-Type", config.Brands["kubernetes"].ProtobufMediaType).mustCode(t, 415)
	if got := r.header.Get("Warning"); got != want {
		t.Errorf("415: Warning %q", got)
	}

	k := start(t, withBrand("kubernetes"))
	r = k.do("GET", "/api/v1/namespaces/default/configmaps/nope", nil, "User-Agent", kubectl).mustCode(t, 404)
	if got := r.header.Values("Warning"); len(got) != 0 {
		t.Errorf("kubernetes brand: Warning %q", got)
	}
}

// kubectl itself prints the hint with its failure.
func TestKubectlHintShown(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	e := start(t)
	cmd := exec.Command(bin, "create", "configmap", "c1", "--from-literal=a=b", "-n", "default")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.srv.KubeconfigPath(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Warning: "+platBrand.KubectlHint) {
		t.Errorf("kubectl create: %v\n%s", err, out)
	}
}

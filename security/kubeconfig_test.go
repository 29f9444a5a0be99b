package security

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestMarshalKubeconfig(t *testing.T) {
	t.Parallel()
	kc := Kubeconfig{
		ClusterName:   "platd",
		Server:        "https://127.0.0.1:6443",
		CAPEM:         []byte("ca-pem"),
		ClientCertPEM: []byte("cert-pem"),
		ClientKeyPEM:  []byte("key-pem"),
		User:          "admin",
		Context:       "admin@platd",
	}
	data, err := MarshalKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	want := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "admin@platd",
		"preferences":     map[string]any{},
		"clusters": []any{map[string]any{"name": "platd", "cluster": map[string]any{
			"server": "https://127.0.0.1:6443", "certificate-authority-data": b64("ca-pem")}}},
		"users": []any{map[string]any{"name": "admin", "user": map[string]any{
			"client-certificate-data": b64("cert-pem"), "client-key-data": b64("key-pem")}}},
		"contexts": []any{map[string]any{"name": "admin@platd", "context": map[string]any{
			"cluster": "platd", "user": "admin"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kubeconfig:\n%s\nwant %v", data, want)
	}

	defaults, err := MarshalKubeconfig(Kubeconfig{ClusterName: "c", Server: "https://h", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"current-context: c", "    token: tok", "    user: c"} {
		if !strings.Contains(string(defaults), line+"\n") {
			t.Fatalf("defaults lack %q:\n%s", line, defaults)
		}
	}
	for _, bad := range []Kubeconfig{{Server: "https://h"}, {ClusterName: "c"}} {
		if _, err := MarshalKubeconfig(bad); !errors.Is(err, ErrKubeconfig) {
			t.Fatalf("%+v: err = %v, want ErrKubeconfig", bad, err)
		}
	}
}

// TestKubectlAcceptsKubeconfig checks the file with the real client: it must
// parse it, and connect with the embedded CA and client certificate or token.
func TestKubectlAcceptsKubeconfig(t *testing.T) {
	t.Parallel()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	f := newPKIFixture(t)
	base := whoamiServer(t, f)
	certPEM, keyPEM := readFile(t, f.clientCert), readFile(t, f.clientKey)

	tests := []struct {
		name     string
		kc       Kubeconfig
		wantBody string
	}{
		{
			name:     "client certificate",
			kc:       Kubeconfig{ClusterName: "platd", Server: base, CAPEM: f.ca.CertPEM(), ClientCertPEM: certPEM, ClientKeyPEM: keyPEM, User: "admin"},
			wantBody: "admin system:masters,system:authenticated HTTP/2.0",
		},
		{
			name:     "bearer token",
			kc:       Kubeconfig{ClusterName: "platd", Server: base, CAPEM: f.ca.CertPEM(), Token: "tok", User: "alice", Context: "alice@platd"},
			wantBody: "alice system:authenticated HTTP/2.0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "kubeconfig")
			if err := WriteKubeconfig(path, tt.kc); err != nil {
				t.Fatal(err)
			}
			assertMode(t, path, 0o600)
			run := func(args ...string) []byte {
				t.Helper()
				cmd := exec.Command(kubectl, append([]string{"--kubeconfig", path, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
				cmd.Env = append(os.Environ(), "HOME="+dir)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("kubectl %q: %v\n%s", args, err, stderr.String())
				}
				return out
			}

			var view struct {
				CurrentContext string `json:"current-context"`
				Clusters       []struct {
					Name    string `json:"name"`
					Cluster struct {
						Server string `json:"server"`
						CAData string `json:"certificate-authority-data"`
					} `json:"cluster"`
				} `json:"clusters"`
				Users []struct {
					Name string `json:"name"`
				} `json:"users"`
			}
			if err := json.Unmarshal(run("config", "view", "--raw", "-o", "json"), &view); err != nil {
				t.Fatal(err)
			}
			wantCtx := tt.kc.Context
			if wantCtx == "" {
				wantCtx = tt.kc.ClusterName
			}
			if view.CurrentContext != wantCtx || len(view.Clusters) != 1 || view.Clusters[0].Cluster.Server != base ||
				view.Clusters[0].Cluster.CAData != base64.StdEncoding.EncodeToString(f.ca.CertPEM()) ||
				len(view.Users) != 1 || view.Users[0].Name != tt.kc.User {
				t.Fatalf("kubectl config view = %+v", view)
			}
			if got := string(run("get", "--raw", "/whoami")); got != tt.wantBody {
				t.Fatalf("kubectl get --raw = %q, want %q", got, tt.wantBody)
			}
		})
	}
}

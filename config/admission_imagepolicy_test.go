package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// imagePolicyKubeconfig is a kubeconfig naming an image policy backend.
const imagePolicyKubeconfig = `clusters:
- name: backend
  cluster: {server: "https://images.example.com/policy", insecure-skip-tls-verify: true}
contexts:
- name: default
  context: {cluster: backend}
current-context: default
`

// writeImagePolicyFiles writes a kubeconfig naming a backend and an
// admission configuration file of format (one %s, the kubeconfig's path)
// beside it, and returns the configuration file's path.
func writeImagePolicyFiles(t *testing.T, format string) string {
	t.Helper()
	dir := t.TempDir()
	kc := filepath.Join(dir, "backend.kubeconfig")
	cfg := filepath.Join(dir, "admission.yaml")
	if err := os.WriteFile(kc, []byte(imagePolicyKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, fmt.Appendf(nil, format, kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestDecodeImagePolicyWebhookConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kc := filepath.Join(dir, "backend.kubeconfig")
	if err := os.WriteFile(kc, []byte(imagePolicyKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	badCA := filepath.Join(dir, "bad-ca.kubeconfig")
	if err := os.WriteFile(badCA, []byte(strings.Replace(imagePolicyKubeconfig, "insecure-skip-tls-verify: true", "certificate-authority-data: bm90IGEgY2VydA==", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	backend := KubeconfigClient{Server: "https://images.example.com/policy", InsecureSkipTLSVerify: true}
	defaults := ImagePolicyWebhookConfiguration{KubeConfigFile: kc, Client: backend,
		AllowTTL: 5 * time.Minute, DenyTTL: 30 * time.Second, RetryBackoff: 500 * time.Millisecond}
	with := func(f func(*ImagePolicyWebhookConfiguration)) *ImagePolicyWebhookConfiguration {
		c := defaults
		f(&c)
		return &c
	}
	const initErr = `couldn't init admission plugin "ImagePolicyWebhook": `
	for _, brandName := range BrandNames() {
		b := Brands[brandName]
		head := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\nplugins:\n"
		inline := func(body string) string {
			return head + "- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy:\n" + body
		}
		for _, tc := range []struct {
			name string
			in   string
			want *ImagePolicyWebhookConfiguration
			err  string // the whole error text; "" for success
		}{
			{"defaults", inline("      kubeConfigFile: " + kc + "\n"), &defaults, ""},
			{"every setting", inline("      kubeConfigFile: " + kc + "\n      allowTTL: 50\n      denyTTL: 10\n      retryBackoff: 100\n      defaultAllow: true\n"),
				with(func(c *ImagePolicyWebhookConfiguration) {
					c.AllowTTL, c.DenyTTL, c.RetryBackoff, c.DefaultAllow = 50*time.Second, 10*time.Second, 100*time.Millisecond, true
				}), ""},
			{"-1 turns caching and waits off", inline("      kubeConfigFile: " + kc + "\n      allowTTL: -1\n      denyTTL: -1\n      retryBackoff: -1\n"),
				with(func(c *ImagePolicyWebhookConfiguration) { c.AllowTTL, c.DenyTTL, c.RetryBackoff = 0, 0, 0 }), ""},
			{"upper bounds", inline("      kubeConfigFile: " + kc + "\n      allowTTL: 1800\n      denyTTL: 1800\n      retryBackoff: 300000\n"),
				with(func(c *ImagePolicyWebhookConfiguration) {
					c.AllowTTL, c.DenyTTL, c.RetryBackoff = 30*time.Minute, 30*time.Minute, 5*time.Minute
				}), ""},
			{"legacy JSON file", `{"imagePolicy": {"kubeConfigFile": "` + kc + `", "denyTTL": 5}}`,
				with(func(c *ImagePolicyWebhookConfiguration) { c.DenyTTL = 5 * time.Second }), ""},
			{"path", head + "- name: ImagePolicyWebhook\n  path: ip.yaml\n", with(func(c *ImagePolicyWebhookConfiguration) { c.DefaultAllow = true }), ""},
			{"no entry", head, nil, initErr + "no config specified"},
			{"no file", "", nil, initErr + "no config specified"},
			{"allowTTL at its lower bound", inline("      kubeConfigFile: " + kc + "\n      allowTTL: 1\n"), nil,
				initErr + "valid value is between 1s and 30m0s, got 1s"},
			{"denyTTL too long", inline("      kubeConfigFile: " + kc + "\n      denyTTL: 1801\n"), nil,
				initErr + "valid value is between 1s and 30m0s, got 30m1s"},
			{"negative allowTTL", inline("      kubeConfigFile: " + kc + "\n      allowTTL: -5\n"), nil,
				initErr + "valid value is between 1s and 30m0s, got -5s"},
			{"retryBackoff too long", inline("      kubeConfigFile: " + kc + "\n      retryBackoff: 300001\n"), nil,
				initErr + "valid value is between 1ns and 5m0s, got 5m0.001s"},
			{"backoff checked first", inline("      allowTTL: 1\n      retryBackoff: 300001\n"), nil,
				initErr + "valid value is between 1ns and 5m0s, got 5m0.001s"},
			{"no kubeconfig", inline("      allowTTL: 10\n"), nil,
				initErr + "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable"},
			{"missing kubeconfig", inline("      kubeConfigFile: " + filepath.Join(dir, "none") + "\n"), nil,
				initErr + "invalid kubeconfig: open " + filepath.Join(dir, "none") + ": no such file or directory"},
			{"bad CA", inline("      kubeConfigFile: " + badCA + "\n"), nil,
				initErr + "invalid kubeconfig: unable to load root certificates: no certificates found"},
			{"not a number", `{"imagePolicy": {"kubeConfigFile": "` + kc + `", "allowTTL": 1.5}}`, nil,
				initErr + "json: cannot unmarshal number 1.5 into Go struct field imagePolicyWebhookConfig.imagePolicy.allowTTL of type time.Duration"},
		} {
			t.Run(brandName+"/"+tc.name, func(t *testing.T) {
				cdir := t.TempDir()
				if err := os.WriteFile(filepath.Join(cdir, "ip.yaml"), []byte("imagePolicy: {kubeConfigFile: "+kc+", defaultAllow: true}\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				got, ok := decodeAdmissionCase(t, tc.in, cdir, b, AdmissionPluginsOff{PluginEventRateLimit: true}, tc.err)
				if !ok {
					return
				}
				if !reflect.DeepEqual(got.ImagePolicyWebhook, tc.want) {
					t.Errorf("got %+v\nwant %+v", got.ImagePolicyWebhook, tc.want)
				}
			})
		}
	}
	// Off, the plugin needs no configuration and none is read.
	got, err := DecodeAdmissionConfig(nil, "", Brands["plat"], nil)
	if err != nil || got.ImagePolicyWebhook != nil {
		t.Errorf("plugin off: %+v, %v", got.ImagePolicyWebhook, err)
	}
}

//go:build linux

package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"platd/config"
)

// kubectlTimeout bounds one kubectl command; every command here is
// sub-second against a local server, the rest is slack for a busy machine.
const kubectlTimeout = 30 * time.Second

// kubectlPoll is how often a streaming kubectl's output is checked.
const kubectlPoll = 10 * time.Millisecond

// kubectlEnv runs the kubectl on PATH against one platd process. Safe for
// concurrent use by parallel subtests.
type kubectlEnv struct {
	bin   string
	proc  *platdProc
	brand config.Brand
	// environ is the whole environment of each kubectl: its own HOME (so
	// the discovery cache is private to the test) and KUBECONFIG.
	environ []string
}

// newKubectlEnv starts platd in the upstream brand and prepares kubectl
// for it; it skips the test when kubectl is not installed.
func newKubectlEnv(t *testing.T) *kubectlEnv {
	t.Helper()
	return newKubectlEnvFlags(t)
}

// newKubectlEnvFlags is newKubectlEnv with more platd serve flags.
func newKubectlEnvFlags(t *testing.T, flags ...string) *kubectlEnv {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	brand, err := config.LookupBrand("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := startPlatd(t, filepath.Join(dir, "data"), append([]string{"--brand", brand.Name}, flags...)...)
	return &kubectlEnv{
		bin: bin, proc: p, brand: brand,
		environ: []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + filepath.Join(dir, "home"),
			"KUBECONFIG=" + filepath.Join(p.dataDir, "admin.kubeconfig"),
		},
	}
}

// run runs one kubectl command and returns its stdout and stderr.
func (k *kubectlEnv) run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return k.runEnv(t, nil, args...)
}

// runEnv is run with extra environment variables ("NAME=value").
func (k *kubectlEnv) runEnv(t *testing.T, extra []string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, args...)
	cmd.Env = append(slices.Clip(k.environ), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kubectl %s: no result within %v", strings.Join(args, " "), kubectlTimeout)
	}
	return stdout.String(), stderr.String(), err
}

// must runs kubectl and fails the test unless it succeeds; it returns
// stdout.
func (k *kubectlEnv) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := k.run(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// apiGet reads an object through the API (not kubectl) and decodes it;
// it returns the status code and the object.
func (k *kubectlEnv) apiGet(t *testing.T, p string) (int, map[string]any) {
	t.Helper()
	code, body, err := k.proc.do(http.MethodGet, p, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", p, err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("GET %s: undecodable body %q: %v", p, body, err)
	}
	return code, m
}

// lockedBuffer is a bytes.Buffer safe for one writer and many readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestKubectl drives unmodified kubectl against the real binary. The
// scenarios are independent (each in its own namespace) and run in
// parallel against one server.
func TestKubectl(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)

	t.Run("namespaces", func(t *testing.T) {
		t.Parallel()
		if out := k.must(t, "create", "namespace", "kc-ns"); !strings.Contains(out, "namespace/kc-ns created") {
			t.Fatalf("create namespace printed %q", out)
		}
		out := k.must(t, "get", "namespaces", "-o", "name")
		for _, want := range []string{"namespace/kc-ns", "namespace/default", "namespace/" + k.brand.SystemNamespace} {
			if !strings.Contains(out, want+"\n") {
				t.Errorf("get namespaces -o name lacks %s:\n%s", want, out)
			}
		}
		table := k.must(t, "get", "namespace", "kc-ns")
		if !strings.HasPrefix(table, "NAME") || !strings.Contains(table, "\nkc-ns ") {
			t.Errorf("get namespace table:\n%s", table)
		}
		if out := k.must(t, "delete", "namespace", "kc-ns"); !strings.Contains(out, `namespace "kc-ns" deleted`) {
			t.Fatalf("delete namespace printed %q", out)
		}
		if code, _ := k.apiGet(t, "/api/v1/namespaces/kc-ns"); code != http.StatusNotFound {
			t.Errorf("namespace after kubectl delete: status %d, want 404", code)
		}
	})

	t.Run("configmaps", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-cm")
		out := k.must(t, "create", "configmap", "app-config", "-n", "kc-cm",
			"--from-literal=mode=fast", "--from-literal=greeting=hello world")
		if !strings.Contains(out, "configmap/app-config created") {
			t.Fatalf("create configmap printed %q", out)
		}

		var fromJSON map[string]any
		if err := json.Unmarshal([]byte(k.must(t, "get", "cm", "app-config", "-n", "kc-cm", "-o", "json")), &fromJSON); err != nil {
			t.Fatal(err)
		}
		var fromYAML map[string]any
		if err := yaml.Unmarshal([]byte(k.must(t, "get", "configmap", "app-config", "-n", "kc-cm", "-o", "yaml")), &fromYAML); err != nil {
			t.Fatal(err)
		}
		for name, o := range map[string]map[string]any{"json": fromJSON, "yaml": fromYAML} {
			checks := map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata.name": "app-config", "metadata.namespace": "kc-cm",
				"data.mode": "fast", "data.greeting": "hello world",
			}
			for p, want := range checks {
				if got := path(o, p); got != want {
					t.Errorf("-o %s: %s = %v, want %v", name, p, got, want)
				}
			}
			for _, p := range []string{"metadata.uid", "metadata.resourceVersion", "metadata.creationTimestamp"} {
				if s, _ := path(o, p).(string); s == "" {
					t.Errorf("-o %s: %s is empty", name, p)
				}
			}
		}
		if fromJSON["metadata"].(map[string]any)["uid"] != fromYAML["metadata"].(map[string]any)["uid"] {
			t.Errorf("json and yaml output disagree on the uid")
		}

		// The namespace's root CA bundle may be listed too, as upstream.
		out = k.must(t, "get", "cm", "-n", "kc-cm", "-o", "name")
		if got := strings.ReplaceAll(out, "configmap/"+k.brand.RootCAConfigMap+"\n", ""); got != "configmap/app-config\n" {
			t.Errorf("get cm -o name = %q", out)
		}
		if out := k.must(t, "delete", "configmap", "app-config", "-n", "kc-cm"); !strings.Contains(out, `configmap "app-config" deleted`) {
			t.Fatalf("delete configmap printed %q", out)
		}
		_, errOut, err := k.run(t, "get", "cm", "app-config", "-n", "kc-cm")
		if err == nil || !strings.Contains(errOut, `configmaps "app-config" not found`) {
			t.Errorf("get after delete: err %v, stderr %q", err, errOut)
		}
	})

	t.Run("create-f-bundle", func(t *testing.T) {
		t.Parallel()
		out, errOut, err := k.run(t, "create", "-f", filepath.Join("..", "testdata", "e2e", "kubectl-bundle.yaml"))
		if err != nil {
			t.Fatalf("create -f: %v\n%s%s", err, out, errOut)
		}
		if strings.Contains(strings.ToLower(errOut), "failed to download openapi") {
			t.Errorf("kubectl could not use the OpenAPI documents:\n%s", errOut)
		}
		for _, want := range []string{"namespace/kc-bundle created", "configmap/shop-settings created", "secret/shop-db created", "limitrange/shop-limits created"} {
			if !strings.Contains(out, want) {
				t.Errorf("create -f output lacks %q:\n%s", want, out)
			}
		}
		_, sec := k.apiGet(t, "/api/v1/namespaces/kc-bundle/secrets/shop-db")
		if got, want := path(sec, "data.password"), base64.StdEncoding.EncodeToString([]byte("s3cr3t-Pa55")); got != want {
			t.Errorf("secret data.password = %v, want %v", got, want)
		}
		if sec["stringData"] != nil {
			t.Errorf("stringData was stored: %v", sec["stringData"])
		}
		_, lr := k.apiGet(t, "/api/v1/namespaces/kc-bundle/limitranges/shop-limits")
		limits, _ := path(lr, "spec.limits").([]any)
		if len(limits) != 1 || path(limits[0].(map[string]any), "default.memory") != "256Mi" {
			t.Errorf("limitrange spec.limits = %v", path(lr, "spec.limits"))
		}
		_, cmObj := k.apiGet(t, "/api/v1/namespaces/kc-bundle/configmaps/shop-settings")
		if data, _ := cmObj["data"].(map[string]any); data["application.properties"] != "server.port=8080\ncache.ttl=30s\n" {
			t.Errorf("configmap data = %v", cmObj["data"])
		}

		// Strict field validation is kubectl's default: an unknown field
		// is refused by the server and names the field.
		out, errOut, err = k.run(t, "create", "-f", filepath.Join("..", "testdata", "e2e", "kubectl-unknown-field.yaml"))
		if err == nil || !strings.Contains(errOut, `unknown field "dataa"`) {
			t.Errorf("unknown field: err %v\nstdout %s\nstderr %s", err, out, errOut)
		}
		if code, _ := k.apiGet(t, "/api/v1/namespaces/default/configmaps/typo"); code != http.StatusNotFound {
			t.Errorf("the refused object was stored: status %d", code)
		}
	})

	t.Run("watch", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-watch")
		k.must(t, "create", "configmap", "before", "-n", "kc-watch", "--from-literal=a=1")
		ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, k.bin, "get", "cm", "-n", "kc-watch", "-w", "--output-watch-events", "--request-timeout=20s")
		cmd.Env = k.environ
		var stdout, stderr lockedBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		defer func() { cancel(); <-done }()
		// The initial list comes first; once it is printed the watch
		// starts from the list's revision, so a later create is an event.
		// waitOutput waits for a row "EVENT NAME AGE" of the watch table.
		waitOutput := func(event, name string) {
			t.Helper()
			want := regexp.MustCompile(`(?m)^` + event + `\s+` + name + `\s`)
			deadline := time.Now().Add(kubectlTimeout)
			for !want.MatchString(stdout.String()) {
				if time.Now().After(deadline) {
					t.Fatalf("watch output lacks %q:\nstdout %s\nstderr %s", want, stdout.String(), stderr.String())
				}
				select {
				case err := <-done:
					done <- err
					t.Fatalf("watch ended (%v) without %q:\nstdout %s\nstderr %s", err, want, stdout.String(), stderr.String())
				case <-time.After(kubectlPoll):
				}
			}
		}
		waitOutput("ADDED", "before")
		k.must(t, "create", "configmap", "after", "-n", "kc-watch", "--from-literal=b=2")
		waitOutput("ADDED", "after")
		k.must(t, "label", "configmap", "after", "-n", "kc-watch", "seen=yes")
		waitOutput("MODIFIED", "after")
		k.must(t, "delete", "configmap", "before", "-n", "kc-watch")
		waitOutput("DELETED", "before")
	})

	t.Run("cascade-foreground", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-gc")
		k.must(t, "create", "configmap", "owner", "-n", "kc-gc")
		uid := k.must(t, "get", "configmap", "owner", "-n", "kc-gc", "-o", "jsonpath={.metadata.uid}")
		dep := filepath.Join(t.TempDir(), "dep.yaml")
		manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dep\n  namespace: kc-gc\n  ownerReferences:\n" +
			"  - apiVersion: v1\n    kind: ConfigMap\n    name: owner\n    uid: " + uid + "\n    blockOwnerDeletion: true\n"
		if err := os.WriteFile(dep, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		k.must(t, "create", "-f", dep)
		// kubectl waits for the owner to go; in the foreground that is
		// after its blocking dependent went.
		if out := k.must(t, "delete", "configmap", "owner", "-n", "kc-gc", "--cascade=foreground"); !strings.Contains(out, `configmap "owner" deleted`) {
			t.Fatalf("delete printed %q", out)
		}
		if code, _ := k.apiGet(t, "/api/v1/namespaces/kc-gc/configmaps/dep"); code != http.StatusNotFound {
			t.Errorf("dependent after a foreground delete of its owner: status %d, want 404", code)
		}
	})

	t.Run("secret", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-secret")
		out := k.must(t, "create", "secret", "generic", "db-creds", "-n", "kc-secret",
			"--from-literal=user=admin", "--from-literal=pass=p@ss w0rd:/=")
		if !strings.Contains(out, "secret/db-creds created") {
			t.Fatalf("create secret printed %q", out)
		}
		for key, want := range map[string]string{"user": "admin", "pass": "p@ss w0rd:/="} {
			enc := k.must(t, "get", "secret", "db-creds", "-n", "kc-secret", "-o", "jsonpath={.data."+key+"}")
			if enc != base64.StdEncoding.EncodeToString([]byte(want)) {
				t.Errorf("data.%s = %q, want base64 of %q", key, enc, want)
			}
			dec, err := base64.StdEncoding.DecodeString(enc)
			if err != nil || string(dec) != want {
				t.Errorf("data.%s decodes to %q (%v), want %q", key, dec, err, want)
			}
		}
		if typ := k.must(t, "get", "secret", "db-creds", "-n", "kc-secret", "-o", "jsonpath={.type}"); typ != "Opaque" {
			t.Errorf("type = %q, want Opaque", typ)
		}
	})

	t.Run("label-annotate", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-label")
		k.must(t, "create", "configmap", "tagged", "-n", "kc-label", "--from-literal=k=v")
		if out := k.must(t, "label", "configmap", "tagged", "-n", "kc-label", "tier=web", "env=lab"); !strings.Contains(out, "configmap/tagged labeled") {
			t.Errorf("label printed %q", out)
		}
		if out := k.must(t, "annotate", "configmap", "tagged", "-n", "kc-label", "owner=team a", "note=x=y"); !strings.Contains(out, "configmap/tagged annotated") {
			t.Errorf("annotate printed %q", out)
		}
		_, o := k.apiGet(t, "/api/v1/namespaces/kc-label/configmaps/tagged")
		for p, want := range map[string]any{
			"metadata.labels.tier": "web", "metadata.labels.env": "lab",
			"metadata.annotations.owner": "team a", "metadata.annotations.note": "x=y",
			"data.k": "v",
		} {
			if got := path(o, p); got != want {
				t.Errorf("%s = %v, want %v", p, got, want)
			}
		}
		k.must(t, "label", "configmap", "tagged", "-n", "kc-label", "env-")
		_, o = k.apiGet(t, "/api/v1/namespaces/kc-label/configmaps/tagged")
		if labels, _ := path(o, "metadata.labels").(map[string]any); len(labels) != 1 || labels["tier"] != "web" {
			t.Errorf("labels after removing env = %v", labels)
		}
		if out := k.must(t, "get", "cm", "-n", "kc-label", "-l", "tier=web", "-o", "name"); out != "configmap/tagged\n" {
			t.Errorf("get -l tier=web = %q", out)
		}
	})

	t.Run("delete-namespace-waits", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-gone")
		for _, n := range []string{"a", "b", "c"} {
			k.must(t, "create", "configmap", n, "-n", "kc-gone", "--from-literal=k=v")
		}
		k.must(t, "create", "secret", "generic", "s", "-n", "kc-gone", "--from-literal=k=v")
		k.must(t, "delete", "namespace", "kc-gone")
		// kubectl delete waits for the object to be gone; right after it
		// returns the namespace and its content must be gone.
		if code, _ := k.apiGet(t, "/api/v1/namespaces/kc-gone"); code != http.StatusNotFound {
			t.Errorf("namespace right after kubectl delete: status %d, want 404", code)
		}
		for _, res := range []string{"configmaps", "secrets"} {
			_, list := k.apiGet(t, "/api/v1/namespaces/kc-gone/"+res)
			if items, _ := list["items"].([]any); len(items) != 0 {
				t.Errorf("%s left in the deleted namespace: %v", res, items)
			}
		}
	})

	// A v1 List always takes kubectl's client-side validation, which reads
	// the protobuf v2 document; explain reads it on request.
	t.Run("openapi-v2", func(t *testing.T) {
		t.Parallel()
		out := k.must(t, "explain", "configmap", "--api-version=v1", "--output=plaintext-openapiv2")
		for _, want := range []string{"KIND:     ConfigMap", "VERSION:  v1", "data\t<map[string]string>", "metadata\t<Object>"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain from v2 lacks %q:\n%s", want, out)
			}
		}
		k.must(t, "create", "namespace", "kc-oav2")
		list := func(second string) string {
			p := filepath.Join(t.TempDir(), "list.yaml")
			doc := "apiVersion: v1\nkind: List\nitems:\n" +
				"- {apiVersion: v1, kind: ConfigMap, metadata: {name: first, namespace: kc-oav2}, data: {a: \"1\"}}\n" +
				"- {apiVersion: v1, kind: ConfigMap, metadata: {name: second, namespace: kc-oav2}, " + second + "}\n"
			if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		_, errOut, err := k.run(t, "create", "-f", list(`dataa: {b: "2"}, immutable: "yes"`))
		for _, want := range []string{`unknown field "dataa"`, `got "string", expected "boolean"`} {
			if err == nil || !strings.Contains(errOut, want) {
				t.Errorf("client-side validation: err %v, stderr lacks %q:\n%s", err, want, errOut)
			}
		}
		if code, _ := k.apiGet(t, "/api/v1/namespaces/kc-oav2/configmaps/first"); code != http.StatusNotFound {
			t.Errorf("an item of the refused list was stored: status %d", code)
		}
		out = k.must(t, "create", "-f", list(`data: {b: "2"}, immutable: true`))
		for _, want := range []string{"configmap/first created", "configmap/second created"} {
			if !strings.Contains(out, want) {
				t.Errorf("create -f of a valid list lacks %q:\n%s", want, out)
			}
		}
		if _, cm := k.apiGet(t, "/api/v1/namespaces/kc-oav2/configmaps/second"); path(cm, "data.b") != "2" || cm["immutable"] != true {
			t.Errorf("stored second = %v", cm)
		}
	})

	t.Run("version", func(t *testing.T) {
		t.Parallel()
		out := k.must(t, "version")
		if !strings.Contains(out, "Server Version: v1.32.") {
			t.Errorf("kubectl version:\n%s", out)
		}
		var v struct {
			ServerVersion struct {
				Major, Minor, GitVersion string
			} `json:"serverVersion"`
		}
		if err := json.Unmarshal([]byte(k.must(t, "version", "-o", "json")), &v); err != nil {
			t.Fatal(err)
		}
		if sv := v.ServerVersion; sv.Major != "1" || !strings.HasPrefix(sv.Minor, "32") || !strings.HasPrefix(sv.GitVersion, "v1.32.") {
			t.Errorf("serverVersion = %+v", sv)
		}
	})

	t.Run("raw-readyz", func(t *testing.T) {
		t.Parallel()
		if out := k.must(t, "get", "--raw", "/readyz"); out != "ok" {
			t.Errorf("get --raw /readyz = %q, want ok", out)
		}
		out := k.must(t, "get", "--raw", "/readyz?verbose")
		if !strings.Contains(out, "[+]ping ok") || !strings.Contains(out, "readyz check passed") {
			t.Errorf("get --raw /readyz?verbose:\n%s", out)
		}
	})

	t.Run("api-resources", func(t *testing.T) {
		t.Parallel()
		out := k.must(t, "api-resources")
		rows := map[string][]string{}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				rows[f[0]] = f
			}
		}
		want := map[string][]string{
			"configmaps": {"configmaps", "cm", "v1", "true", "ConfigMap"},
			"namespaces": {"namespaces", "ns", "v1", "false", "Namespace"},
			"secrets":    {"secrets", "v1", "true", "Secret"},
		}
		for name, w := range want {
			if got := rows[name]; strings.Join(got, " ") != strings.Join(w, " ") {
				t.Errorf("api-resources row %s = %q, want %q", name, got, w)
			}
		}
		if out := k.must(t, "api-resources", "--namespaced=false", "-o", "name"); !strings.Contains(out, "namespaces\n") || strings.Contains(out, "configmaps") {
			t.Errorf("cluster-scoped resources:\n%s", out)
		}
		// Exactly the resources of a v1.32 server, less those later
		// capabilities add: each group's preferred version, no
		// subresources, spelled <resource>[.<group>].
		var names []string
		for _, file := range []string{"aggregated-api.json", "aggregated-apis.json"} {
			for _, g := range upstreamDiscovery(t, k.brand, file) {
				group, _ := at(g, "metadata", "name").(string)
				for _, r := range at(g, "versions", 0, "resources").([]any) {
					name := at(r, "resource").(string)
					if group != "" {
						name += "." + group
					}
					names = append(names, name)
				}
			}
		}
		got := strings.Fields(k.must(t, "api-resources", "-o", "name"))
		slices.Sort(names)
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("api-resources -o name:\n got  %q\n want %q", got, names)
		}
	})

	t.Run("explain", func(t *testing.T) {
		t.Parallel()
		out, errOut, err := k.run(t, "explain", "configmap")
		if err != nil {
			t.Fatalf("kubectl explain configmap: %v: %s", err, errOut)
		}
		for _, want := range []string{"KIND:", "ConfigMap", "VERSION:", "v1", "data"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain configmap lacks %q:\n%s", want, out)
			}
		}
	})
}

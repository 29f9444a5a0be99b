package server_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platd/bolt"
	"platd/config"
)

// Keys of the encryption tests, base64 as the configuration file holds them.
var (
	encKey1 = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	encKey2 = base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
)

// encryptionFile writes an EncryptionConfiguration for secrets with the
// given providers (YAML list items) and returns its path.
func encryptionFile(t *testing.T, providers ...string) string {
	t.Helper()
	body := "apiVersion: " + config.EncryptionConfigAPIVersions(platBrand)[0] + "\nkind: EncryptionConfiguration\n" +
		"resources:\n- resources: [secrets]\n  providers:\n"
	for _, p := range providers {
		body += "  - " + p + "\n"
	}
	p := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func aesgcm(name, secret string) string {
	return "aesgcm: {keys: [{name: " + name + ", secret: " + secret + "}]}"
}

func withEncryption(path string) option {
	return func(o *config.Options) { o.EncryptionProviderConfigFile = path }
}

func withUnsafeDelete(o *config.Options) {
	o.FeatureGatesFlag = []string{config.AllowUnsafeMalformedObjectDeletion + "=true"}
}

// secretBody is a Secret whose data holds marker, base64 as stored.
func secretBody(name, marker string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name},
		"data": map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(marker))}}
}

// TestEncryptionAtRest: a secret is encrypted in the file (no byte of its
// data in plain), a configmap the file does not name is not, and both
// read back unchanged after a restart.
func TestEncryptionAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := encryptionFile(t, aesgcm("key1", encKey1))
	e := startWith(t, testOptions(t, dir, withEncryption(cfg)))
	marker := "hunter2-at-rest-marker"
	created := e.do("POST", "/api/v1/namespaces/default/secrets", secretBody("s1", marker)).mustCode(t, 201).body
	e.do("POST", "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "c1"},
		"data": map[string]any{"k": "configmap-plain-marker"}}).mustCode(t, 201)
	e.do("PUT", "/api/v1/namespaces/default/secrets/s1", map[string]any{"metadata": map[string]any{"name": "s1"},
		"data": map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(marker + "-2"))}}).mustCode(t, 200)
	e.stop()

	raw, err := os.ReadFile(e.opts.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString([]byte(marker))
	for _, plain := range []string{enc, enc[:16], base64.StdEncoding.EncodeToString([]byte(marker + "-2"))} {
		if bytes.Contains(raw, []byte(plain)) {
			t.Errorf("the data file holds %q in plain", plain)
		}
	}
	if !bytes.Contains(raw, []byte("configmap-plain-marker")) {
		t.Error("the configmap, which the file does not name, is not stored plain")
	}
	stored, err := bolt.ReadStored(e.opts.DBPath(), "/secrets/default/s1")
	if err != nil {
		t.Fatal(err)
	}
	if want := platBrand.StorageValuePrefix + "aesgcm:v1:key1:"; !strings.HasPrefix(string(stored), want) {
		t.Errorf("stored secret starts %q, want %q", stored[:min(len(stored), 40)], want)
	}

	e2 := startWith(t, testOptions(t, dir, withEncryption(cfg)))
	got := e2.do("GET", "/api/v1/namespaces/default/secrets/s1", nil).mustCode(t, 200).obj(t)
	if p, _ := path(got, "data.password").(string); p != base64.StdEncoding.EncodeToString([]byte(marker+"-2")) {
		t.Errorf("secret after restart: %v (created %s)", got, created)
	}
	if v := path(e2.do("GET", "/api/v1/namespaces/default/configmaps/c1", nil).mustCode(t, 200).obj(t), "data.k"); v != "configmap-plain-marker" {
		t.Errorf("configmap after restart: %v", v)
	}
	// The start decrypted the secret (its state and its history).
	metrics := string(e2.do("GET", "/metrics", nil).mustCode(t, 200).body)
	want := `apiserver_storage_transformation_operations_total{resource="secrets",status="OK",transformation_type="from_storage",transformer_prefix="` + platBrand.StorageValuePrefix + `aesgcm:v1:"}`
	if !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	// A past revision (from the history, also encrypted) reads too.
	rv, _ := path(e2.do("GET", "/api/v1/namespaces/default/secrets", nil).mustCode(t, 200).obj(t), "metadata.resourceVersion").(string)
	if rv == "" {
		t.Fatal("no list resourceVersion")
	}
	m := e2.do("GET", "/api/v1/namespaces/default/secrets?resourceVersion=1&resourceVersionMatch=NotOlderThan", nil).mustCode(t, 200).obj(t)
	if items, _ := m["items"].([]any); len(items) != 1 {
		t.Errorf("list after restart: %v", m)
	}
}

// TestEncryptionKeyRotation: a new key put first still reads values of
// the old key; an update rewrites a value with the new key, after which
// the old key can go.
func TestEncryptionKeyRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, withEncryption(encryptionFile(t, aesgcm("key1", encKey1)))))
	e.do("POST", "/api/v1/namespaces/default/secrets", secretBody("old", "old-value")).mustCode(t, 201)
	e.stop()

	both := encryptionFile(t, "secretbox: {keys: [{name: key2, secret: "+encKey2+"}]}", aesgcm("key1", encKey1))
	e = startWith(t, testOptions(t, dir, withEncryption(both)))
	old := e.do("GET", "/api/v1/namespaces/default/secrets/old", nil).mustCode(t, 200).obj(t)
	if p := path(old, "data.password"); p != base64.StdEncoding.EncodeToString([]byte("old-value")) {
		t.Fatalf("old secret after rotation: %v", old)
	}
	// Rewriting it (kubectl replace) re-encrypts it with the new key.
	e.do("PUT", "/api/v1/namespaces/default/secrets/old", old).mustCode(t, 200)
	e.do("POST", "/api/v1/namespaces/default/secrets", secretBody("new", "new-value")).mustCode(t, 201)
	e.stop()
	for _, name := range []string{"old", "new"} {
		stored, err := bolt.ReadStored(e.opts.DBPath(), "/secrets/default/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if want := platBrand.StorageValuePrefix + "secretbox:v1:key2:"; !strings.HasPrefix(string(stored), want) {
			t.Errorf("%s stored as %q, want the new key", name, stored[:min(len(stored), 40)])
		}
	}

	e = startWith(t, testOptions(t, dir, withEncryption(encryptionFile(t, "secretbox: {keys: [{name: key2, secret: "+encKey2+"}]}"))))
	for name, want := range map[string]string{"old": "old-value", "new": "new-value"} {
		got := e.do("GET", "/api/v1/namespaces/default/secrets/"+name, nil).mustCode(t, 200).obj(t)
		if p := path(got, "data.password"); p != base64.StdEncoding.EncodeToString([]byte(want)) {
			t.Errorf("%s with only the new key: %v", name, got)
		}
	}
	e.do("GET", "/api/v1/namespaces/default/secrets", nil).mustCode(t, 200)
}

// TestEncryptionConfigRefused: a bad file stops the start with its
// problems.
func TestEncryptionConfigRefused(t *testing.T) {
	t.Parallel()
	o := testOptions(t, t.TempDir())
	o.EncryptionProviderConfigFile = encryptionFile(t, "aesgcm: {keys: [{name: k, secret: c2hvcnQ=}]}")
	err := o.Validate()
	want := "--encryption-provider-config: encryption provider config: " + o.EncryptionProviderConfigFile +
		": resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 5, expected one of [16 24 32]"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v\nwant ...%s", err, want)
	}
}

// TestKubectlEncryptedSecrets: kubectl creates, reads and replaces
// secrets as usual while they are stored with upstream's prefix.
func TestKubectlEncryptedSecrets(t *testing.T) {
	t.Parallel()
	kb := config.Brands["kubernetes"]
	cfg := filepath.Join(t.TempDir(), "enc.yaml")
	body := "apiVersion: " + config.EncryptionConfigAPIVersions(kb)[0] + "\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - " +
		aesgcm("key1", encKey1) + "\n  - identity: {}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	k := newKubectlEnvFlags(t, "--encryption-provider-config", cfg)
	k.must(t, "create", "secret", "generic", "db", "--from-literal=password=kubectl-secret-value")
	if got := k.must(t, "get", "secret", "db", "-o", "jsonpath={.data.password}"); got != base64.StdEncoding.EncodeToString([]byte("kubectl-secret-value")) {
		t.Errorf("kubectl get secret: %q", got)
	}
	out := k.must(t, "get", "secrets", "-o", "json")
	in := filepath.Join(t.TempDir(), "secrets.json")
	if err := os.WriteFile(in, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := k.must(t, "replace", "-f", in); !strings.Contains(got, "secret/db replaced") {
		t.Errorf("kubectl replace: %q", got)
	}
	k.proc.terminate()
	stored, err := bolt.ReadStored(filepath.Join(k.proc.dataDir, "platd.db"), "/secrets/default/db")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(stored), kb.StorageValuePrefix+"aesgcm:v1:key1:") {
		t.Errorf("stored secret starts %q", stored[:min(len(stored), 30)])
	}
}

// TestEncryptionConfigReload: with automatic reload, a new key put first
// encrypts later writes, an unchanged update rewrites a value of the old
// key, and an invalid file is counted and leaves the configuration as it
// was.
func TestEncryptionConfigReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := encryptionFile(t, aesgcm("key1", encKey1))
	e := startWith(t, testOptions(t, dir, withEncryption(cfg), func(o *config.Options) {
		o.EncryptionConfigReload, o.EncryptionConfigReloadInterval = true, 10*time.Millisecond
	}))
	old := e.do("POST", "/api/v1/namespaces/default/secrets", secretBody("old", "old-value")).mustCode(t, 201).obj(t)
	rotate := func(providers ...string) {
		t.Helper()
		tmp := encryptionFile(t, providers...)
		data, err := os.ReadFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	metric := func(sub string) bool {
		return strings.Contains(string(e.do("GET", "/metrics", nil).mustCode(t, 200).body), sub)
	}
	rotate("secretbox: {keys: [{name: key2, secret: "+encKey2+"}]}", aesgcm("key1", encKey1))
	eventually(t, "the reload", func() bool {
		return metric(`apiserver_encryption_config_controller_automatic_reloads_total{apiserver_id_hash=`) && metric(`status="success"} 1`)
	})
	e.do("POST", "/api/v1/namespaces/default/secrets", secretBody("new", "new-value")).mustCode(t, 201)
	e.do("PUT", "/api/v1/namespaces/default/secrets/old", old).mustCode(t, 200)
	rotate("aesgcm: {keys: [{name: k, secret: c2hvcnQ=}]}")
	eventually(t, "the failed reload", func() bool { return metric(`status="failure"} 1`) })
	e.do("POST", "/api/v1/namespaces/default/secrets", secretBody("newer", "v")).mustCode(t, 201)
	e.stop()
	for _, name := range []string{"old", "new", "newer"} {
		stored, err := bolt.ReadStored(e.opts.DBPath(), "/secrets/default/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if want := platBrand.StorageValuePrefix + "secretbox:v1:key2:"; !strings.HasPrefix(string(stored), want) {
			t.Errorf("%s stored as %q, want the reloaded key", name, stored[:min(len(stored), 40)])
		}
	}
}

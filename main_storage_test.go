package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// The storage flags: upstream's defaults, the flags, their PLATD_*
// variables and the --config file.
func TestStorageFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir)
	if err != nil || o.StorageBackend != config.StorageBackendBBolt || o.UsesEtcd() {
		t.Fatalf("default backend: %q %v", o.StorageBackend, err)
	}
	want := config.EtcdOptions{Prefix: "/registry", CompactionInterval: 5 * time.Minute, CountMetricPollPeriod: time.Minute}
	if !equalEtcd(o.Etcd, want) {
		t.Errorf("defaults: %+v, want %+v", o.Etcd, want)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--storage-backend", "etcd3", "--etcd-servers", "http://127.0.0.1:2379,http://127.0.0.2:2379",
		"--etcd-prefix", "/platd/", "--etcd-compaction-interval", "0", "--etcd-count-metric-poll-period", "30s")
	want = config.EtcdOptions{Servers: []string{"http://127.0.0.1:2379", "http://127.0.0.2:2379"}, Prefix: "/platd", CountMetricPollPeriod: 30 * time.Second}
	if err != nil || !o.UsesEtcd() || !equalEtcd(o.Etcd, want) {
		t.Errorf("flags: %q %+v %v; want %+v", o.StorageBackend, o.Etcd, err, want)
	}
	file := filepath.Join(t.TempDir(), "platd.yaml")
	yaml := "storage-backend: etcd3\netcd-servers: [http://10.0.0.1:2379, http://10.0.0.2:2379]\netcd-prefix: /r\netcd-compaction-interval: 1m\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file)
	want = config.EtcdOptions{Servers: []string{"http://10.0.0.1:2379", "http://10.0.0.2:2379"}, Prefix: "/r", CompactionInterval: time.Minute, CountMetricPollPeriod: time.Minute}
	if err != nil || !o.UsesEtcd() || !equalEtcd(o.Etcd, want) {
		t.Errorf("file: %q %+v %v; want %+v", o.StorageBackend, o.Etcd, err, want)
	}
	// --etcd-servers alone selects etcd, as upstream's only backend.
	o, err = parse(t, "serve", "--data-dir", dir, "--etcd-servers", "http://127.0.0.1:2379")
	if err != nil || o.StorageBackend != config.StorageBackendETCD3 || !slices.Equal(o.Etcd.Servers, []string{"http://127.0.0.1:2379"}) {
		t.Errorf("--etcd-servers alone: %q %v %v", o.StorageBackend, o.Etcd.Servers, err)
	}
	t.Setenv("PLATD_ETCD_SERVERS", "http://10.0.0.9:2379")
	t.Setenv("PLATD_ETCD_PREFIX", "/env")
	o, err = parse(t, "serve", "--data-dir", dir, "--config", file)
	want.Servers, want.Prefix = []string{"http://10.0.0.9:2379"}, "/env"
	if err != nil || !equalEtcd(o.Etcd, want) {
		t.Errorf("environment over file: %+v %v; want %+v", o.Etcd, err, want)
	}
}

func equalEtcd(a, b config.EtcdOptions) bool {
	return slices.Equal(a.Servers, b.Servers) && a.Prefix == b.Prefix && a.CAFile == b.CAFile && a.CertFile == b.CertFile && a.KeyFile == b.KeyFile &&
		a.CompactionInterval == b.CompactionInterval && a.CountMetricPollPeriod == b.CountMetricPollPeriod
}

// Storage flags that cannot work are refused with exit code 2 and a
// message saying what to change.
func TestStorageFlagErrors(t *testing.T) {
	etcd := []string{"--storage-backend", "etcd3"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--storage-backend", "etcd2"}, `--storage-backend "etcd2" is not supported: choose bbolt or etcd3`},
		{etcd, "--storage-backend=etcd3 needs --etcd-servers: the comma-separated client URLs of the etcd members, such as https://127.0.0.1:2379"},
		{append(etcd, "--etcd-servers", "127.0.0.1:2379"), `--etcd-servers: "127.0.0.1:2379" is not an etcd client URL such as https://127.0.0.1:2379`},
		{append(etcd, "--etcd-servers", "http://127.0.0.1:2379", "--etcd-prefix", "registry"), `--etcd-prefix "registry" must start with /`},
		{append(etcd, "--etcd-servers", "http://127.0.0.1:2379", "--etcd-certfile", "/c.pem"), "--etcd-certfile and --etcd-keyfile must be given together"},
		{append(etcd, "--etcd-servers", "http://127.0.0.1:2379", "--etcd-compaction-interval", "-1s"), "--etcd-compaction-interval -1s must not be negative (0 turns compaction off)"},
		{[]string{"--storage-backend", "bbolt", "--etcd-servers", "http://127.0.0.1:2379"}, "--etcd-servers is given but --storage-backend is bbolt: add --storage-backend=etcd3 to keep objects in etcd"},
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"platd", "serve", "--data-dir", dir, "--secure-port", "0"}, c.args...)
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		_, err := parse(t, append([]string{"serve", "--data-dir", dir}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%v: the data directory was created", c.args)
		}
	}
}

// The --etcd-* files are read before the data directory is touched: one
// that cannot be read, is no PEM, or a key that is not the certificate's
// stops the start with exit code 2.
func TestEtcdFilesCheckedFirst(t *testing.T) {
	tmp := t.TempDir()
	certA, keyA := writePair(t, tmp, "a")
	_, keyB := writePair(t, tmp, "b")
	notPEM := filepath.Join(tmp, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(tmp, "missing.pem")
	etcd := []string{"--storage-backend", "etcd3", "--etcd-servers", "https://127.0.0.1:1"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--etcd-cafile", missing}, "--etcd-cafile: open " + missing + ": no such file or directory"},
		{[]string{"--etcd-cafile", notPEM}, "--etcd-cafile " + notPEM + " holds no PEM certificate"},
		{[]string{"--etcd-certfile", missing, "--etcd-keyfile", keyA}, "--etcd-certfile: stat " + missing + ": no such file or directory"},
		{[]string{"--etcd-certfile", certA, "--etcd-keyfile", missing}, "--etcd-keyfile: stat " + missing + ": no such file or directory"},
		{[]string{"--etcd-certfile", certA, "--etcd-keyfile", keyB}, "--etcd-certfile " + certA + " and --etcd-keyfile " + keyB + " are not a certificate and its key: tls: private key does not match public key"},
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "data")
		err := serveApp(context.Background(), append(append([]string{"serve", "--data-dir", dir, "--secure-port", "0"}, etcd...), c.args...)...)
		if code := exitCode(err); code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, error %v; want exit 2 and %q", c.args, code, err, c.want)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%v: the data directory was created", c.args)
		}
	}
	// A key others may read is refused as every operator's key is.
	if err := os.Chmod(keyA, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	err := serveApp(context.Background(), append(append([]string{"serve", "--data-dir", dir, "--secure-port", "0"}, etcd...), "--etcd-certfile", certA, "--etcd-keyfile", keyA)...)
	if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), "--etcd-keyfile "+keyA+" has mode 0644") {
		t.Errorf("readable key: %v", err)
	}
}

// writePair writes a self-signed certificate and its key.
func writePair(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// --hostname-override names the replica; without it the host's name is
// used (the empty value).
func TestHostnameOverrideFlag(t *testing.T) {
	o, err := parse(t, "--hostname-override", "edge-a")
	if err != nil || o.Replicas.Hostname != "edge-a" {
		t.Fatalf("--hostname-override edge-a: %q, %v", o.Replicas.Hostname, err)
	}
	t.Setenv("PLATD_HOSTNAME_OVERRIDE", "edge-b")
	if o, err = parse(t); err != nil || o.Replicas.Hostname != "edge-b" {
		t.Fatalf("PLATD_HOSTNAME_OVERRIDE=edge-b: %q, %v", o.Replicas.Hostname, err)
	}
}

// A command line written for upstream names etcd and a cert directory
// but no data directory: platd keeps what it writes besides key
// material (the admin kubeconfig) in the cert directory then, not in
// ./platd-data of whatever directory it was started from.
func TestDataDirOfAnUpstreamCommandLine(t *testing.T) {
	certDir, dataDir := t.TempDir(), t.TempDir()
	etcd := []string{"--etcd-servers", "http://127.0.0.1:2379"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"--cert-dir", certDir}, etcd...), certDir},
		{append([]string{"--cert-dir", certDir, "--data-dir", dataDir}, etcd...), dataDir},
		{[]string{"--cert-dir", certDir}, "platd-data"},
		{etcd, "platd-data"},
	} {
		o, err := parse(t, append([]string{"serve"}, c.args...)...)
		if err != nil || o.DataDir != c.want {
			t.Errorf("%v: data dir %q, %v; want %q", c.args, o.DataDir, err, c.want)
		}
	}
}

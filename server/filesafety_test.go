package server_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server"
)

// startFails runs New with o and returns its error; a server that starts
// fails the test.
func startFails(t *testing.T, o config.Options) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(ctx, o, quietLog())
	if err == nil {
		cancel()
		_ = srv.Serve(ctx)
		t.Fatal("platd started")
	}
	return err
}

// A private file the operator supplied that group or others may read is
// refused at start with its flag, path, mode and the chmod to run, and
// nothing is written.
func TestOperatorFilesOpenToOthersRefused(t *testing.T) {
	t.Parallel()
	op := t.TempDir()
	ca, err := security.EnsureCA(op)
	if err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(op, "serving.crt"), filepath.Join(op, "serving.key")
	if err := ca.EnsureServingCert(cert, key, []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	saKey := filepath.Join(op, "sa.key")
	if _, err := security.EnsureServiceAccountKey(saKey); err != nil {
		t.Fatal(err)
	}
	enc := filepath.Join(op, "encryption.yaml")
	encYAML := "apiVersion: " + config.EncryptionConfigAPIVersions(platBrand)[0] + "\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n"
	if err := os.WriteFile(enc, []byte(encYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(op, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("tok,bob,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		flag, path string
		mode       fs.FileMode
		set        func(o *config.Options)
	}{
		{"--tls-private-key-file", key, 0o644, func(o *config.Options) { o.TLSCertFile, o.TLSPrivateKeyFile = cert, key }},
		{"--service-account-signing-key-file", saKey, 0o640, func(o *config.Options) {
			o.ServiceAccounts.SigningKeyFile = saKey
			o.ServiceAccounts.KeyFiles = []string{saKey}
		}},
		{"--service-account-key-file", saKey, 0o644, func(o *config.Options) { o.ServiceAccounts.KeyFiles = []string{saKey} }},
		{"--encryption-provider-config", enc, 0o604, func(o *config.Options) { o.EncryptionProviderConfigFile = enc }},
		{"--token-auth-file", tokens, 0o660, func(o *config.Options) { o.TokenAuthFile = tokens }},
	}
	for _, c := range cases {
		t.Run(c.flag, func(t *testing.T) {
			// Private, the file is accepted: the options are valid.
			dir := filepath.Join(t.TempDir(), "data")
			o := testOptions(t, dir, c.set)
			if err := os.Chmod(c.path, c.mode); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(c.path, 0o600)
			err := startFails(t, o)
			want := fmt.Sprintf("invalid configuration: %s %s has mode %04o: group or others may read or change it, and it holds secrets; make it private to platd's user: chmod 600 %s", c.flag, c.path, c.mode, c.path)
			if err.Error() != want || !errors.Is(err, config.ErrInvalid) {
				t.Errorf("error:\n%v\nwant\n%s", err, want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the refused start made the data directory: %v", err)
			}
			if fi, err := os.Stat(c.path); err != nil || fi.Mode().Perm() != c.mode {
				t.Errorf("the operator's file was changed: %v %v", fi.Mode(), err)
			}
		})
	}
}

// A public verification key may be readable by anyone.
func TestPublicKeyFileOpenToOthersAccepted(t *testing.T) {
	t.Parallel()
	key, err := security.EnsureServiceAccountKey(filepath.Join(t.TempDir(), "sa.key"))
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "sa.pub")
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pub, 0o644); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) { o.ServiceAccounts.KeyFiles = []string{pub} })
	e.do("GET", "/api/v1/namespaces/default", nil).mustCode(t, 200)
}

// The data directory and the private files platd generated in it, made
// readable by others (a copy, a restore, a umask), are made private again
// at start with a warning naming each; certificates stay public.
func TestGeneratedFileModesFixed(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	o := testOptions(t, dir)
	first := startWith(t, o)
	first.stop()
	widened := map[string]fs.FileMode{
		dir:                                    0o755,
		filepath.Join(dir, "pki"):              0o751,
		o.DBPath():                             0o644,
		o.KubeconfigPath():                     0o644,
		filepath.Join(dir, "pki", "ca.key"):    0o640,
		filepath.Join(dir, "pki", "admin.key"): 0o604,
		filepath.Join(dir, "pki", "apiserver.key"):                0o644,
		filepath.Join(dir, "pki", security.ServiceAccountKeyName): 0o666,
	}
	for p, m := range widened {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	var logs lockedBuffer
	e := startLogged(t, o, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if code := e.do("GET", "/api/v1/namespaces/default", nil).code; code != 200 {
		t.Errorf("GET after the fix: %d", code)
	}
	out := logs.String()
	for p, was := range widened {
		want := fs.FileMode(0o600)
		if fi, _ := os.Stat(p); fi.IsDir() {
			want = 0o700
		}
		line := fmt.Sprintf(`level=WARN msg="permissions fixed: group or others could reach a private file of platd" path=%s was=%04o now=%04o`, p, was, want)
		if !strings.Contains(out, line) {
			t.Errorf("no warning %s in\n%s", line, out)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %04o", p, fi.Mode().Perm(), err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "pki", "ca.crt")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("ca.crt: %v %v, want 0644 untouched", fi.Mode(), err)
	}
	// A second start finds nothing to fix.
	e.stop()
	var again lockedBuffer
	startLogged(t, o, slog.New(slog.NewTextHandler(&again, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if strings.Contains(again.String(), "permissions fixed") {
		t.Errorf("fixed again:\n%s", again.String())
	}
}

// An empty token file, or a token holding a space or a control byte, stops
// platd at start naming the file and line, before the data directory is
// made.
func TestTokenFileRefusedAtStart(t *testing.T) {
	t.Parallel()
	cases := []struct{ content, want string }{
		{"", "is empty: it needs at least one record"},
		{"# comment-free CSV\n", "must have at least 3 columns"},
		{"good,bob,1\n\"bad token\",alice,2\n", "line 2: the token holds a space at byte 4"},
		{"good,bob,1\nbad\x00token,alice,2\n", "line 2: the token holds the character U+0000 at byte 4"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			o := testOptions(t, dir)
			if err := os.WriteFile(o.TokenAuthFile, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := startFails(t, o)
			if !strings.HasPrefix(err.Error(), "invalid configuration: --token-auth-file: ") || !strings.Contains(err.Error(), "token file '"+o.TokenAuthFile+"'") ||
				!strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "token,alice") {
				t.Errorf("error %v, want %q naming %s", err, c.want, o.TokenAuthFile)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the refused start made the data directory: %v", err)
			}
		})
	}
}

// A data directory that exists empty (made by a package) is platd's and
// made private; one that already holds other files (a home directory)
// keeps its mode with a warning, and platd's own files in it are private.
func TestDataDirModeOfExistingDirectory(t *testing.T) {
	t.Parallel()
	for _, foreign := range []bool{false, true} {
		name := map[bool]string{false: "empty", true: "foreign"}[foreign]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if foreign {
				if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var logs lockedBuffer
			e := startLogged(t, testOptions(t, dir), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
			e.do("GET", "/api/v1/namespaces/default", nil).mustCode(t, 200)
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			want, line := fs.FileMode(0o700), fmt.Sprintf(`msg="permissions fixed: group or others could reach a private file of platd" path=%s was=0755 now=0700`, dir)
			if foreign {
				want, line = 0o755, fmt.Sprintf(`msg="directory open to group or others left as it is: it holds files that are not platd's" path=%s mode=0755`, dir)
			}
			if fi.Mode().Perm() != want || !strings.Contains(logs.String(), line) {
				t.Errorf("mode %v, want %04o; want %s in\n%s", fi.Mode().Perm(), want, line, logs.String())
			}
			for _, p := range []string{e.opts.DBPath(), e.opts.KubeconfigPath(), filepath.Join(dir, "pki", "ca.key")} {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v %v, want 0600", p, fi.Mode(), err)
				}
			}
		})
	}
}

//go:build unix

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
		filepath.Join(dir, "pki", "apiserver.key"):                         0o644,
		filepath.Join(dir, "pki", security.ServiceAccountKeyName):          0o644,
		filepath.Join(dir, "pki", "front-proxy"):                           0o755,
		filepath.Join(dir, "pki", "front-proxy", "ca.key"):                 0o644,
		filepath.Join(dir, "pki", "front-proxy", "front-proxy-client.key"): 0o640,
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
				want, line = 0o755, fmt.Sprintf(`msg="directory open to group or others left as it is" path=%s mode=0755 reason="it holds files that are not platd's"`, dir)
			}
			if fi.Mode().Perm() != want || !strings.Contains(logs.String(), line) {
				t.Errorf("mode %v, want %04o; want %s in\n%s", fi.Mode().Perm(), want, line, logs.String())
			}
			for _, p := range []string{e.opts.DBPath(), e.opts.KubeconfigPath(), filepath.Join(dir, "pki", "ca.key")} {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v %v, want 0600", p, fi.Mode(), err)
				}
			}
			// Platd's files next to the foreign one do not make the
			// directory platd's at the next start.
			e.stop()
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			startLogged(t, testOptions(t, dir), quietLog()).stop()
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != want {
				t.Errorf("after a second start: %v %v, want %04o", fi.Mode(), err, want)
			}
		})
	}
}

// A data directory owned by another user (a volume mounted with fsGroup,
// install -d -o root -g platd -m 0770) is not platd's to change: it keeps
// its mode at every start, with a warning.
func TestDataDirOfAnotherOwnerKeepsMode(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the directory to another user")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, dir)
	for i := range 2 {
		var logs lockedBuffer
		e := startLogged(t, o, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
		e.stop()
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o770 {
			t.Errorf("start %d: %v %v, want 0770 untouched", i, fi.Mode(), err)
		}
		line := fmt.Sprintf(`msg="directory open to group or others left as it is" path=%s mode=0770 reason="it is not owned by platd's user"`, dir)
		if !strings.Contains(logs.String(), line) {
			t.Errorf("start %d: no %s in\n%s", i, line, logs.String())
		}
	}
}

// A private file of platd, or platd's own data or key directory, that
// group or others may write to is refused, not repaired: it may have been
// replaced. A sticky directory is shared by design and only warned about.
func TestGeneratedFilesWritableByOthersRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	o := testOptions(t, dir)
	startWith(t, o).stop()
	saKey := filepath.Join(dir, "pki", security.ServiceAccountKeyName)
	cases := []struct {
		path string
		mode fs.FileMode
		want string
	}{
		{saKey, 0o666, fmt.Sprintf("%s has mode 0666: group or others may write to it, and so may have replaced it; check that it is platd's, then run chmod 600 %s", saKey, saKey)},
		{o.DBPath(), 0o620, fmt.Sprintf("%s has mode 0620: group or others may write to it, and so may have replaced it; check that it is platd's, then run chmod 600 %s", o.DBPath(), o.DBPath())},
		{dir, 0o775, fmt.Sprintf("%s has mode 0775: group or others may write to it, and so may have replaced platd's keys or data; check what it holds, then run chmod 700 %s", dir, dir)},
		{filepath.Join(dir, "pki"), 0o703, fmt.Sprintf("%[1]s has mode 0703: group or others may write to it, and so may have replaced platd's keys or data; check what it holds, then run chmod 700 %[1]s", filepath.Join(dir, "pki"))},
	}
	for _, c := range cases {
		if err := os.Chmod(c.path, c.mode); err != nil {
			t.Fatal(err)
		}
		err := startFails(t, o)
		if err.Error() != c.want {
			t.Errorf("error:\n%v\nwant\n%s", err, c.want)
		}
		if fi, err := os.Stat(c.path); err != nil || fi.Mode().Perm() != c.mode {
			t.Errorf("%s was changed: %v %v", c.path, fi.Mode(), err)
		}
		want := fs.FileMode(0o600)
		if fi, _ := os.Stat(c.path); fi.IsDir() {
			want = 0o700
		}
		if err := os.Chmod(c.path, want); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	startLogged(t, o, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))).stop()
	line := fmt.Sprintf(`msg="directory open to group or others left as it is" path=%s mode=0777 reason="it is a shared (sticky) directory"`, dir)
	if !strings.Contains(logs.String(), line) {
		t.Errorf("no %s in\n%s", line, logs.String())
	}
}

// A key that is a symbolic link (to a shared key) is never changed
// through the link: its target is checked as an operator's file and
// refused if others may reach it.
func TestGeneratedKeySymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	o := testOptions(t, dir)
	startWith(t, o).stop()
	key := filepath.Join(dir, "pki", "ca.key")
	shared := filepath.Join(t.TempDir(), "shared-ca.key")
	if err := os.Rename(key, shared); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, key); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o640); err != nil {
		t.Fatal(err)
	}
	err := startFails(t, o)
	want := fmt.Sprintf("%s is a symbolic link to a file with mode 0640: group or others may read or change it, and it holds secrets; platd never changes a link's target: make it private to platd's user: chmod 600 %s", key, key)
	if err.Error() != want {
		t.Errorf("error:\n%v\nwant\n%s", err, want)
	}
	if fi, err := os.Stat(shared); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the link's target was changed: %v %v", fi.Mode(), err)
	}
	// A private target is used as it is, and the link stays a link.
	if err := os.Chmod(shared, 0o600); err != nil {
		t.Fatal(err)
	}
	startWith(t, o).do("GET", "/api/v1/namespaces/default", nil).mustCode(t, 200)
	if fi, err := os.Lstat(key); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("ca.key is no longer a link: %v %v", fi.Mode(), err)
	}
}

// A start refused because another platd holds the data directory changes
// no mode in it: repairs wait for the lock.
func TestModesUntouchedWhenDataDirLocked(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	o := testOptions(t, dir)
	first := startWith(t, o)
	defer first.stop()
	key := filepath.Join(dir, "pki", "admin.key")
	for p, m := range map[string]fs.FileMode{dir: 0o750, key: 0o640} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := startFails(t, o); !strings.Contains(err.Error(), "another platd") {
		t.Errorf("second start: %v, want the lock refusal", err)
	}
	for p, m := range map[string]fs.FileMode{dir: 0o750, key: 0o640} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != m {
			t.Errorf("%s: %v %v, want %04o untouched by the refused start", p, fi.Mode(), err, m)
		}
	}
}

// A key directory shared with other tools (kubeadm's pki holds
// front-proxy and etcd keys next to ca.key, sa.key and apiserver.key)
// keeps its mode at every start, though it also holds platd's names.
func TestSharedCertDirKeepsMode(t *testing.T) {
	t.Parallel()
	certDir := filepath.Join(t.TempDir(), "pki")
	o := testOptions(t, filepath.Join(t.TempDir(), "data"), func(o *config.Options) { o.CertDir = certDir })
	startWith(t, o).stop()
	if err := os.WriteFile(filepath.Join(certDir, "front-proxy-ca.key"), []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := os.Chmod(certDir, 0o755); err != nil {
			t.Fatal(err)
		}
		var logs lockedBuffer
		startLogged(t, o, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))).stop()
		if fi, err := os.Stat(certDir); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("start %d: %v %v, want 0755 untouched", i, fi.Mode(), err)
		}
		line := fmt.Sprintf(`msg="directory open to group or others left as it is" path=%s mode=0755 reason="it holds files that are not platd's"`, certDir)
		if !strings.Contains(logs.String(), line) {
			t.Errorf("start %d: no %s in\n%s", i, line, logs.String())
		}
	}
}

package server

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"platd/config"
	"platd/security"
)

// preflighted is what the files named by flags hold, read before the
// data directory is touched.
type preflighted struct {
	tokens []config.Token
	// clientCAs is --client-ca-file, nil without it; New adds the data
	// directory's CA.
	clientCAs *security.CAFile
	remote    remoteAuth
	// proxyCert is --proxy-client-cert-file with its key, nil without.
	proxyCert *security.CertPair
}

// preflight reads and checks every file a flag names that New has not
// read yet. What cannot be built before the store opens (the authorizer
// chain) has its files read here too, and again when it is built: the
// files are small, and a failure then leaves nothing behind.
func (s *Server) preflight() (preflighted, error) {
	o := s.opts
	var p preflighted
	if err := checkOperatorFiles(o); err != nil {
		return p, err
	}
	if o.ClientCAFile != "" {
		var err error
		if p.clientCAs, err = security.LoadCAFile(o.ClientCAFile); errors.Is(err, security.ErrNoCertificates) {
			return p, fmt.Errorf("%w: --client-ca-file %s holds no PEM certificate", config.ErrInvalid, o.ClientCAFile)
		} else if err != nil {
			return p, fmt.Errorf("%w: --client-ca-file: %w", config.ErrInvalid, err)
		}
	}
	if o.TLSCertFile != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSPrivateKeyFile); err != nil {
			return p, fmt.Errorf("%w: --tls-cert-file, --tls-private-key-file: %w", config.ErrInvalid, err)
		}
	}
	var err error
	if p.proxyCert, err = loadProxyClientCert(o); err != nil {
		return p, err
	}
	if o.TokenAuthFile != "" {
		if p.tokens, err = config.ParseTokenFile(o.TokenAuthFile); err != nil {
			return p, fmt.Errorf("%w: --token-auth-file: %w", config.ErrInvalid, err)
		}
	}
	if p.remote, err = remoteAuthenticators(o); err != nil {
		return p, err
	}
	if err := s.checkAuthzFiles(); err != nil {
		return p, err
	}
	if o.UsesEtcd() {
		if s.etcdTLS, err = etcdTLS(o.Etcd); err != nil {
			return p, err
		}
	}
	// Last: a mode that must be refused stops the start before anything
	// is written; the repairs wait for the data directory's lock (New).
	return p, s.fixGeneratedModes(false)
}

// checkOperatorFiles refuses private files the operator supplied that
// others may reach (PostgreSQL's rule: operatorFileProblem): platd will
// not chmod a file it does not own the contents of, and serving with a
// key others can read would hide that it may already be copied.
func checkOperatorFiles(o config.Options) error {
	files := []struct{ flag, path string }{
		{"--tls-private-key-file", o.TLSPrivateKeyFile},
		{"--service-account-signing-key-file", o.ServiceAccounts.SigningKeyFile},
		{"--encryption-provider-config", o.EncryptionProviderConfigFile},
		{"--token-auth-file", o.TokenAuthFile},
		{"--etcd-keyfile", o.Etcd.KeyFile},
	}
	// Verification keys are public, but the flag also takes the signing
	// key's own file.
	for _, k := range o.ServiceAccounts.KeyFiles {
		if data, err := os.ReadFile(k); err == nil && bytes.Contains(data, []byte("PRIVATE KEY-----")) {
			files = append(files, struct{ flag, path string }{"--service-account-key-file", k})
		}
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		fi, err := os.Stat(f.path)
		if err != nil {
			continue // its reader reports it
		}
		if why, fix := flagFileProblem(fi, f.path); why != "" {
			return fmt.Errorf("%w: %s %s has mode %04o: %s, and it holds secrets; %s",
				config.ErrInvalid, f.flag, f.path, fi.Mode().Perm(), why, fix)
		}
	}
	return nil
}

// Modes of what platd writes into the data directory.
const (
	privateDirMode  fs.FileMode = 0o700
	privateFileMode fs.FileMode = 0o600
)

// fixGeneratedModes checks the data directory, the key directory and the
// private files platd generated in them. Read and search bits for group
// and others are removed, with a warning naming each (a copy, an archive
// restore or a umask may have widened them). Write bits are refused: whoever
// had them may have replaced a key, and a repair would hide it. Only what
// platd's user owns is changed, never through a symbolic link; a file
// owned by someone else, or reached through a link, is checked as an
// operator's file. A directory that is not platd's alone (other files in
// it, another owner: a home directory, /etc/kubernetes/pki, a volume
// mounted with fsGroup) keeps its mode with a warning: platd's files in
// it are private anyway. Certificates are public and left as they are.
// Without repair only the refusals are checked: nothing is changed or
// logged.
func (s *Server) fixGeneratedModes(repair bool) error {
	o := s.opts
	if o.DataDir != "" {
		own := []string{filepath.Base(o.DBPath()), filepath.Base(o.DBPath()) + ".defrag", filepath.Base(o.KubeconfigPath())}
		if filepath.Dir(o.CertDir) == filepath.Clean(o.DataDir) {
			own = append(own, filepath.Base(o.CertDir))
		}
		var prefix string
		if o.Audit.Path != "" && filepath.Dir(o.Audit.Path) == filepath.Clean(o.DataDir) {
			// The log and its rotated copies (name-time.ext).
			prefix = strings.TrimSuffix(filepath.Base(o.Audit.Path), filepath.Ext(o.Audit.Path))
		}
		if err := s.fixDir(o.DataDir, own, prefix, repair); err != nil {
			return err
		}
	}
	if o.CertDir != "" {
		own := []string{security.CAKeyName, caCertName, adminKeyName, adminCertName, security.ServiceAccountKeyName, servingKeyName, servingCertName, frontProxyDir}
		if err := s.fixDir(o.CertDir, own, "", repair); err != nil {
			return err
		}
		fp := []string{security.CAKeyName, caCertName, frontProxyKeyName, frontProxyCertName}
		if err := s.fixDir(filepath.Join(o.CertDir, frontProxyDir), fp, "", repair); err != nil {
			return err
		}
	}
	var files []string
	if o.DataDir != "" {
		files = append(files, o.DBPath(), o.KubeconfigPath())
	}
	if o.CertDir != "" {
		keys := []string{security.CAKeyName, adminKeyName, security.ServiceAccountKeyName}
		if o.TLSCertFile == "" {
			keys = append(keys, servingKeyName)
		}
		for _, k := range keys {
			files = append(files, filepath.Join(o.CertDir, k))
		}
		if makesFrontProxy(o) {
			for _, k := range []string{security.CAKeyName, frontProxyKeyName} {
				files = append(files, filepath.Join(o.CertDir, frontProxyDir, k))
			}
		}
	}
	for _, f := range files {
		if err := s.fixFile(f, repair); err != nil {
			return err
		}
	}
	return nil
}

// fixDir makes dir private if it is platd's: owned by platd's user, not
// a link, not sticky, and holding only the names own (their temporary
// files while written, and names starting with prefix when set). A
// directory is never a reason to refuse a start, except one of platd's
// own that group or others may write to.
func (s *Server) fixDir(dir string, own []string, prefix string, repair bool) error {
	lfi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	fi := lfi
	link := lfi.Mode()&fs.ModeSymlink != 0
	if link {
		if fi, err = os.Stat(dir); err != nil {
			return nil // the data directory's creation reports it
		}
	}
	if !fi.IsDir() || !openToOthers(fi.Mode()) {
		return nil
	}
	perm := fi.Mode().Perm()
	sticky := fi.Mode()&fs.ModeSticky != 0
	ours := ownedByUs(fi)
	if ours && !sticky && perm&writeBits != 0 {
		return fmt.Errorf("%s has mode %04o: group or others may write to it, and so may have replaced platd's keys or data; check what it holds, then run chmod %o %s",
			dir, perm, privateDirMode, dir)
	}
	if !repair {
		return nil
	}
	why := ""
	switch {
	case link:
		why = "it is reached through a symbolic link"
	case !ours:
		why = "it is not owned by platd's user"
	case sticky:
		why = "it is a shared (sticky) directory"
	case !onlyOwnNames(dir, own, prefix):
		why = "it holds files that are not platd's"
	}
	if why != "" {
		s.log.Warn("directory open to group or others left as it is", "path", dir, "mode", fmt.Sprintf("%04o", perm), "reason", why)
		return nil
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		s.log.Warn("directory open to group or others left as it is", "path", dir, "mode", fmt.Sprintf("%04o", perm), "reason", err.Error())
		return nil
	}
	defer d.Close()
	now, err := sameOpen(d, dir, fi)
	if err != nil {
		return err
	}
	return s.chmodHandle(d, dir, now, false)
}

// sameOpen returns what f, opened at path, is, as long as it is still the
// file checked as fi.
func sameOpen(f *os.File, path string, fi fs.FileInfo) (fs.FileInfo, error) {
	now, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", path, err)
	}
	if !os.SameFile(fi, now) {
		return nil, fmt.Errorf("checking %s: it changed while being checked", path)
	}
	return now, nil
}

// chmodHandle removes group and others' read and search bits from the
// file open as f, which sameOpen found to be now. A failed change of a
// directory is only a warning.
func (s *Server) chmodHandle(f *os.File, path string, now fs.FileInfo, refuse bool) error {
	was := now.Mode().Perm()
	want := was &^ privateBits
	if err := f.Chmod(want); err != nil {
		if !refuse {
			s.log.Warn("directory open to group or others left as it is", "path", path, "mode", fmt.Sprintf("%04o", was), "reason", err.Error())
			return nil
		}
		return fmt.Errorf("%s has mode %04o, open to group or others, and cannot be made %04o: %w; run chmod %o %s as its owner",
			path, was, want, err, want, path)
	}
	// Some file systems (vfat, drvfs) accept a chmod and keep nothing.
	if after, err := f.Stat(); err == nil && openToOthers(after.Mode()) {
		s.log.Warn("permissions could not be made private: the file system keeps no modes", "path", path, "mode", fmt.Sprintf("%04o", after.Mode().Perm()))
		return nil
	}
	s.log.Warn("permissions fixed: group or others could reach a private file of platd", "path", path, "was", fmt.Sprintf("%04o", was), "now", fmt.Sprintf("%04o", want))
	return nil
}

// fixFile makes a private file platd generated private again; see
// fixGeneratedModes.
func (s *Server) fixFile(path string, repair bool) error {
	lfi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", path, err)
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		if err != nil {
			return nil // its reader reports it
		}
		if why, fix := operatorFileProblem(fi, path); why != "" {
			return fmt.Errorf("%s is a symbolic link to a file with mode %04o: %s, and it holds secrets; platd never changes a link's target: %s",
				path, fi.Mode().Perm(), why, fix)
		}
		return nil
	}
	if !lfi.Mode().IsRegular() {
		return nil
	}
	if !ownedByUs(lfi) {
		if why, fix := operatorFileProblem(lfi, path); why != "" {
			return fmt.Errorf("%s has mode %04o: %s, and it holds secrets; platd changes only its own user's files: %s", path, lfi.Mode().Perm(), why, fix)
		}
		return nil
	}
	if !openToOthers(lfi.Mode()) {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return fmt.Errorf("checking %s: %w", path, err)
	}
	defer f.Close()
	fi, err := sameOpen(f, path, lfi)
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	if perm&writeBits != 0 {
		return fmt.Errorf("%s has mode %04o: group or others may write to it, and so may have replaced it; check that it is platd's, then run chmod %o %s",
			path, perm, privateFileMode, path)
	}
	if !repair || !openToOthers(fi.Mode()) {
		return nil
	}
	return s.chmodHandle(f, path, fi, true)
}

// onlyOwnNames reports whether every entry of dir is one of own, the
// temporary file of one (".name.tmp-*"), or starts with prefix.
func onlyOwnNames(dir string, own []string, prefix string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		n := e.Name()
		ok := slices.Contains(own, n) || prefix != "" && strings.HasPrefix(n, prefix)
		for _, o := range own {
			ok = ok || strings.HasPrefix(n, "."+o+".tmp-")
		}
		if !ok {
			return false
		}
	}
	return true
}

// checkAuthzFiles reads the authorizers' files: the chain itself is built
// once the store is open, as RBAC and Node read it.
func (s *Server) checkAuthzFiles() error {
	o := s.opts
	if path := o.AuthorizationConfigFile; path != "" {
		c, _, err := s.loadAuthzConfig(path)
		if err != nil {
			return fmt.Errorf("%w: --authorization-config: %w", config.ErrInvalid, err)
		}
		for _, a := range c.Authorizers {
			if a.Type != config.ModeWebhook || a.Webhook == nil {
				continue
			}
			if _, err := webhookClient(a.Webhook.ConnectionInfo); err != nil {
				return fmt.Errorf("--authorization-config: %w: authorizer %q: %w", config.ErrInvalid, a.Name, err)
			}
		}
		return nil
	}
	if slices.Contains(o.AuthorizationModes, config.ModeWebhook) {
		if _, err := config.LoadKubeconfigClient(o.AuthorizationWebhook.ConfigFile); err != nil {
			return fmt.Errorf("%w: --authorization-webhook-config-file: %w", config.ErrInvalid, err)
		}
	}
	return nil
}

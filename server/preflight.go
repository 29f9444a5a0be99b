package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"platd/config"
	"platd/security"
)

// preflighted is what the files named by flags hold, read before the
// data directory is touched.
type preflighted struct {
	tokens []config.Token
	// clientCAs holds --client-ca-file; New adds the data directory's CA.
	clientCAs *x509.CertPool
	remote    remoteAuth
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
	p.clientCAs = x509.NewCertPool()
	if o.ClientCAFile != "" {
		pem, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return p, fmt.Errorf("%w: --client-ca-file: %w", config.ErrInvalid, err)
		}
		if !p.clientCAs.AppendCertsFromPEM(pem) {
			return p, fmt.Errorf("%w: --client-ca-file %s holds no PEM certificate", config.ErrInvalid, o.ClientCAFile)
		}
	}
	if o.TLSCertFile != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSPrivateKeyFile); err != nil {
			return p, fmt.Errorf("%w: --tls-cert-file, --tls-private-key-file: %w", config.ErrInvalid, err)
		}
	}
	if o.TokenAuthFile != "" {
		var err error
		if p.tokens, err = config.ParseTokenFile(o.TokenAuthFile); err != nil {
			return p, fmt.Errorf("%w: --token-auth-file: %w", config.ErrInvalid, err)
		}
	}
	var err error
	if p.remote, err = remoteAuthenticators(o); err != nil {
		return p, err
	}
	if err := s.checkAuthzFiles(); err != nil {
		return p, err
	}
	// Last: nothing is changed unless every check passed.
	return p, s.fixGeneratedModes()
}

// checkOperatorFiles refuses private files the operator supplied that
// group or others may read or write: platd will not chmod a file it does
// not own the contents of, and serving with a key others can read would
// hide that it may already be copied.
func checkOperatorFiles(o config.Options) error {
	files := []struct{ flag, path string }{
		{"--tls-private-key-file", o.TLSPrivateKeyFile},
		{"--service-account-signing-key-file", o.ServiceAccounts.SigningKeyFile},
		{"--encryption-provider-config", o.EncryptionProviderConfigFile},
		{"--token-auth-file", o.TokenAuthFile},
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
		if openToOthers(fi.Mode()) {
			return fmt.Errorf("%w: %s %s has mode %04o: group or others may read or change it, and it holds secrets; make it private to platd's user: chmod 600 %s",
				config.ErrInvalid, f.flag, f.path, fi.Mode().Perm(), f.path)
		}
	}
	return nil
}

// Modes of what platd writes into the data directory.
const (
	privateDirMode  fs.FileMode = 0o700
	privateFileMode fs.FileMode = 0o600
)

// fixGeneratedModes makes the data directory, the key directory and the
// private files platd generated in them private again, with a warning
// naming each: they are platd's own, so it repairs rather than refuses
// (a copy, an archive restore or a umask may have widened them).
// Public files (certificates) are left as they are. A directory is
// platd's when it is empty or holds platd's marker file (the database,
// the CA key); another (--data-dir /tmp or a home directory) keeps its
// mode, with a warning: platd's files in it are private anyway.
func (s *Server) fixGeneratedModes() error {
	o := s.opts
	type private struct {
		path   string
		mode   fs.FileMode
		marker string // a directory's file that shows it is platd's
	}
	var paths []private
	if o.DataDir != "" {
		paths = append(paths, private{o.DataDir, privateDirMode, o.DBPath()}, private{path: o.DBPath(), mode: privateFileMode}, private{path: o.KubeconfigPath(), mode: privateFileMode})
	}
	if o.CertDir != "" {
		keys := []string{security.CAKeyName, adminKeyName, security.ServiceAccountKeyName}
		if o.TLSCertFile == "" {
			keys = append(keys, servingKeyName)
		}
		paths = append(paths, private{o.CertDir, privateDirMode, filepath.Join(o.CertDir, security.CAKeyName)})
		for _, k := range keys {
			paths = append(paths, private{path: filepath.Join(o.CertDir, k), mode: privateFileMode})
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", p.path, err)
		}
		if !openToOthers(fi.Mode()) {
			continue
		}
		was := fmt.Sprintf("%04o", fi.Mode().Perm())
		if fi.IsDir() && !platdsDir(p.path, p.marker) {
			s.log.Warn("directory open to group or others left as it is: it holds files that are not platd's", "path", p.path, "mode", was)
			continue
		}
		if err := os.Chmod(p.path, p.mode); err != nil {
			return fmt.Errorf("%s has mode %s, open to group or others, and cannot be made %04o: %w; run chmod %o %s as its owner",
				p.path, was, p.mode, err, p.mode, p.path)
		}
		s.log.Warn("permissions fixed: group or others could reach a private file of platd", "path", p.path, "was", was, "now", fmt.Sprintf("%04o", p.mode))
	}
	return nil
}

// platdsDir reports whether dir holds marker or nothing at all; a sticky
// directory (/tmp) is never platd's.
func platdsDir(dir, marker string) bool {
	if fi, err := os.Stat(dir); err != nil || fi.Mode()&fs.ModeSticky != 0 {
		return false
	}
	if _, err := os.Stat(marker); err == nil {
		return true
	}
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(1)
	return len(names) == 0
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

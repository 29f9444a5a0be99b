package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platd/config"
)

func TestServiceAccountFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := parse(t, "serve", "--data-dir", dir, "--service-account-issuer", "https://a.example", "--service-account-issuer", "https://b.example",
		"--api-audiences", "api,vault", "--service-account-max-token-expiration", "48h", "--service-account-lookup=false",
		"--service-account-extend-token-expiration=false")
	if err != nil {
		t.Fatal(err)
	}
	sa := o.ServiceAccounts
	if strings.Join(sa.Issuers, " ") != "https://a.example https://b.example" || strings.Join(sa.Audiences(), " ") != "api vault" ||
		sa.MaxTokenExpiration != 48*time.Hour || !sa.NoLookup || !sa.NoExtendTokenExpiration || sa.SignIssuer() != "https://a.example" {
		t.Errorf("service account options: %+v", sa)
	}
	o, err = parse(t, "serve", "--data-dir", dir)
	if err != nil || o.ServiceAccounts.NoLookup || o.ServiceAccounts.NoExtendTokenExpiration || o.ServiceAccounts.SignIssuer() != config.DefaultServiceAccountIssuer(o.Brand) {
		t.Errorf("defaults: %+v %v", o.ServiceAccounts, err)
	}
	// A bad key file stops platd at start, naming the file and the problem.
	bad := filepath.Join(t.TempDir(), "sa.pub")
	if err := os.WriteFile(bad, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = parse(t, "serve", "--data-dir", dir, "--service-account-key-file", bad)
	if want := "--service-account-key-file " + bad + ": no RSA or ECDSA key found in the PEM data"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, config.ErrInvalid) {
		t.Errorf("bad key file: %v, want %q (exit code 2)", err, want)
	}
}

package server

import (
	"crypto/tls"
	"fmt"
	"path/filepath"

	"platd/config"
	"platd/security"
)

// The front proxy's key material platd makes when neither
// --proxy-client-cert-file nor --requestheader-client-ca-file is given, as
// kubeadm makes it for a cluster: a CA of its own in <cert-dir>/front-proxy
// and a client pair it signs for front-proxy-client. The server then runs
// as kubeadm starts kube-apiserver: it proxies with that pair and trusts
// that CA for request-header authentication, which the authentication
// ConfigMap publishes, so extension servers trust the proxied users.
const (
	frontProxyDir        = "front-proxy"
	frontProxyClientName = "front-proxy-client"
	frontProxyCertName   = "front-proxy-client.crt"
	frontProxyKeyName    = "front-proxy-client.key"
)

// makesFrontProxy reports whether the front proxy's key material is
// generated: the operator named neither a proxy client certificate nor a
// request-header CA.
func makesFrontProxy(o config.Options) bool {
	return o.ProxyClientCertFile == "" && o.RequestHeader.ClientCAFile == ""
}

// ensureFrontProxy makes or reuses the front proxy's CA and client pair
// under certDir. The caller holds the key directory's lock.
func ensureFrontProxy(certDir string) error {
	dir := filepath.Join(certDir, frontProxyDir)
	ca, err := security.EnsureCA(dir)
	if err != nil {
		return fmt.Errorf("preparing the front-proxy CA in %s: %w", dir, err)
	}
	if err := ca.EnsureClientCert(filepath.Join(dir, frontProxyCertName), filepath.Join(dir, frontProxyKeyName), frontProxyClientName, nil); err != nil {
		return fmt.Errorf("preparing the front-proxy client certificate: %w", err)
	}
	return nil
}

// withFrontProxy is o with the generated material in the flags kubeadm
// passes: the client pair, the CA as the request-header CA for
// front-proxy-client, and the standard X-Remote-* headers.
func withFrontProxy(o config.Options) config.Options {
	dir := filepath.Join(o.CertDir, frontProxyDir)
	o.ProxyClientCertFile, o.ProxyClientKeyFile = filepath.Join(dir, frontProxyCertName), filepath.Join(dir, frontProxyKeyName)
	o.RequestHeader.ClientCAFile = filepath.Join(dir, "ca.crt")
	o.RequestHeader.AllowedNames = []string{frontProxyClientName}
	o.RequestHeader.UsernameHeaders = []string{"X-Remote-User"}
	o.RequestHeader.GroupHeaders = []string{"X-Remote-Group"}
	o.RequestHeader.ExtraHeadersPrefix = []string{"X-Remote-Extra-"}
	return o
}

// loadProxyClientCert reads --proxy-client-cert-file and its key,
// re-read when they change; nil without them.
func loadProxyClientCert(o config.Options) (*security.CertPair, error) {
	if o.ProxyClientCertFile == "" {
		return nil, nil
	}
	// Read once as such for the loader's own words in the error.
	if _, err := tls.LoadX509KeyPair(o.ProxyClientCertFile, o.ProxyClientKeyFile); err != nil {
		return nil, fmt.Errorf("%w: --proxy-client-cert-file, --proxy-client-key-file: %w", config.ErrInvalid, err)
	}
	pair, err := security.LoadCertPair(o.ProxyClientCertFile, o.ProxyClientKeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: --proxy-client-cert-file, --proxy-client-key-file: %w", config.ErrInvalid, err)
	}
	return pair, nil
}

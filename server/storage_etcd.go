package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"platd/bolt"
	"platd/config"
)

// etcdTLS is the client TLS configuration of the --etcd-* files: nil when
// no member is reached over TLS. Its errors are configuration errors,
// found before the data directory is touched.
func etcdTLS(e config.EtcdOptions) (*tls.Config, error) {
	secure := e.CAFile != "" || e.CertFile != ""
	for _, s := range e.Servers {
		secure = secure || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "unixs://")
	}
	if !secure {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if e.CAFile != "" {
		pem, err := os.ReadFile(e.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --etcd-cafile: %w", config.ErrInvalid, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: --etcd-cafile %s holds no PEM certificate", config.ErrInvalid, e.CAFile)
		}
	}
	if e.CertFile != "" {
		for _, f := range []struct{ flag, path string }{{"--etcd-certfile", e.CertFile}, {"--etcd-keyfile", e.KeyFile}} {
			if _, err := os.Stat(f.path); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", config.ErrInvalid, f.flag, err)
			}
		}
		pair, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --etcd-certfile %s and --etcd-keyfile %s are not a certificate and its key: %w", config.ErrInvalid, e.CertFile, e.KeyFile, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// openEtcd opens the etcd engine of --etcd-servers.
func openEtcd(context.Context, *Server, bolt.Transformer) (bolt.Store, error) {
	return nil, fmt.Errorf("%w: --storage-backend=%s: this build has no etcd engine", config.ErrInvalid, config.StorageBackendETCD3)
}

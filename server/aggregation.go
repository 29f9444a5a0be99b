package server

import (
	"crypto/tls"
	"slices"

	"platd/config"
	"platd/security"
	"platd/server/aggregator"
)

// newAggregator builds the proxy to extension API servers, presenting
// cert (--proxy-client-cert-file, as it is reloaded) when given. Without
// one it proxies all the same, as upstream's kube-apiserver does, and
// says that extension servers cannot tell its requests from anyone's.
func (s *Server) newAggregator(cert *security.CertPair) *aggregator.Aggregator {
	var clientCert func() *tls.Certificate
	if cert != nil {
		clientCert = cert.Current
	} else {
		s.log.Warn("no --proxy-client-cert-file: requests proxied to extension API servers carry no client certificate, so those servers cannot trust the users they name")
	}
	return aggregator.New(aggregator.Config{
		Objects:        s.rest,
		APIServices:    s.reg.Lookup(s.opts.Brand.Group("apiregistration"), "v1", "apiservices"),
		Services:       s.reg.Lookup("", "v1", "services"),
		Endpoints:      s.reg.Lookup("", "v1", "endpoints"),
		ClientCert:     clientCert,
		AllowRedirects: s.opts.AggregatorAllowRedirects,
		SendUID:        s.opts.FeatureGates.Enabled(config.RemoteRequestHeaderUID),
		// Extension servers built on upstream's libraries know
		// upstream's discovery group only.
		DiscoveryGroups: slices.Compact([]string{s.opts.Brand.DiscoveryGroup(), config.Brands["kubernetes"].DiscoveryGroup()}),
		Log:             s.log,
	})
}

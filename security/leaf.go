package security

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EnsureServingCert makes certFile and keyFile hold a serving certificate
// of this CA for hosts. An existing pair is kept when it matches, is signed
// by this CA for server authentication, does not expire within 30 days and
// covers every host; otherwise a new pair (ECDSA P-256, one year, IP hosts
// as IP SANs and the rest as DNS SANs) replaces it atomically.
func (ca *CA) EnsureServingCert(certFile, keyFile string, hosts []string) error {
	covers := func(c *x509.Certificate) string {
		for _, h := range hosts {
			if h != "" && !certCovers(c, h) {
				return "does not cover " + h
			}
		}
		return ""
	}
	why := ca.reuseVerdict(certFile, keyFile, x509.ExtKeyUsageServerAuth, covers)
	if why == "" {
		return nil
	}
	slog.Info("issuing certificate", "file", certFile, "reason", why)
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: issuedCNPrefix + strconv.FormatInt(time.Now().Unix(), 10)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h = strings.TrimSuffix(h, "."); h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issueFiles(certFile, keyFile, tmpl)
}

// issuedCNPrefix starts the common name of every serving certificate
// EnsureServingCert issues.
const issuedCNPrefix = "platd@"

// IssuedElsewhere reports whether certFile and keyFile hold a usable
// serving pair that EnsureServingCert did not issue: one an operator or
// a tool put there, to be served as it is.
func IssuedElsewhere(certFile, keyFile string) bool {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return false
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return false
		}
	}
	return !strings.HasPrefix(leaf.Subject.CommonName, issuedCNPrefix)
}

// EnsureClientCert makes certFile and keyFile hold a client certificate of
// this CA with subject CN commonName and O orgs (which the x509
// authenticator maps to user and groups). An existing pair is kept when it
// matches, is signed by this CA for client authentication, has exactly that
// subject and does not expire within 30 days; otherwise a new one-year pair
// replaces it atomically.
func (ca *CA) EnsureClientCert(certFile, keyFile, commonName string, orgs []string) error {
	subject := func(c *x509.Certificate) string {
		if c.Subject.CommonName != commonName || !slices.Equal(c.Subject.Organization, orgs) {
			return "subject differs"
		}
		return ""
	}
	why := ca.reuseVerdict(certFile, keyFile, x509.ExtKeyUsageClientAuth, subject)
	if why == "" {
		return nil
	}
	slog.Info("issuing certificate", "file", certFile, "reason", why)
	tmpl := &x509.Certificate{
		Subject:     subjectName(commonName, orgs),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return ca.issueFiles(certFile, keyFile, tmpl)
}

// issueFiles signs tmpl and writes the pair, key first: a crash between the
// two writes leaves a mismatched pair, which the next start reissues.
func (ca *CA) issueFiles(certFile, keyFile string, tmpl *x509.Certificate) error {
	certPEM, keyPEM, err := ca.issue(tmpl)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(keyFile, keyPEM, privateFileMode); err != nil {
		return err
	}
	return writeFileAtomic(certFile, certPEM, publicFileMode)
}

// reuseVerdict returns "" when the pair on disk can be kept, otherwise why
// not. check adds a caller-specific condition in the same form.
func (ca *CA) reuseVerdict(certFile, keyFile string, usage x509.ExtKeyUsage, check func(*x509.Certificate) string) string {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		return "unusable: " + err.Error()
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return "unusable: " + err.Error()
		}
	}
	now := time.Now()
	opts := x509.VerifyOptions{Roots: ca.CertPool(), KeyUsages: []x509.ExtKeyUsage{usage}, CurrentTime: now}
	if _, err := leaf.Verify(opts); err != nil {
		return "not valid for this CA: " + err.Error()
	}
	if leaf.NotAfter.Before(now.Add(renewBefore)) {
		return "expires " + leaf.NotAfter.Format(time.RFC3339)
	}
	return check(leaf)
}

// certCovers reports whether c names host: an IP host must be an IP SAN, a
// name must be a DNS SAN (compared case-insensitively).
func certCovers(c *x509.Certificate, host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return slices.ContainsFunc(c.IPAddresses, ip.Equal)
	}
	host = strings.TrimSuffix(host, ".")
	return slices.ContainsFunc(c.DNSNames, func(n string) bool { return strings.EqualFold(n, host) })
}

// oidOrganization is the X.500 attribute type of O.
var oidOrganization = asn1.ObjectIdentifier{2, 5, 4, 10}

// subjectName builds a subject whose O values keep the given order: each is
// its own relative distinguished name, whereas pkix.Name.Organization puts
// them in one DER set, which sorts them.
func subjectName(cn string, orgs []string) pkix.Name {
	n := pkix.Name{CommonName: cn}
	for _, o := range orgs {
		n.ExtraNames = append(n.ExtraNames, pkix.AttributeTypeAndValue{Type: oidOrganization, Value: o})
	}
	return n
}

// IssueClientCert returns a new one-year client certificate of this CA
// with subject CN commonName and O orgs, which the x509 authenticator maps
// to user and groups, and its key, both PEM.
func (ca *CA) IssueClientCert(commonName string, orgs []string) (certPEM, keyPEM []byte, err error) {
	return ca.issue(&x509.Certificate{
		Subject:     subjectName(commonName, orgs),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

package security

import (
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Signing policy of certificates issued for signing requests, upstream's
// controller manager's: the validity starts backdated, so that a peer
// whose clock lags accepts the certificate at once, and ends as much
// earlier, except for short-lived certificates, whose lifetime the
// backdating would cut by too much.
const (
	requestBackdate = 5 * time.Minute
	requestShort    = 8 * time.Hour
)

// keyUsages and extKeyUsages map the key usages a signing request names
// (spec.usages) to the certificate's extensions.
var (
	keyUsages = map[string]x509.KeyUsage{
		"signing":            x509.KeyUsageDigitalSignature,
		"digital signature":  x509.KeyUsageDigitalSignature,
		"content commitment": x509.KeyUsageContentCommitment,
		"key encipherment":   x509.KeyUsageKeyEncipherment,
		"key agreement":      x509.KeyUsageKeyAgreement,
		"data encipherment":  x509.KeyUsageDataEncipherment,
		"cert sign":          x509.KeyUsageCertSign,
		"crl sign":           x509.KeyUsageCRLSign,
		"encipher only":      x509.KeyUsageEncipherOnly,
		"decipher only":      x509.KeyUsageDecipherOnly,
	}
	extKeyUsages = map[string]x509.ExtKeyUsage{
		"any":              x509.ExtKeyUsageAny,
		"server auth":      x509.ExtKeyUsageServerAuth,
		"client auth":      x509.ExtKeyUsageClientAuth,
		"code signing":     x509.ExtKeyUsageCodeSigning,
		"email protection": x509.ExtKeyUsageEmailProtection,
		"s/mime":           x509.ExtKeyUsageEmailProtection,
		"ipsec end system": x509.ExtKeyUsageIPSECEndSystem,
		"ipsec tunnel":     x509.ExtKeyUsageIPSECTunnel,
		"ipsec user":       x509.ExtKeyUsageIPSECUser,
		"timestamping":     x509.ExtKeyUsageTimeStamping,
		"ocsp signing":     x509.ExtKeyUsageOCSPSigning,
		"microsoft sgc":    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
		"netscape sgc":     x509.ExtKeyUsageNetscapeServerGatedCrypto,
	}
)

// SignRequest issues the certificate a signing request asks for: its
// subject, subject alternative names and public key, the usages named
// (and no other extension of the request), not a CA, valid from now
// less requestBackdate for ttl (less the backdating unless ttl is short),
// and never beyond the CA's own validity. It returns the certificate PEM;
// the errors are upstream's.
func (ca *CA) SignRequest(req *x509.CertificateRequest, usages []string, ttl time.Duration, now time.Time) ([]byte, error) {
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %v", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %v", req.Subject.CommonName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.Subject,
		DNSNames:              req.DNSNames,
		IPAddresses:           req.IPAddresses,
		EmailAddresses:        req.EmailAddresses,
		URIs:                  req.URIs,
		PublicKeyAlgorithm:    req.PublicKeyAlgorithm,
		PublicKey:             req.PublicKey,
		BasicConstraintsValid: true,
	}
	var unrecognized []string
	for _, u := range usages {
		if k, ok := keyUsages[u]; ok {
			tmpl.KeyUsage |= k
		} else if e, ok := extKeyUsages[u]; ok {
			if !slices.Contains(tmpl.ExtKeyUsage, e) {
				tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, e)
			}
		} else {
			unrecognized = append(unrecognized, u)
		}
	}
	if len(unrecognized) > 0 {
		return nil, fmt.Errorf("unrecognized usage values: %q", unrecognized)
	}
	slices.Sort(tmpl.ExtKeyUsage)
	tmpl.NotBefore = now.Add(-requestBackdate)
	if ttl < requestShort {
		tmpl.NotAfter = now.Add(ttl)
	} else {
		tmpl.NotAfter = now.Add(ttl - requestBackdate)
	}
	caEnd := ca.cert.NotAfter
	if !tmpl.NotAfter.Before(caEnd) {
		tmpl.NotAfter = caEnd
	}
	if !tmpl.NotBefore.Before(caEnd) {
		return nil, fmt.Errorf("the signer has expired: NotAfter=%v", caEnd)
	}
	if !now.Before(caEnd) {
		return nil, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", caEnd)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %v", err)
	}
	return encodeCert(der), nil
}

// The rules a request must follow for the signers of kubelets and API
// clients, upstream's, with its words.
var (
	errNotSystemNodes  = errors.New("subject organization is not system:nodes")
	errNotSystemNode   = errors.New("subject common name does not begin with system:node:")
	errDNSOrIPRequired = errors.New("DNS or IP subjectAltName is required")
	errDNSSAN          = errors.New("DNS subjectAltNames are not allowed")
	errEmailSAN        = errors.New("Email subjectAltNames are not allowed")
	errIPSAN           = errors.New("IP subjectAltNames are not allowed")
	errURISAN          = errors.New("URI subjectAltNames are not allowed")
)

// nodeOrganization is the group of kubelets, the only organization their
// certificates may name.
const nodeOrganization = "system:nodes"

// nodeUserPrefix starts the user names of kubelets.
const nodeUserPrefix = "system:node:"

// usagesAre reports whether usages, as a set, is one of the sets given.
func usagesAre(usages []string, sets ...[]string) bool {
	have := map[string]bool{}
	for _, u := range usages {
		have[u] = true
	}
	for _, s := range sets {
		if len(have) != len(s) {
			continue
		}
		all := true
		for _, u := range s {
			all = all && have[u]
		}
		if all {
			return true
		}
	}
	return false
}

// KubeletServingRequest checks a request to the kubelet serving signer: a
// kubelet's name, DNS or IP names only, and a server's usages.
func KubeletServingRequest(req *x509.CertificateRequest, usages []string) error {
	if !slices.Equal(req.Subject.Organization, []string{nodeOrganization}) {
		return errNotSystemNodes
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errDNSOrIPRequired
	}
	if len(req.EmailAddresses) > 0 {
		return errEmailSAN
	}
	if len(req.URIs) > 0 {
		return errURISAN
	}
	rsa := []string{"digital signature", "key encipherment", "server auth"}
	if !usagesAre(usages, rsa, []string{"digital signature", "server auth"}) {
		return fmt.Errorf("usages did not match %v", sorted(rsa))
	}
	if !strings.HasPrefix(req.Subject.CommonName, nodeUserPrefix) {
		return errNotSystemNode
	}
	return nil
}

// KubeletClientRequest checks a request to the kubelet client signer: a
// kubelet's name, no alternative names, and a client's usages.
func KubeletClientRequest(req *x509.CertificateRequest, usages []string) error {
	if !slices.Equal(req.Subject.Organization, []string{nodeOrganization}) {
		return errNotSystemNodes
	}
	switch {
	case len(req.DNSNames) > 0:
		return errDNSSAN
	case len(req.EmailAddresses) > 0:
		return errEmailSAN
	case len(req.IPAddresses) > 0:
		return errIPSAN
	case len(req.URIs) > 0:
		return errURISAN
	}
	if !strings.HasPrefix(req.Subject.CommonName, nodeUserPrefix) {
		return errNotSystemNode
	}
	rsa := []string{"digital signature", "key encipherment", "client auth"}
	if !usagesAre(usages, rsa, []string{"digital signature", "client auth"}) {
		return fmt.Errorf("usages did not match %v", sorted(rsa))
	}
	return nil
}

// ClientRequest checks a request to the API client signer: client auth,
// and no usage but the optional digital signature and key encipherment.
func ClientRequest(_ *x509.CertificateRequest, usages []string) error {
	client := false
	for _, u := range usages {
		switch u {
		case "digital signature", "key encipherment":
		case "client auth":
			client = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !client {
		return errors.New("missing required usage for client certificate: client auth")
	}
	return nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

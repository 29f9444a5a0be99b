package builtin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// Verbs on the signers resource of the certificates group: approve lets a
// user approve or deny requests for a signer, sign issue their
// certificates.
const (
	verbApprove = "approve"
	verbSign    = "sign"
)

// csrAdmission checks certificate signing request writes as upstream's
// certificate admission plugins do, once a write is valid: deciding a
// request needs the approve verb on its signer, issuing its certificate
// the sign verb, and a request for a client certificate of the API server
// may not ask for the privileged group.
type csrAdmission struct {
	// group and resource name the certificates group and its requests.
	group, resource string
	// az is the server's authorizer chain; nil refuses every check.
	az security.Authorizer
	// clientSigner is the brand's signer of the API server's client
	// certificates.
	clientSigner string
	// enabled says whether an admission plugin runs; nil: all three.
	enabled func(plugin string) bool
}

// on reports whether the certificate admission plugin runs.
func (a csrAdmission) on(plugin string) bool { return a.enabled == nil || a.enabled(plugin) }

// admit is the type's Admit hook.
func (a csrAdmission) admit(ctx context.Context, who registry.Requester, sub string, obj, old registry.Object) error {
	// The stored request names the signer: the spec never changes.
	signer := str(old, "spec", "signerName")
	switch {
	case sub == "" && old == nil:
		if !a.on(config.PluginCertificateSubjectRestriction) {
			return nil
		}
		return a.admitCreate(obj)
	case sub == "approval" && a.on(config.PluginCertificateApproval):
		if !a.mayUseSigner(ctx, who, verbApprove, signer) {
			return a.forbidden(obj, fmt.Sprintf("user not permitted to approve requests with signerName %q", signer))
		}
	case sub == "status" && a.on(config.PluginCertificateSigning) && certificateChanged(obj, old):
		if !a.mayUseSigner(ctx, who, verbSign, signer) {
			return a.forbidden(obj, fmt.Sprintf("user not permitted to sign requests with signerName %q", signer))
		}
	}
	return nil
}

// admitCreate refuses a request for a client certificate of the API
// server whose subject names the privileged group among its
// organizations: that certificate would bypass authorization.
func (a csrAdmission) admitCreate(obj registry.Object) error {
	if str(obj, "spec", "signerName") != a.clientSigner {
		return nil
	}
	csr, err := parseCSR(decodeBytes(str(obj, "spec", "request")))
	if err != nil {
		return a.forbidden(obj, fmt.Sprintf("failed to parse CSR: %v", err))
	}
	if slices.Contains(csr.Subject.Organization, security.SystemPrivilegedGroup) {
		return a.forbidden(obj, fmt.Sprintf("use of %s signer with %s group is not allowed", a.clientSigner, security.SystemPrivilegedGroup))
	}
	return nil
}

// certificateChanged reports whether obj's status.certificate differs from
// old's. As upstream compares the bytes, an empty certificate differs
// from none.
func certificateChanged(obj, old registry.Object) bool {
	cert, set := valueAt(obj, "status", "certificate").(string)
	oldCert, oldSet := valueAt(old, "status", "certificate").(string)
	return set != oldSet || cert != oldCert
}

// mayUseSigner reports whether who may verb the signers resource named
// signer, or every signer of its domain ("<domain>/*").
func (a csrAdmission) mayUseSigner(ctx context.Context, who registry.Requester, verb, signer string) bool {
	if a.az == nil {
		return false
	}
	u := &security.User{Name: who.Name, UID: who.UID, Groups: who.Groups, Extra: who.Extra}
	domain, _, _ := strings.Cut(signer, "/")
	for _, name := range []string{signer, domain + "/*"} {
		d, _, err := a.az.Authorize(ctx, security.Attributes{User: u, Verb: verb, APIGroup: a.group, APIVersion: "*",
			Resource: "signers", Name: name, ResourceRequest: true})
		if err == nil && d == security.DecisionAllow {
			return true
		}
	}
	return false
}

// forbidden is the 403 of a refused write of obj, worded as upstream's
// admission refusals.
func (a csrAdmission) forbidden(obj registry.Object, msg string) error {
	name := str(obj, "metadata", "name")
	return apierr.NewForbidden(a.group, a.resource, name, fmt.Sprintf("%s.%s %q is forbidden: %s", a.resource, a.group, name, msg))
}

package builtin

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

// Condition types of a certificate signing request. Approved, Denied and
// Failed are only ever True, and once set stay.
const (
	csrApproved = "Approved"
	csrDenied   = "Denied"
	csrFailed   = "Failed"
)

// minCSRExpirationSeconds is the shortest certificate lifetime a request
// may ask for: ten minutes.
const minCSRExpirationSeconds = 600

// csrUsages are the key usages a request may name, sorted as upstream
// lists them.
var csrUsages = sortedCopy(
	"signing", "digital signature", "content commitment", "key encipherment", "key agreement",
	"data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
	"server auth", "client auth", "code signing", "email protection", "s/mime",
	"ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
	"microsoft sgc", "netscape sgc",
)

func certificatesV1(b config.Brand, sv Services) []*registry.Descriptor {
	return []*registry.Descriptor{certificateSigningRequests(b, sv)}
}

// csrRules holds the brand's legacy signer name, which the v1 API refuses.
type csrRules struct{ legacySigner string }

// csrOptions are the rules an update relaxes: what its subresource may
// write, and what the stored request already breaks (kept for
// compatibility with objects stored by older servers).
type csrOptions struct {
	setApproval, setCertificate                              bool
	bothApprovedAndDenied, legacySigner, duplicateConditions bool
	emptyConditionType, arbitraryCertificate                 bool
	unknownUsages, duplicateUsages                           bool
}

// certificateSigningRequests: a request for a certificate. Its spec never
// changes; the approval subresource writes the conditions and the status
// subresource the issued certificate.
// The requester fields of the spec (username, uid, groups, extra) are
// the creating user's, whatever the request sent. Writing through the
// approval subresource needs the approve verb on the request's signer;
// changing the certificate through the status subresource the sign verb.
// No request for the API server's client signer may ask for the
// privileged group.
func certificateSigningRequests(b config.Brand, sv Services) *registry.Descriptor {
	r := csrRules{legacySigner: b.Label("legacy-unknown")}
	d := groupType(b.Group("certificates"), "certificatesigningrequests", "certificatesigningrequest", "CertificateSigningRequest", false, "csr")
	admission := csrAdmission{group: d.Group, resource: d.Resource, az: sv.Authorizer, clientSigner: b.Label("kube-apiserver-client"), enabled: sv.Admission.Enabled}
	d.NameRule = registry.NamePathSegment
	d.FieldSelectors = map[string]registry.FieldSelector{"spec.signerName": fieldGetter("spec", "signerName")}
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.Strategy.Default = defaultCSRConditions
	d.Strategy.PrepareForCreate = func(obj registry.Object) { obj["status"] = map[string]any{} }
	d.Strategy.StampRequester = stampCSRRequester
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		obj["spec"] = schema.DeepCopy(old["spec"])
		switch sub {
		case "":
			obj["status"] = schema.DeepCopy(old["status"])
		case "status":
			preserveApprovalConditions(obj, old)
			stampConditions(obj, old, time.Now())
		case "approval":
			stampConditions(obj, old, time.Now())
		}
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return r.validate(obj, csrOptionsFrom(obj, nil))
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return r.validateUpdate(obj, old, csrOptionsFrom(obj, old))
	}
	d.Strategy.AdmitRequester = admission.admit
	d.Subresources = []registry.Subresource{
		{Name: "approval", Verbs: statusVerbs, Copy: copyConditions, Validate: func(obj, old registry.Object) apierr.FieldErrors {
			o := csrOptionsFrom(obj, old)
			o.setApproval = true
			return r.validateUpdate(obj, old, o)
		}},
		{Name: "status", Verbs: statusVerbs, Keep: keepSpec, Validate: func(obj, old registry.Object) apierr.FieldErrors {
			o := csrOptionsFrom(obj, old)
			o.setCertificate = true
			return r.validateUpdate(obj, old, o)
		}},
	}
	return d
}

// defaultCSRConditions gives conditions without a status the status True.
func defaultCSRConditions(obj registry.Object) {
	for _, c := range listOf(valueAt(obj, "status", "conditions")) {
		if cond, ok := c.(map[string]any); ok && str(cond, "status") == "" {
			cond["status"] = "True"
		}
	}
}

// copyConditions moves only the written conditions: approving a request
// must not also issue its certificate.
func copyConditions(next, written registry.Object) {
	status := child(next, "status")
	if conds, ok := mapAt(written, "status")["conditions"]; ok {
		status["conditions"] = conds
	} else {
		delete(status, "conditions")
	}
}

// csrConditions returns the indexes of the conditions of a type.
func csrConditions(obj registry.Object, typ string) []int {
	var out []int
	for i, c := range mapsOf(valueAt(obj, "status", "conditions")) {
		if str(c, "type") == typ {
			out = append(out, i)
		}
	}
	return out
}

// preserveApprovalConditions keeps the stored Approved and Denied
// conditions over a status write that keeps their number: only the
// approval subresource decides them. A changed number fails validation.
func preserveApprovalConditions(obj, old registry.Object) {
	conds := listOf(valueAt(obj, "status", "conditions"))
	oldConds := listOf(valueAt(old, "status", "conditions"))
	for _, t := range []string{csrApproved, csrDenied} {
		now, before := csrConditions(obj, t), csrConditions(old, t)
		if len(now) != len(before) {
			continue
		}
		for i, j := range now {
			conds[j] = schema.DeepCopy(oldConds[before[i]])
		}
	}
}

// stampConditions sets the times a written condition leaves out: now, or
// for the transition the time of a stored condition of the same type and
// status.
func stampConditions(obj, old registry.Object, now time.Time) {
	ts := now.UTC().Format(time.RFC3339)
	for _, c := range listOf(valueAt(obj, "status", "conditions")) {
		cond, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if str(cond, "lastUpdateTime") == "" {
			cond["lastUpdateTime"] = ts
		}
		if str(cond, "lastTransitionTime") != "" {
			continue
		}
		cond["lastTransitionTime"] = ts
		for _, o := range mapsOf(valueAt(old, "status", "conditions")) {
			if str(o, "type") == str(cond, "type") && str(o, "status") == str(cond, "status") && str(o, "lastTransitionTime") != "" {
				cond["lastTransitionTime"] = o["lastTransitionTime"]
				break
			}
		}
	}
}

// csrOptionsFrom relaxes the rules the stored request old (nil on create)
// already breaks.
func csrOptionsFrom(obj, old registry.Object) csrOptions {
	if old == nil {
		return csrOptions{}
	}
	var o csrOptions
	approved, denied := len(csrConditions(old, csrApproved)) > 0, len(csrConditions(old, csrDenied)) > 0
	o.bothApprovedAndDenied = approved && denied
	seen := map[string]bool{}
	for _, c := range mapsOf(valueAt(old, "status", "conditions")) {
		t := str(c, "type")
		if t == "" {
			o.emptyConditionType = true
		}
		if seen[t] {
			o.duplicateConditions = true
		}
		seen[t] = true
	}
	cert, oldCert := str(obj, "status", "certificate"), str(old, "status", "certificate")
	o.arbitraryCertificate = cert == oldCert || checkCertificate(decodeBytes(oldCert)) != nil
	usages := map[string]bool{}
	for _, u := range listOf(valueAt(old, "spec", "usages")) {
		s := strOf(u)
		if !contains(csrUsages, s) {
			o.unknownUsages = true
		}
		if usages[s] {
			o.duplicateUsages = true
		}
		usages[s] = true
	}
	return o
}

// allowLegacySigner reports whether the stored request already names the
// legacy signer.
func (r csrRules) allowLegacySigner(old registry.Object) bool {
	return old != nil && str(old, "spec", "signerName") == r.legacySigner
}

// decodeBytes reads a base64 member; the decoder has checked it.
func decodeBytes(s string) []byte {
	b, _ := base64.StdEncoding.DecodeString(s)
	return b
}

func (r csrRules) validate(obj registry.Object, o csrOptions) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec := mapAt(obj, "spec")
	req := decodeBytes(str(spec, "request"))
	if err := checkCSR(req); err != nil {
		errs = append(errs, apierr.Invalid("spec.request", goSyntax(fmt.Sprintf("%#v", req)), err.Error()))
	}
	usages := listOf(spec["usages"])
	if len(usages) == 0 {
		errs = append(errs, apierr.Required("spec.usages", ""))
	}
	if !o.unknownUsages {
		for i, u := range usages {
			if s := strOf(u); !contains(csrUsages, s) {
				errs = append(errs, apierr.NotSupported(index("spec.usages", i), s, csrUsages))
			}
		}
	}
	if !o.duplicateUsages {
		seen := map[string]bool{}
		for i, u := range usages {
			s := strOf(u)
			if seen[s] {
				errs = append(errs, apierr.Duplicate(index("spec.usages", i), s))
			}
			seen[s] = true
		}
	}
	signer := str(spec, "signerName")
	if !o.legacySigner && signer == r.legacySigner {
		errs = append(errs, apierr.Invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, validateSignerName(signer, "spec.signerName")...)
	}
	if n, ok := intOf(spec["expirationSeconds"]); ok && n < minCSRExpirationSeconds {
		errs = append(errs, apierr.Invalid("spec.expirationSeconds", n, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(obj, o)...)
	if !o.arbitraryCertificate {
		if err := checkCertificate(decodeBytes(str(obj, "status", "certificate"))); err != nil {
			errs = append(errs, apierr.Invalid("status.certificate", "<certificate data>", err.Error()))
		}
	}
	return errs
}

func validateCSRConditions(obj registry.Object, o csrOptions) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	approved, denied := false, false
	for i, c := range mapsOf(valueAt(obj, "status", "conditions")) {
		p := index("status.conditions", i)
		t := str(c, "type")
		if !o.emptyConditionType && t == "" {
			errs = append(errs, apierr.Required(p+".type", ""))
		}
		allowed := conditionStatuses
		if t == csrApproved || t == csrDenied || t == csrFailed {
			allowed = []string{"True"}
		}
		switch s := str(c, "status"); {
		case s == "":
			errs = append(errs, apierr.Required(p+".status", ""))
		case !contains(allowed, s):
			errs = append(errs, apierr.NotSupported(p+".status", s, allowed))
		}
		if !o.bothApprovedAndDenied {
			switch t {
			case csrApproved:
				approved = true
				if denied {
					errs = append(errs, apierr.Invalid(p+".type", t, "Approved and Denied conditions are mutually exclusive"))
				}
			case csrDenied:
				denied = true
				if approved {
					errs = append(errs, apierr.Invalid(p+".type", t, "Approved and Denied conditions are mutually exclusive"))
				}
			}
		}
		if !o.duplicateConditions {
			if seen[t] {
				errs = append(errs, apierr.Duplicate(p+".type", t))
			}
			seen[t] = true
		}
	}
	return errs
}

func (r csrRules) validateUpdate(obj, old registry.Object, o csrOptions) apierr.FieldErrors {
	o.legacySigner = r.allowLegacySigner(old)
	errs := r.validate(obj, o)
	for _, t := range []string{csrApproved, csrDenied, csrFailed} {
		if len(csrConditions(obj, t)) < len(csrConditions(old, t)) {
			errs = append(errs, apierr.Forbidden("status.conditions", fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !o.setApproval {
		conds, oldConds := listOf(valueAt(obj, "status", "conditions")), listOf(valueAt(old, "status", "conditions"))
		for _, t := range []string{csrApproved, csrDenied} {
			now, before := csrConditions(obj, t), csrConditions(old, t)
			switch {
			case len(now) < len(before):
			case len(now) > len(before):
				errs = append(errs, apierr.Forbidden("status.conditions", fmt.Sprintf("updates may not add a condition of type %q", t)))
			default:
				for i := range now {
					if !reflect.DeepEqual(conds[now[i]], oldConds[before[i]]) {
						errs = append(errs, apierr.Forbidden("status.conditions", fmt.Sprintf("updates may not modify a condition of type %q", t)))
						break
					}
				}
			}
		}
	}
	if cert, oldCert := str(obj, "status", "certificate"), str(old, "status", "certificate"); cert != oldCert {
		switch {
		case !o.setCertificate:
			errs = append(errs, apierr.Forbidden("status.certificate", "updates may not set certificate content"))
		case oldCert != "":
			errs = append(errs, apierr.Forbidden("status.certificate", "updates may not modify existing certificate content"))
		}
	}
	return errs
}

// checkCSR parses a PEM PKCS#10 request and checks its signature.
func checkCSR(pemData []byte) error {
	csr, err := parseCSR(pemData)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

// parseCSR parses the first PEM block of pemData as a PKCS#10 request.
func parseCSR(pemData []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemData)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// checkCertificate checks an issued chain: one or more CERTIFICATE blocks
// without headers, each parsing. Empty is valid (not issued yet).
func checkCertificate(pemData []byte) error {
	if len(pemData) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(pemData)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		pemData = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// Signer name bounds: a domain, and a path that fits a namespace and a
// resource name joined by a dot.
const (
	maxSignerDomain = 253
	maxSignerPath   = 253 + 63 + 1
	maxSignerName   = maxSignerDomain + maxSignerPath + 1
)

// validateSignerName checks a "<domain>/<path>" signer name.
func validateSignerName(name, path string) apierr.FieldErrors {
	if name == "" {
		return apierr.FieldErrors{apierr.Required(path, "")}
	}
	domain, signerPath, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(signerPath, "/") {
		return apierr.FieldErrors{apierr.Invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs apierr.FieldErrors
	if len(domain) > maxSignerDomain {
		errs = append(errs, apierr.TooLong(path, maxSignerDomain))
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if msgs := validation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, apierr.Invalid(path, domain, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break // later labels would only repeat the finding
		}
	}
	if len(labels) < 2 {
		errs = append(errs, apierr.Invalid(path, domain, "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(signerPath, ".") {
		if msgs := validation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, apierr.Invalid(path, signerPath, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	if len(name) > maxSignerName {
		errs = append(errs, apierr.TooLong(path, maxSignerName))
	}
	return errs
}

// stampCSRRequester writes the creating user into a request's spec, so an
// approver sees who asked; empty fields are left out.
func stampCSRRequester(obj registry.Object, who registry.Requester) {
	spec := child(obj, "spec")
	for _, k := range []string{"username", "uid", "groups", "extra"} {
		delete(spec, k)
	}
	if who.Name != "" {
		spec["username"] = who.Name
	}
	if who.UID != "" {
		spec["uid"] = who.UID
	}
	if len(who.Groups) > 0 {
		groups := make([]any, len(who.Groups))
		for i, g := range who.Groups {
			groups[i] = g
		}
		spec["groups"] = groups
	}
	if len(who.Extra) > 0 {
		extra := make(map[string]any, len(who.Extra))
		for k, vs := range who.Extra {
			values := make([]any, len(vs))
			for i, v := range vs {
				values[i] = v
			}
			extra[k] = values
		}
		spec["extra"] = extra
	}
}

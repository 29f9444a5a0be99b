package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"testing"
)

// csrAdmissionEnv is a server in RBAC mode where alice may read
// certificate signing requests and write them through resources, each
// path one of its subresources: what she may do to them then depends on
// her rights on their signers alone.
type csrAdmissionEnv struct {
	rbacEnv
	certs, csrs string
}

func startCSRAdmission(t *testing.T, subresources ...string) csrAdmissionEnv {
	e := csrAdmissionEnv{rbacEnv: rbacEnv{start(t, withRBAC), ""}}
	e.group = e.opts.Brand.Group("rbac.authorization")
	e.certs = e.opts.Brand.Group("certificates")
	e.csrs = groupPath(e.certs, "v1", "", "certificatesigningrequests")
	resources := []string{"certificatesigningrequests"}
	for _, s := range subresources {
		resources = append(resources, "certificatesigningrequests/"+s)
	}
	e.do("POST", e.api("", "clusterroles"), e.role("ClusterRole", "", "csr-writer",
		policy([]string{"get", "list", "create", "update", "patch"}, []string{e.certs}, resources))).mustCode(t, 201)
	e.do("POST", e.api("", "clusterrolebindings"), e.binding("ClusterRoleBinding", "", "alice-csr-writer", "ClusterRole", "csr-writer", user("alice"))).mustCode(t, 201)
	e.eventuallyCode(t, "GET", e.csrs, 200)
	return e
}

// grantSigners lets alice verb the signers named, and waits until she may.
func (e csrAdmissionEnv) grantSigners(t *testing.T, verb string, names ...string) {
	t.Helper()
	e.do("POST", e.api("", "clusterroles"), e.role("ClusterRole", "", "signers-"+verb,
		policy([]string{verb}, []string{e.certs}, []string{"signers"}, names...))).mustCode(t, 201)
	e.do("POST", e.api("", "clusterrolebindings"), e.binding("ClusterRoleBinding", "", "alice-signers-"+verb, "ClusterRole", "signers-"+verb, user("alice"))).mustCode(t, 201)
	review := map[string]any{"spec": map[string]any{"resourceAttributes": map[string]any{
		"verb": verb, "group": e.certs, "resource": "signers", "name": names[0]}}}
	eventually(t, "alice's "+verb+" on signers to take effect", func() bool {
		r := e.alice("POST", groupPath(e.opts.Brand.Group("authorization"), "v1", "", "selfsubjectaccessreviews"), review)
		return r.code == 201 && at(r.obj(t), "status", "allowed") == true
	})
}

// createCSR stores a request for signer as admin and returns it.
func (e csrAdmissionEnv) createCSR(t *testing.T, name, signer string) map[string]any {
	t.Helper()
	req, _ := csrPEM(t)
	return e.do("POST", e.csrs, map[string]any{"metadata": map[string]any{"name": name},
		"spec": map[string]any{"request": req, "signerName": signer, "usages": []any{"client auth"}}}).mustCode(t, 201).obj(t)
}

// mustForbid checks a refusal of a write to the request called name.
func (e csrAdmissionEnv) mustForbid(t *testing.T, r *resp, name, msg string) {
	t.Helper()
	r.mustCode(t, 403).mustMessage(t, fmt.Sprintf("certificatesigningrequests.%s %q is forbidden: %s", e.certs, name, msg))
	if d := r.obj(t)["details"]; fmt.Sprint(d) != fmt.Sprintf("map[group:%s kind:certificatesigningrequests name:%s]", e.certs, name) {
		t.Errorf("details %v", d)
	}
}

// TestCSRApprovalNeedsSigner: deciding a request through its approval
// subresource needs the approve verb on its signer, by name or by the
// signer's domain, as upstream's CertificateApproval admission.
func TestCSRApprovalNeedsSigner(t *testing.T) {
	t.Parallel()
	e := startCSRAdmission(t, "approval")
	signers := map[string]string{"c1": "example.com/foo", "c2": "other.example/bar", "c3": "third.example/baz"}
	decided := map[string]map[string]any{}
	for name, signer := range signers {
		csr := e.createCSR(t, name, signer)
		csr["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Approved", "reason": "ByAlice"}}}
		decided[name] = csr
	}

	// Without the verb: refused, whatever the request's state.
	e.mustForbid(t, e.alice("PUT", e.csrs+"/c1/approval", decided["c1"]), "c1", `user not permitted to approve requests with signerName "example.com/foo"`)
	if c := at(e.do("GET", e.csrs+"/c1", nil).mustCode(t, 200).obj(t), "status", "conditions"); c != nil {
		t.Errorf("refused approval stored conditions %v", c)
	}
	// Validation answers first, as upstream validates before admission.
	invalid := map[string]any{"metadata": decided["c1"]["metadata"], "spec": decided["c1"]["spec"],
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Approved", "status": "False"}}}}
	e.alice("PUT", e.csrs+"/c1/approval", invalid).mustCode(t, 422)

	e.grantSigners(t, "approve", "example.com/foo", "other.example/*")
	for _, c := range []struct {
		name, method string
		body         any
		want         string // the condition stored, "" when refused
	}{
		{"c1", "PUT", decided["c1"], "Approved"},
		{"c2", "PATCH", `{"status":{"conditions":[{"type":"Denied","reason":"ByAlice"}]}}`, "Denied"},
		{"c3", "PUT", decided["c3"], ""},
	} {
		rq := req{method: c.method, path: e.csrs + "/" + c.name + "/approval", body: c.body, token: aliceToken}
		if c.method == "PATCH" {
			rq.header = map[string]string{"Content-Type": "application/merge-patch+json"}
		}
		r := e.send(rq)
		stored := e.do("GET", e.csrs+"/"+c.name, nil).mustCode(t, 200).obj(t)
		if c.want == "" {
			e.mustForbid(t, r, c.name, fmt.Sprintf("user not permitted to approve requests with signerName %q", signers[c.name]))
			if cond := at(stored, "status", "conditions"); cond != nil {
				t.Errorf("%s: refused approval stored conditions %v", c.name, cond)
			}
			continue
		}
		r.mustCode(t, 200)
		if at(stored, "status", "conditions", 0, "type") != c.want || at(stored, "status", "conditions", 0, "reason") != "ByAlice" {
			t.Errorf("%s: stored status %v, want a %s condition", c.name, stored["status"], c.want)
		}
	}
}

// TestCSRSigningNeedsSigner: issuing a request's certificate through its
// status subresource needs the sign verb on its signer, as upstream's
// CertificateSigning admission; other status writes do not.
func TestCSRSigningNeedsSigner(t *testing.T) {
	t.Parallel()
	e := startCSRAdmission(t, "status")
	csr := e.createCSR(t, "c3", "example.com/foo")
	csr["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Approved", "reason": "ByAdmin"}}}
	csr = e.do("PUT", e.csrs+"/c3/approval", csr).mustCode(t, 200).obj(t)
	_, cert := csrPEM(t)

	issue := func() *resp {
		csr["status"].(map[string]any)["certificate"] = cert
		return e.alice("PUT", e.csrs+"/c3/status", csr)
	}
	e.mustForbid(t, issue(), "c3", `user not permitted to sign requests with signerName "example.com/foo"`)
	if c := at(e.do("GET", e.csrs+"/c3", nil).mustCode(t, 200).obj(t), "status", "certificate"); c != nil {
		t.Errorf("refused signing stored certificate %v", c)
	}

	// A status write that leaves the certificate alone is not checked.
	failed := `{"status":{"conditions":[{"type":"Approved","reason":"ByAdmin"},{"type":"Failed","reason":"ByAlice"}]}}`
	e.send(req{method: "PATCH", path: e.csrs + "/c3/status", body: failed, token: aliceToken,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, 200)

	e.grantSigners(t, "sign", "example.com/*")
	csr = e.do("GET", e.csrs+"/c3", nil).mustCode(t, 200).obj(t)
	issue().mustCode(t, 200)
	stored := e.do("GET", e.csrs+"/c3", nil).mustCode(t, 200).obj(t)
	if at(stored, "status", "certificate") != cert || at(stored, "status", "conditions", 1, "reason") != "ByAlice" {
		t.Errorf("stored status %v, want the certificate and both conditions", stored["status"])
	}
}

// TestCSRSubjectRestriction: no one may ask the API server's client signer
// for a certificate in the privileged group, as upstream's
// CertificateSubjectRestriction admission; in either brand's spelling.
func TestCSRSubjectRestriction(t *testing.T) {
	t.Parallel()
	for _, brandName := range []string{"plat", "kubernetes"} {
		t.Run(brandName, func(t *testing.T) {
			t.Parallel()
			e := start(t, withBrand(brandName))
			certs := e.opts.Brand.Group("certificates")
			csrs := groupPath(certs, "v1", "", "certificatesigningrequests")
			client := e.opts.Brand.Label("kube-apiserver-client")
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			request := func(orgs ...string) string {
				der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "u", Organization: orgs}}, key)
				if err != nil {
					t.Fatal(err)
				}
				return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
			}
			csr := func(name, signer, req string) map[string]any {
				return map[string]any{"metadata": map[string]any{"name": name},
					"spec": map[string]any{"request": req, "signerName": signer, "usages": []any{"client auth"}}}
			}
			for _, c := range []struct {
				name, signer string
				orgs         []string
				dryRun       bool
				refused      bool
			}{
				{"masters", client, []string{"team", "system:masters"}, false, true},
				{"masters-dry-run", client, []string{"system:masters"}, true, true},
				{"team", client, []string{"team"}, false, false},
				{"other-signer", "example.com/foo", []string{"system:masters"}, false, false},
			} {
				p := csrs
				if c.dryRun {
					p += "?dryRun=All"
				}
				// admin is in the privileged group: the rule holds for everyone.
				r := e.do("POST", p, csr(c.name, c.signer, request(c.orgs...)))
				got := e.do("GET", csrs+"/"+c.name, nil)
				if !c.refused {
					r.mustCode(t, 201)
					got.mustCode(t, 200)
					if at(got.obj(t), "spec", "signerName") != c.signer {
						t.Errorf("%s: stored %v", c.name, got.obj(t)["spec"])
					}
					continue
				}
				r.mustCode(t, 403).mustMessage(t, fmt.Sprintf("certificatesigningrequests.%s %q is forbidden: use of %s signer with system:masters group is not allowed", certs, c.name, client))
				if d := r.obj(t)["details"]; fmt.Sprint(d) != fmt.Sprintf("map[group:%s kind:certificatesigningrequests name:%s]", certs, c.name) {
					t.Errorf("%s: details %v", c.name, d)
				}
				got.mustCode(t, 404)
			}
			// An invalid request is refused by validation first.
			bad := csr("bad", client, base64.StdEncoding.EncodeToString([]byte("hi")))
			if r := e.do("POST", csrs, bad).mustCode(t, 422).obj(t); r["reason"] != "Invalid" {
				t.Errorf("invalid request answered %v", r)
			}
		})
	}
}

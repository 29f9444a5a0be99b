package server_test

import (
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

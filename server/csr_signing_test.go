package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// signingRequestFor returns a new key and a PEM signing request of it.
func signingRequestFor(t *testing.T, tmpl *x509.CertificateRequest) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestCSRSigning follows the documented way to a user's certificate: a
// request to the API client signer, approved, gets a certificate of the
// data directory's CA for its subject and requested lifetime, with which
// the user authenticates. Requests breaking their signer's rules fail
// with upstream's reason and message; a kubelet's serving request is
// signed with its names.
func TestCSRSigning(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	csrs := groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests")
	create := func(name, signer string, req []byte, usages []any, seconds int) {
		t.Helper()
		spec := map[string]any{"request": base64.StdEncoding.EncodeToString(req), "signerName": signer, "usages": usages}
		if seconds > 0 {
			spec["expirationSeconds"] = seconds
		}
		csr := e.do("POST", csrs, map[string]any{"metadata": map[string]any{"name": name}, "spec": spec}).mustCode(t, 201).obj(t)
		csr["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Approved", "status": "True", "reason": "ByTest", "message": "approved"}}}
		e.do("PUT", csrs+"/"+name+"/approval", csr).mustCode(t, 200)
	}
	settled := func(name string) map[string]any {
		t.Helper()
		var csr map[string]any
		eventually(t, "the signer's answer to "+name, func() bool {
			csr = e.do("GET", csrs+"/"+name, nil).mustCode(t, 200).obj(t)
			conds, _ := at(csr, "status", "conditions").([]any)
			return at(csr, "status", "certificate") != nil || len(conds) > 1
		})
		return csr
	}
	issued := func(csr map[string]any) *x509.Certificate {
		t.Helper()
		raw, err := base64.StdEncoding.DecodeString(at(csr, "status", "certificate").(string))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(raw)
		if block == nil || block.Type != "CERTIFICATE" {
			t.Fatalf("status.certificate is not a certificate: %q", raw)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	caPEM, err := os.ReadFile(filepath.Join(e.opts.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)

	key, req := signingRequestFor(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "carol", Organization: []string{"team"}}})
	create("carol", b.Label("kube-apiserver-client"), req, []any{"client auth"}, 3600)
	_, badReq := signingRequestFor(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "dave"}})
	create("dave", b.Label("kube-apiserver-client"), badReq, []any{"client auth", "server auth"}, 0)
	_, nodeReq := signingRequestFor(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}, DNSNames: []string{"n1.example"}})
	create("n1-serving", b.Label("kubelet-serving"), nodeReq, []any{"digital signature", "server auth"}, 0)

	csr := settled("carol")
	if conds := at(csr, "status", "conditions").([]any); len(conds) != 1 {
		t.Errorf("conditions %v, want Approved only", conds)
	}
	cert := issued(csr)
	if cert.Subject.CommonName != "carol" || !reflect.DeepEqual(cert.Subject.Organization, []string{"team"}) {
		t.Errorf("subject %v", cert.Subject)
	}
	// One hour asked: short-lived, so only the start is backdated.
	if d := cert.NotAfter.Sub(cert.NotBefore); d != time.Hour+5*time.Minute || time.Since(cert.NotBefore) < 5*time.Minute {
		t.Errorf("valid %v – %v", cert.NotBefore, cert.NotAfter)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the certificate does not verify as a client's of the CA: %v", err)
	}
	// The user authenticates with it.
	tr := e.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = tr.TLSClientConfig.Clone()
	pair := tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
	tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	defer tr.CloseIdleConnections()
	r, _ := http.NewRequest("POST", e.srv.URL()+groupPath(b.Group("authentication"), "v1", "", "selfsubjectreviews"),
		strings.NewReader(`{"kind":"SelfSubjectReview","apiVersion":"`+b.Group("authentication")+`/v1"}`))
	r.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	var review map[string]any
	_ = json.NewDecoder(res.Body).Decode(&review)
	res.Body.Close()
	if at(review, "status", "userInfo", "username") != "carol" || !reflect.DeepEqual(at(review, "status", "userInfo", "groups"), []any{"team", "system:authenticated"}) {
		t.Errorf("a request with the issued certificate: %d %v", res.StatusCode, review)
	}

	csr = settled("dave")
	if at(csr, "status", "certificate") != nil {
		t.Error("a request breaking its signer's rule got a certificate")
	}
	failed := at(csr, "status", "conditions", 1).(map[string]any)
	if failed["type"] != "Failed" || failed["status"] != "True" || failed["reason"] != "SignerValidationFailure" ||
		failed["message"] != "invalid usage for client certificate: server auth" || failed["lastUpdateTime"] == nil {
		t.Errorf("failure condition %v", failed)
	}

	cert = issued(settled("n1-serving"))
	if cert.Subject.CommonName != "system:node:n1" || !reflect.DeepEqual(cert.DNSNames, []string{"n1.example"}) ||
		!reflect.DeepEqual(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("kubelet serving certificate: %v %v %v", cert.Subject, cert.DNSNames, cert.ExtKeyUsage)
	}
	// No expiration asked: the signer's year, less the backdating.
	if d := cert.NotAfter.Sub(cert.NotBefore); d != 365*24*time.Hour {
		t.Errorf("kubelet serving certificate valid for %v", d)
	}
}

// TestCSRApproving: a kubelet's client certificate request is approved,
// then signed, when its requester may create
// certificatesigningrequests/nodeclient (a bootstrap identity) or, for
// its own name, .../selfnodeclient (a kubelet renewing); a request whose
// requester may neither, or that breaks the kubelet signer's rules, stays
// pending.
func TestCSRApproving(t *testing.T) {
	t.Parallel()
	e := start(t, withRBAC)
	b := e.opts.Brand
	bind := func(name, role string, groups ...string) { bindClusterRole(t, e, name, role, groups...) }
	// The authorizer applies bindings in order: once the last is in
	// force, so are the others.
	bind("auto-nodeclient", "system:certificates."+b.Domain+":certificatesigningrequests:nodeclient", "bootstrappers")
	bind("auto-selfnodeclient", "system:certificates."+b.Domain+":certificatesigningrequests:selfnodeclient", "system:nodes")
	bind("csr-creators", "system:node-bootstrapper", "csr-creators", "bootstrappers", "system:nodes")
	csrs := groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests")

	create := func(name, user, group string, subject pkix.Name) {
		t.Helper()
		createKubeletRequest(t, e, name, user, group, subject)
	}
	node := func(n string) pkix.Name {
		return pkix.Name{CommonName: "system:node:" + n, Organization: []string{"system:nodes"}}
	}
	// Created first, these are looked at before the approved ones.
	create("not-allowed", "carol", "csr-creators", node("n0"))
	create("not-a-kubelet", "system:bootstrap:abc", "bootstrappers", pkix.Name{CommonName: "system:node:n9", Organization: []string{"team"}})
	// A node may renew only its own certificate.
	create("other-node", "system:node:n3", "system:nodes", node("n4"))
	create("bootstrap", "system:bootstrap:abc", "bootstrappers", node("n1"))
	create("renewal", "system:node:n2", "system:nodes", node("n2"))

	for name, message := range map[string]string{
		"bootstrap": "Auto approving kubelet client certificate after SubjectAccessReview.",
		"renewal":   "Auto approving self kubelet client certificate after SubjectAccessReview.",
	} {
		var csr map[string]any
		eventually(t, name+" approved and issued", func() bool {
			csr = e.do("GET", csrs+"/"+name, nil).mustCode(t, 200).obj(t)
			return at(csr, "status", "certificate") != nil
		})
		approved := at(csr, "status", "conditions", 0).(map[string]any)
		if approved["type"] != "Approved" || approved["status"] != "True" || approved["reason"] != "AutoApproved" || approved["message"] != message {
			t.Errorf("%s: approval %v", name, approved)
		}
	}
	for _, name := range []string{"not-allowed", "not-a-kubelet", "other-node"} {
		if c := at(e.do("GET", csrs+"/"+name, nil).mustCode(t, 200).obj(t), "status", "conditions"); c != nil {
			t.Errorf("%s: conditions %v, want it pending", name, c)
		}
	}
}

// TestCSRApprovingRetries: a kubelet's request refused for want of a
// permission is approved once the permission is granted, as upstream's
// controller asks again with back-off.
func TestCSRApprovingRetries(t *testing.T) {
	t.Parallel()
	e := start(t, withRBAC)
	b := e.opts.Brand
	nodeClient := "system:certificates." + b.Domain + ":certificatesigningrequests:nodeclient"
	bindClusterRole(t, e, "early-nodeclient", nodeClient, "early")
	bindClusterRole(t, e, "csr-creators", "system:node-bootstrapper", "late")
	bindClusterRole(t, e, "csr-creators-early", "system:node-bootstrapper", "early")
	csrs := groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests")
	create := func(name, group, node string) {
		t.Helper()
		createKubeletRequest(t, e, name, "system:bootstrap:"+name, group,
			pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}})
	}
	approval := func(name string) map[string]any {
		c, _ := at(e.do("GET", csrs+"/"+name, nil).mustCode(t, 200).obj(t), "status", "conditions", 0).(map[string]any)
		return c
	}
	create("late", "late", "n1")
	// The controller looks at requests in the order they come: once the
	// later one is approved, the first was refused.
	create("early", "early", "n2")
	eventually(t, "early approved", func() bool { return approval("early") != nil })
	if c := approval("late"); c != nil {
		t.Fatalf("late: %v before its requester may have it", c)
	}
	bindClusterRole(t, e, "late-nodeclient", nodeClient, "late")
	eventually(t, "late approved", func() bool { return approval("late") != nil })
	if c := approval("late"); c["type"] != "Approved" || c["reason"] != "AutoApproved" || c["message"] != "Auto approving kubelet client certificate after SubjectAccessReview." {
		t.Errorf("late: approval %v", c)
	}
}

// bindClusterRole binds the cluster role to the groups.
func bindClusterRole(t *testing.T, e *env, name, role string, groups ...string) {
	t.Helper()
	g := e.opts.Brand.Group("rbac.authorization")
	var subjects []any
	for _, group := range groups {
		subjects = append(subjects, map[string]any{"apiGroup": g, "kind": "Group", "name": group})
	}
	e.do("POST", groupPath(g, "v1", "", "clusterrolebindings"), map[string]any{"metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": g, "kind": "ClusterRole", "name": role},
		"subjects": subjects}).mustCode(t, 201)
}

// createKubeletRequest creates a request for a kubelet client certificate
// of subject as user in group, once the bindings letting the group
// create it are in force.
func createKubeletRequest(t *testing.T, e *env, name, user, group string, subject pkix.Name) {
	t.Helper()
	b := e.opts.Brand
	_, req := signingRequestFor(t, &x509.CertificateRequest{Subject: subject})
	body := map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{
		"request": base64.StdEncoding.EncodeToString(req), "signerName": b.Label("kube-apiserver-client-kubelet"),
		"usages": []any{"digital signature", "client auth"}}}
	var last *resp
	defer func() {
		if last != nil && last.code != 201 {
			t.Logf("last answer: %s", last.body)
		}
	}()
	eventually(t, "creating "+name, func() bool {
		r := e.do("POST", groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests"), body,
			"Impersonate-User", user, "Impersonate-Group", group)
		if r.code != 201 && r.code != 403 {
			t.Fatalf("creating %s: %d %s", name, r.code, r.body)
		}
		last = r
		return r.code == 201
	})
}

// TestCSRSigningDuration: --cluster-signing-duration bounds a
// certificate's validity, whatever a request asks for.
func TestCSRSigningDuration(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.ClusterSigningDuration = 30 * time.Minute })
	b := e.opts.Brand
	csrs := groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests")
	_, req := signingRequestFor(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "erin"}})
	csr := e.do("POST", csrs, map[string]any{"metadata": map[string]any{"name": "erin"}, "spec": map[string]any{
		"request": base64.StdEncoding.EncodeToString(req), "signerName": b.Label("kube-apiserver-client"),
		"usages": []any{"client auth"}, "expirationSeconds": 86400}}).mustCode(t, 201).obj(t)
	csr["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Approved", "status": "True", "reason": "ByTest"}}}
	e.do("PUT", csrs+"/erin/approval", csr).mustCode(t, 200)
	var issued string
	eventually(t, "erin issued", func() bool {
		issued, _ = at(e.do("GET", csrs+"/erin", nil).mustCode(t, 200).obj(t), "status", "certificate").(string)
		return issued != ""
	})
	raw, _ := base64.StdEncoding.DecodeString(issued)
	block, _ := pem.Decode(raw)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	// Thirty minutes, short-lived: only the start is backdated.
	if d := cert.NotAfter.Sub(cert.NotBefore); d != 35*time.Minute {
		t.Errorf("valid for %v, want the 30 minutes the flag allows and the 5 backdated", d)
	}
}

// TestCSRCleaning: requests decided more than an hour ago go (an approved
// one once issued); a recent decision, and a pending request, stay.
func TestCSRCleaning(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	csrs := groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests")
	decide := func(name, decision string, ago time.Duration) {
		t.Helper()
		_, req := signingRequestFor(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}})
		csr := e.do("POST", csrs, map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{
			"request": base64.StdEncoding.EncodeToString(req), "signerName": b.Label("kube-apiserver-client"), "usages": []any{"client auth"}}}).mustCode(t, 201).obj(t)
		if decision == "" {
			return
		}
		csr["status"] = map[string]any{"conditions": []any{map[string]any{"type": decision, "status": "True", "reason": "ByTest",
			"lastUpdateTime": time.Now().Add(-ago).UTC().Format(time.RFC3339)}}}
		e.do("PUT", csrs+"/"+name+"/approval", csr).mustCode(t, 200)
	}
	decide("pending", "", 0)
	decide("recent", "Approved", time.Minute)
	decide("old-denied", "Denied", 2*time.Hour)
	decide("old-approved", "Approved", 2*time.Hour)
	for _, name := range []string{"old-denied", "old-approved"} {
		eventually(t, name+" cleaned up", func() bool { return e.do("GET", csrs+"/"+name, nil).code == 404 })
	}
	// The recent one is issued, and stays.
	eventually(t, "recent issued", func() bool {
		return at(e.do("GET", csrs+"/recent", nil).mustCode(t, 200).obj(t), "status", "certificate") != nil
	})
	e.do("GET", csrs+"/pending", nil).mustCode(t, 200)
}

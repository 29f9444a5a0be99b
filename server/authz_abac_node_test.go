package server_test

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"platd/config"
	"platd/security"
)

// withTokens replaces the static token file with one holding the admin,
// alice and the extra CSV lines.
func withTokens(t *testing.T, lines ...string) option {
	return func(o *config.Options) {
		path := filepath.Join(t.TempDir(), "tokens.csv")
		csv := adminToken + ",admin,admin-uid,\"system:masters\"\n" + aliceToken + ",alice,alice-uid\n"
		for _, l := range lines {
			csv += l + "\n"
		}
		if err := os.WriteFile(path, []byte(csv), 0o600); err != nil {
			t.Fatal(err)
		}
		o.TokenAuthFile = path
	}
}

func TestAuthorizationABAC(t *testing.T) {
	t.Parallel()
	policy := filepath.Join(t.TempDir(), "policy.jsonl")
	group := platBrand.ABACGroup()
	lines := "# alice reads abac-ns only\n" +
		`{"apiVersion":"` + group + `/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"abac-ns","resource":"*","apiGroup":"*","readonly":true}}` + "\n\n" +
		`{"apiVersion":"` + group + `/v1beta1","kind":"Policy","spec":{"group":"system:authenticated","readonly":true,"nonResourcePath":"/version"}}` + "\n"
	if err := os.WriteFile(policy, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeABAC}
		o.AuthorizationPolicyFile = policy
	})
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "abac-ns"}}).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/abac-ns/configmaps", map[string]any{"metadata": map[string]any{"name": "c1"}, "data": map[string]any{"k": "v"}}).mustCode(t, 201)

	as := func(method, path string, body any) *resp {
		return e.send(req{method: method, path: path, token: aliceToken, body: body})
	}
	if got := path(as("GET", "/api/v1/namespaces/abac-ns/configmaps/c1", nil).mustCode(t, 200).obj(t), "data.k"); got != "v" {
		t.Errorf("configmap data %v", got)
	}
	if items, _ := as("GET", "/api/v1/namespaces/abac-ns/configmaps", nil).mustCode(t, 200).obj(t)["items"].([]any); len(items) != 1 {
		t.Errorf("list gave %d items", len(items))
	}
	as("GET", "/apis/apps/v1/namespaces/abac-ns/deployments", nil).mustCode(t, 200)
	as("GET", "/version", nil).mustCode(t, 200)
	forbidden := []struct {
		method, path string
		body         any
		msg          string
	}{
		{"POST", "/api/v1/namespaces/abac-ns/configmaps", map[string]any{"metadata": map[string]any{"name": "c2"}},
			`configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "abac-ns": No policy matched.`},
		{"DELETE", "/api/v1/namespaces/abac-ns/configmaps/c1", nil,
			`configmaps "c1" is forbidden: User "alice" cannot delete resource "configmaps" in API group "" in the namespace "abac-ns": No policy matched.`},
		{"GET", "/api/v1/namespaces/default/configmaps", nil,
			`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default": No policy matched.`},
		{"GET", "/api/v1/namespaces", nil,
			`namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope: No policy matched.`},
		{"GET", "/apis", nil, `forbidden: User "alice" cannot get path "/apis": No policy matched.`},
	}
	for _, f := range forbidden {
		r := as(f.method, f.path, f.body).mustCode(t, 403)
		st := r.obj(t)
		if st["message"] != f.msg || st["reason"] != "Forbidden" || st["code"] != float64(403) {
			t.Errorf("%s %s:\n got %v\nwant %s", f.method, f.path, st["message"], f.msg)
		}
	}
	// The write was refused, not done.
	e.do("GET", "/api/v1/namespaces/abac-ns/configmaps/c2", nil).mustCode(t, 404)
}

func TestAuthorizationNode(t *testing.T) {
	t.Parallel()
	const nodeToken, node2Token = "node1-token", "node2-token"
	e := start(t, withTokens(t, nodeToken+",system:node:n1,n1-uid,\"system:nodes\"", node2Token+",system:node:n2,n2-uid,\"system:nodes\""),
		func(o *config.Options) { o.AuthorizationModes = []string{config.ModeNode} })
	ns := "node-ns"
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	for _, name := range []string{"s1", "s2", "s3"} {
		e.do("POST", "/api/v1/namespaces/"+ns+"/secrets", map[string]any{"metadata": map[string]any{"name": name}, "stringData": map[string]any{"k": name}}).mustCode(t, 201)
		e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps", map[string]any{"metadata": map[string]any{"name": "c" + name[1:]}}).mustCode(t, 201)
	}
	pod := func(name, node, secret, cm string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"nodeName":   node,
				"containers": []any{map[string]any{"name": "c", "image": "busybox", "envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": cm}}}}},
				"volumes":    []any{map[string]any{"name": "v", "secret": map[string]any{"secretName": secret}}},
			},
		}
	}
	e.do("POST", "/api/v1/namespaces/"+ns+"/pods", pod("p1", "n1", "s1", "c1")).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/"+ns+"/pods", pod("p3", "n2", "s3", "c3")).mustCode(t, 201)

	get := func(token, p string) *resp { return e.send(req{method: "GET", path: p, token: token}) }
	noRelation := func(kind, name, node string) string {
		return kind + ` "` + name + `" is forbidden: User "system:node:` + node + `" cannot get resource "` + kind + `" in API group "" in the namespace "` + ns +
			`": no relationship found between node '` + node + `' and this object`
	}
	// Poll: the graph follows the store's watch.
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	secret := "/api/v1/namespaces/" + ns + "/secrets/"
	cm := "/api/v1/namespaces/" + ns + "/configmaps/"
	// Wait until the graph holds both pods: seeing p1 does not mean it has
	// applied p3 yet.
	eventually("p1's and p3's secrets", func() bool {
		return get(nodeToken, secret+"s1").code == 200 && get(node2Token, secret+"s3").code == 200
	})
	if got := path(get(nodeToken, secret+"s1").obj(t), "metadata.name"); got != "s1" {
		t.Errorf("secret %v", got)
	}
	get(nodeToken, cm+"c1").mustCode(t, 200)
	get(nodeToken, secret+"s2").mustCode(t, 403).mustMessage(t, noRelation("secrets", "s2", "n1"))
	get(nodeToken, cm+"c2").mustCode(t, 403).mustMessage(t, noRelation("configmaps", "c2", "n1"))
	get(nodeToken, secret+"s3").mustCode(t, 403).mustMessage(t, noRelation("secrets", "s3", "n1"))
	get(node2Token, secret+"s3").mustCode(t, 200)
	get(node2Token, secret+"s1").mustCode(t, 403).mustMessage(t, noRelation("secrets", "s1", "n2"))
	get(nodeToken, "/api/v1/namespaces/"+ns+"/secrets").mustCode(t, 403).mustMessage(t,
		`secrets is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" in the namespace "`+ns+`": No Object name found`)
	get(nodeToken, "/api/v1/namespaces/"+ns+"/secrets?fieldSelector=metadata.name%3Ds1").mustCode(t, 200)
	e.send(req{method: "DELETE", path: secret + "s1", token: nodeToken}).mustCode(t, 403).mustMessage(t,
		`secrets "s1" is forbidden: User "system:node:n1" cannot delete resource "secrets" in API group "" in the namespace "`+ns+`": can only read resources of this type`)
	// Pods: its own by the field selector or by name, no others.
	if items, _ := get(nodeToken, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1").mustCode(t, 200).obj(t)["items"].([]any); len(items) != 1 {
		t.Errorf("n1 lists %d pods, want 1", len(items))
	}
	get(nodeToken, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn2").mustCode(t, 403).mustMessage(t,
		`pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector`)
	get(nodeToken, "/api/v1/namespaces/"+ns+"/pods/p1").mustCode(t, 200)
	get(nodeToken, "/api/v1/namespaces/"+ns+"/pods/p3").mustCode(t, 403).mustMessage(t,
		`pods "p3" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" in the namespace "`+ns+`": no relationship found between node 'n1' and this object`)
	// Beyond the graph, the system:node role's rules apply.
	get(nodeToken, "/api/v1/namespaces/"+ns+"/services").mustCode(t, 200)
	get(nodeToken, "/api/v1/nodes/n1").mustCode(t, 404)
	get(nodeToken, "/api/v1/nodes/n2").mustCode(t, 403).mustMessage(t,
		`nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object`)
	get(nodeToken, "/api/v1/namespaces/"+ns+"/serviceaccounts").mustCode(t, 403).mustMessage(t,
		`serviceaccounts is forbidden: User "system:node:n1" cannot list resource "serviceaccounts" in API group "" in the namespace "`+ns+`": can only create tokens for individual service accounts`)
	get(nodeToken, "/apis/apps/v1/namespaces/"+ns+"/deployments").mustCode(t, 403).mustMessage(t,
		`deployments.apps is forbidden: User "system:node:n1" cannot list resource "deployments" in API group "apps" in the namespace "`+ns+`"`)
	// Not a node: the Node authorizer has no opinion and gives no reason.
	e.send(req{method: "GET", path: secret + "s1", token: aliceToken}).mustCode(t, 403).mustMessage(t,
		`secrets "s1" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "`+ns+`"`)

	// Binding a new pod to n1 makes its secret and config map readable.
	e.do("POST", "/api/v1/namespaces/"+ns+"/pods", pod("p2", "n1", "s2", "c2")).mustCode(t, 201)
	eventually("p2's secret", func() bool { return get(nodeToken, secret+"s2").code == 200 })
	get(nodeToken, cm+"c2").mustCode(t, 200)
	get(node2Token, secret+"s2").mustCode(t, 403)
	// A kubelet's client certificate is the same identity.
	ca, err := security.EnsureCA(e.opts.CertDir)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(t.TempDir(), "n1.crt"), filepath.Join(t.TempDir(), "n1.key")
	if err := ca.EnsureClientCert(certFile, keyFile, "system:node:n1", []string{"system:nodes"}); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	tr := e.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	kubelet := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	for p, want := range map[string]int{secret + "s2": 200, cm + "c2": 200, secret + "s3": 403} {
		res, err := kubelet.Get(e.srv.URL() + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("client certificate: GET %s: %d, want %d", p, res.StatusCode, want)
		}
	}
	// Deleting it takes them away again.
	e.do("DELETE", "/api/v1/namespaces/"+ns+"/pods/p2?gracePeriodSeconds=0", nil).mustCode(t, 200)
	eventually("p2's secret gone", func() bool { return get(nodeToken, secret+"s2").code == 403 })
	get(nodeToken, secret+"s1").mustCode(t, 200)
}

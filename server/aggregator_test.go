package server_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"platd/config"
)

// testPKI is a CA able to sign serving and client certificates.
type testPKI struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestPKI(t *testing.T, cn string) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testPKI{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a certificate for cn: a serving one for dnsNames, or a
// client one without names.
func (p *testPKI) issue(t *testing.T, cn string, dnsNames ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	if len(dnsNames) > 0 {
		tmpl.DNSNames = dnsNames
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// extensionServer is an extension API server for group/version serving
// "flunders": its discovery document, and an echo of what each other
// request carried.
type extensionServer struct {
	srv            *httptest.Server
	group, version string
	ca             *testPKI
	// aggregated makes it serve aggregated discovery at /apis, listing
	// flunders with one more short name than its resource list.
	aggregated bool

	mu sync.Mutex
	// seen holds the echo of every request but discovery checks.
	seen []echo
	// checks holds the echo of every discovery request.
	checks []echo
	// peer is the last client certificate presented.
	peer *x509.Certificate
}

// echo is what an extension server saw of a request.
type echo struct {
	Path          string              `json:"path"`
	Query         string              `json:"query"`
	User          []string            `json:"user"`
	UID           []string            `json:"uid"`
	Groups        []string            `json:"groups"`
	Extra         map[string][]string `json:"extra"`
	Authorization string              `json:"authorization"`
	Impersonate   string              `json:"impersonate"`
	ClientCN      string              `json:"clientCN"`
}

// startExtensionServer serves group/version over TLS with a certificate
// for service ns/name, asking for (not requiring) a client certificate.
func startExtensionServer(t *testing.T, ns, name, group, version string) *extensionServer {
	t.Helper()
	x := &extensionServer{group: group, version: version, ca: newTestPKI(t, "extension-ca")}
	certPEM, keyPEM := x.ca.issue(t, name, name+"."+ns+".svc")
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	x.srv = httptest.NewUnstartedServer(http.HandlerFunc(x.serve))
	// Endpoints may not name a loopback address: the server listens on
	// one of the host's own.
	l, err := net.Listen("tcp", net.JoinHostPort(hostIP(t), "0"))
	if err != nil {
		t.Fatal(err)
	}
	x.srv.Listener.Close()
	x.srv.Listener = l
	x.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert}
	x.srv.StartTLS()
	t.Cleanup(x.srv.Close)
	return x
}

func (x *extensionServer) serve(w http.ResponseWriter, r *http.Request) {
	e := echo{Path: r.URL.Path, Query: r.URL.RawQuery, User: r.Header.Values("X-Remote-User"), UID: r.Header.Values("X-Remote-Uid"),
		Groups: r.Header.Values("X-Remote-Group"), Authorization: r.Header.Get("Authorization"), Impersonate: r.Header.Get("Impersonate-User")}
	for k, vs := range r.Header {
		if rest, ok := strings.CutPrefix(k, "X-Remote-Extra-"); ok {
			key, _ := url.PathUnescape(strings.ToLower(rest))
			if e.Extra == nil {
				e.Extra = map[string][]string{}
			}
			e.Extra[key] = vs
		}
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		e.ClientCN = r.TLS.PeerCertificates[0].Subject.CommonName
		x.mu.Lock()
		x.peer = r.TLS.PeerCertificates[0]
		x.mu.Unlock()
	}
	if r.Header.Get("Upgrade") == "echo" {
		x.upgrade(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	gv := x.group + "/" + x.version
	x.mu.Lock()
	defer x.mu.Unlock()
	if r.URL.Path == "/apis" && x.aggregated && strings.Contains(r.Header.Get("Accept"), "g="+config.Brands["kubernetes"].DiscoveryGroup()+";v=v2;as=APIGroupDiscoveryList") {
		w.Header().Set("Content-Type", "application/json;g="+config.Brands["kubernetes"].DiscoveryGroup()+";v=v2;as=APIGroupDiscoveryList")
		fmt.Fprintf(w, `{"kind":"APIGroupDiscoveryList","apiVersion":"%s/v2","metadata":{},"items":[{"metadata":{"name":%q},"versions":[{"version":%q,"freshness":"Current","resources":[`+
			`{"resource":"flunders","responseKind":{"group":"","version":"","kind":"Flunder"},"scope":"Namespaced","singularResource":"flunder","verbs":["get","list"],"shortNames":["fl","flu"],`+
			`"subresources":[{"subresource":"status","responseKind":{"group":"","version":"","kind":"Flunder"},"verbs":["get"]}]}]}]}]}`,
			config.Brands["kubernetes"].DiscoveryGroup(), x.group, x.version)
		return
	}
	if r.URL.Path == "/apis/"+gv {
		x.checks = append(x.checks, e)
		fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":[`+
			`{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["get","list"],"shortNames":["fl"],"categories":["all"]},`+
			`{"name":"flunders/status","singularName":"","namespaced":true,"kind":"Flunder","verbs":["get"]}]}`, gv)
		return
	}
	x.seen = append(x.seen, e)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Echo", "apiVersion": gv, "echo": e})
}

// upgrade switches the connection to a line echo that first names the
// user the upgrade request carried.
func (x *extensionServer) upgrade(w http.ResponseWriter, e echo) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nuser %s\n", strings.Join(e.User, ","))
	_ = rw.Flush()
	line, err := rw.ReadString('\n')
	if err != nil {
		return
	}
	_, _ = rw.WriteString("echo " + line)
	_ = rw.Flush()
}

// lastPeer is the last client certificate it was presented.
func (x *extensionServer) lastPeer() *x509.Certificate {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.peer
}

// requests is how many requests other than discovery it has seen.
func (x *extensionServer) requests() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.seen)
}

// discoveryRequests are the requests for its group-version's discovery
// document it saw: availability checks and reads of its resources.
func (x *extensionServer) discoveryRequests() []echo {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.checks)
}

func (x *extensionServer) port() int { return x.srv.Listener.Addr().(*net.TCPAddr).Port }

func (x *extensionServer) ip() string { return x.srv.Listener.Addr().(*net.TCPAddr).IP.String() }

// hostIP is an IPv4 address of this host that an Endpoints object may
// name (not loopback, not link-local); the test is skipped without one.
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip := n.IP.To4(); ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
				return ip.String()
			}
		}
	}
	t.Skip("no non-loopback IPv4 address to serve an endpoint on")
	return ""
}

// caBundle is the server's CA as an APIService caBundle.
func (x *extensionServer) caBundle() string { return base64.StdEncoding.EncodeToString(x.ca.pem) }

// backing is the namespace, service and endpoints that route to x, and
// its APIService.
func (x *extensionServer) backing(ns, name string, b config.Brand) (namespace, service, endpoints, apiService map[string]any) {
	namespace = map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
	service = map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": 443, "targetPort": 8443}}}}
	endpoints = map[string]any{"apiVersion": "v1", "kind": "Endpoints", "metadata": map[string]any{"name": name, "namespace": ns},
		"subsets": []any{map[string]any{"addresses": []any{map[string]any{"ip": x.ip()}}, "ports": []any{map[string]any{"name": "https", "port": x.port()}}}}}
	apiService = map[string]any{"apiVersion": b.Group("apiregistration") + "/v1", "kind": "APIService",
		"metadata": map[string]any{"name": x.version + "." + x.group},
		"spec": map[string]any{"group": x.group, "version": x.version, "groupPriorityMinimum": 1000, "versionPriority": 15,
			"service": map[string]any{"namespace": ns, "name": name, "port": 443}, "caBundle": x.caBundle()}}
	return
}

// proxyClientFiles writes a front-proxy client certificate signed by a
// new CA and returns the certificate and key files.
func proxyClientFiles(t *testing.T) (cert, key string) {
	t.Helper()
	ca := newTestPKI(t, "front-proxy-ca")
	certPEM, keyPEM := ca.issue(t, "front-proxy-client")
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "proxy.crt"), filepath.Join(dir, "proxy.key")
	if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// withProxyClient has the server present a front-proxy client
// certificate (proxyClientFiles).
func withProxyClient(t *testing.T) option {
	cert, key := proxyClientFiles(t)
	return func(o *config.Options) { o.ProxyClientCertFile, o.ProxyClientKeyFile = cert, key }
}

// aggregatedEnv is a server with an extension API server registered by
// an APIService, not yet backed by a service.
type aggregatedEnv struct {
	*env
	x                             *extensionServer
	ns, name, group, version      string
	namespace, service, endpoints map[string]any
	apiServices, apiService       string
}

// startAggregated starts a server (RBAC, with a front-proxy client
// certificate) and an extension server, and creates the APIService.
func startAggregated(t *testing.T) *aggregatedEnv {
	t.Helper()
	a := &aggregatedEnv{ns: "wardle", name: "api", group: "wardle.example.com", version: "v1alpha1"}
	a.x = startExtensionServer(t, a.ns, a.name, a.group, a.version)
	a.env = start(t, withRBAC, withProxyClient(t))
	b := a.opts.Brand
	var apiService map[string]any
	a.namespace, a.service, a.endpoints, apiService = a.x.backing(a.ns, a.name, b)
	a.apiServices = groupPath(b.Group("apiregistration"), "v1", "", "apiservices")
	a.apiService = a.apiServices + "/" + a.version + "." + a.group
	a.do("POST", a.apiServices, apiService).mustCode(t, 201)
	return a
}

// back creates the service and endpoints of the extension server.
func (a *aggregatedEnv) back(t *testing.T) {
	t.Helper()
	a.do("POST", "/api/v1/namespaces", a.namespace).mustCode(t, 201)
	a.do("POST", "/api/v1/namespaces/"+a.ns+"/services", a.service).mustCode(t, 201)
	a.do("POST", "/api/v1/namespaces/"+a.ns+"/endpoints", a.endpoints).mustCode(t, 201)
}

// condition waits for the APIService's Available condition to have
// status and returns it.
func (a *aggregatedEnv) condition(t *testing.T, status string) map[string]any {
	t.Helper()
	var cond map[string]any
	eventually(t, "the APIService Available="+status, func() bool {
		got := a.do("GET", a.apiService, nil).mustCode(t, 200).obj(t)
		cond, _ = at(got, "status", "conditions", 0).(map[string]any)
		return cond["status"] == status
	})
	return cond
}

// stopBackend stops the extension server and touches its endpoints, so
// that the APIService is checked again; it returns the server's address.
func (a *aggregatedEnv) stopBackend(t *testing.T) string {
	t.Helper()
	hostPort := a.x.srv.Listener.Addr().String()
	a.x.srv.Close()
	a.do("PATCH", "/api/v1/namespaces/"+a.ns+"/endpoints/"+a.name, `{"metadata":{"labels":{"touched":"yes"}}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
	return hostPort
}

// TestAggregatedAPIProxy walks a request through upstream's aggregator:
// the discovery check makes the APIService Available; requests are
// authorized here and proxied with the caller's identity in the
// X-Remote-* headers, never its credentials, over TLS verified by the
// caBundle and with the front proxy's client certificate; the server
// going away makes requests and the APIService unavailable with
// upstream's texts.
func TestAggregatedAPIProxy(t *testing.T) {
	t.Parallel()
	a := startAggregated(t)
	e, x := a.env, a.x
	p := "/apis/" + a.group + "/" + a.version + "/namespaces/x/flunders"

	// Unavailable: upstream's 503, before anything is proxied.
	r := e.do("GET", p, nil).mustCode(t, 503)
	if string(r.body) != "service unavailable\n" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("unavailable: %q %v", r.body, r.header)
	}

	a.back(t)
	cond := a.condition(t, "True")
	if cond["reason"] != "Passed" || cond["message"] != "all checks passed" {
		t.Errorf("available condition: %v", cond)
	}
	// The availability check comes as a privileged member; a read of
	// the resources as the aggregator alone.
	checked := false
	for _, c := range x.discoveryRequests() {
		checked = checked || slices.Equal(c.Groups, []string{"system:masters"})
		if !slices.Equal(c.User, []string{"system:kube-aggregator"}) || len(c.Groups) > 0 && !slices.Equal(c.Groups, []string{"system:masters"}) || c.ClientCN != "front-proxy-client" {
			t.Errorf("a discovery request came as %+v", c)
		}
	}
	if !checked {
		t.Errorf("no availability check came as a member of system:masters: %+v", x.discoveryRequests())
	}

	// Requests are proxied with the caller's identity, never its
	// credentials or a forged identity; the path and query are kept.
	cases := []struct {
		name   string
		header []string
		want   echo
	}{
		{"caller", []string{"X-Remote-User", "mallory", "X-Remote-Group", "system:masters"},
			echo{User: []string{"admin"}, Groups: []string{"system:masters", "system:authenticated"}}},
		{"impersonated", []string{"Impersonate-User", "bob", "Impersonate-Group", "system:masters", "Impersonate-Extra-Example.com%2fteam", "blue"},
			echo{User: []string{"bob"}, Groups: []string{"system:masters", "system:authenticated"}, Extra: map[string][]string{"example.com/team": {"blue"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got struct{ Echo echo }
			if err := json.Unmarshal(e.do("GET", p+"?limit=5&labelSelector=a%3Db", nil, c.header...).mustCode(t, 200).body, &got); err != nil {
				t.Fatal(err)
			}
			want := c.want
			want.Path, want.Query, want.ClientCN = p, "limit=5&labelSelector=a%3Db", "front-proxy-client"
			if fmt.Sprint(got.Echo) != fmt.Sprint(want) {
				t.Errorf("the server saw\n %+v\nwant\n %+v", got.Echo, want)
			}
		})
	}
	// An upgrade request is proxied too, and the connection then carries
	// the stream both ways.
	t.Run("upgrade", func(t *testing.T) {
		u, _ := url.Parse(e.srv.URL())
		conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: e.client.Transport.(*http.Transport).TLSClientConfig.RootCAs, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s/y/exec HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n", p, u.Host, adminToken)
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade answered %d", res.StatusCode)
		}
		if line, _ := br.ReadString('\n'); line != "user admin\n" {
			t.Errorf("first line %q", line)
		}
		fmt.Fprint(conn, "ping\n")
		if line, _ := br.ReadString('\n'); line != "echo ping\n" {
			t.Errorf("echo %q", line)
		}
	})

	// Authorization runs here first: a user without rights never reaches
	// the server.
	before := x.requests()
	e.as("alice", "GET", p).mustCode(t, 403)
	if n := x.requests(); n != before {
		t.Errorf("a forbidden request reached the extension server")
	}

	// The server goes away: requests meet upstream's proxy error, and
	// the next check marks the APIService unavailable.
	hostPort := x.srv.Listener.Addr().String()
	x.srv.Close()
	r = e.do("GET", p, nil).mustCode(t, 503)
	if !strings.Contains(string(r.body), "dial tcp "+hostPort+": connect: connection refused") {
		t.Errorf("proxying to a stopped server: %q", r.body)
	}
	a.stopBackend(t)
	cond = a.condition(t, "False")
	url := "https://" + hostPort + "/apis/" + a.group + "/" + a.version
	want := "failing or missing response from " + url + `: Get "` + url + `": dial tcp ` + hostPort + ": connect: connection refused"
	if cond["reason"] != "FailedDiscoveryCheck" || cond["message"] != want {
		t.Errorf("condition after the server stopped: %v\nwant message %q", cond, want)
	}
	r = e.do("GET", p, nil).mustCode(t, 503)
	if string(r.body) != "service unavailable\n" {
		t.Errorf("unavailable: %q", r.body)
	}
}

// TestAggregatedAPIDiscovery: /apis lists an APIService's group-version
// and /apis/<group> is answered here, while the group-version's resource
// list comes from the extension server; aggregated discovery lists the
// version stale and without resources until the APIService is
// available, then with the resources the server's own aggregated
// document lists (TestKubectlAggregatedAPI: a server without one).
func TestAggregatedAPIDiscovery(t *testing.T) {
	t.Parallel()
	a := startAggregated(t)
	a.x.mu.Lock()
	a.x.aggregated = true
	a.x.mu.Unlock()
	e, group, version := a.env, a.group, a.version
	aggregatedAccept := "application/json;g=" + e.opts.Brand.DiscoveryGroup() + ";v=v2;as=APIGroupDiscoveryList"
	versionOf := func() map[string]any {
		t.Helper()
		var l struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
				Versions []map[string]any      `json:"versions"`
			} `json:"items"`
		}
		if err := json.Unmarshal(e.do("GET", "/apis", nil, "Accept", aggregatedAccept).mustCode(t, 200).body, &l); err != nil {
			t.Fatal(err)
		}
		for _, g := range l.Items {
			if g.Metadata.Name == group {
				return g.Versions[0]
			}
		}
		return nil
	}
	if v := versionOf(); v == nil || v["version"] != version || v["freshness"] != "Stale" || len(v["resources"].([]any)) != 0 {
		t.Errorf("aggregated discovery of an unavailable APIService: %v", v)
	}
	legacy := func() bool {
		var listed bool
		for _, g := range e.do("GET", "/apis", nil).mustCode(t, 200).obj(t)["groups"].([]any) {
			gm := g.(map[string]any)
			listed = listed || gm["name"] == group && at(gm, "preferredVersion", "version") == version
		}
		return listed
	}
	if !legacy() {
		t.Errorf("/apis does not list the unavailable %s", group)
	}
	openapiKey := "apis/" + group + "/" + version
	openapiIndex := func() map[string]any {
		t.Helper()
		paths, _ := e.do("GET", "/openapi/v3", nil).mustCode(t, 200).obj(t)["paths"].(map[string]any)
		entry, _ := paths[openapiKey].(map[string]any)
		return entry
	}
	if entry := openapiIndex(); entry != nil {
		t.Errorf("the OpenAPI index lists an unavailable APIService: %v", entry)
	}

	a.back(t)
	a.condition(t, "True")
	if !legacy() {
		t.Errorf("/apis does not list %s", group)
	}
	grp := e.do("GET", "/apis/"+group, nil).mustCode(t, 200).obj(t)
	if grp["kind"] != "APIGroup" || at(grp, "versions", 0, "groupVersion") != group+"/"+version || at(grp, "preferredVersion", "version") != version {
		t.Errorf("/apis/%s: %v", group, grp)
	}
	rl := e.do("GET", "/apis/"+group+"/"+version, nil).mustCode(t, 200).obj(t)
	if rl["kind"] != "APIResourceList" || at(rl, "resources", 0, "name") != "flunders" {
		t.Errorf("resource list: %v", rl)
	}
	// The OpenAPI v3 index lists the group-version, whose document is the
	// extension server's.
	entry := openapiIndex()
	if entry == nil || entry["serverRelativeURL"] != "/openapi/v3/"+openapiKey {
		t.Fatalf("OpenAPI index entry: %v", entry)
	}
	doc := e.do("GET", entry["serverRelativeURL"].(string), nil).mustCode(t, 200).obj(t)
	if at(doc, "echo", "path") != "/openapi/v3/"+openapiKey {
		t.Errorf("the OpenAPI document was not the extension server's: %v", doc)
	}
	var v map[string]any
	eventually(t, "aggregated discovery with the server's resources", func() bool {
		v = versionOf()
		return v != nil && v["freshness"] == "Current" && len(v["resources"].([]any)) == 1
	})
	res := at(v, "resources", 0).(map[string]any)
	want := `{"resource":"flunders","responseKind":{"group":"","kind":"Flunder","version":""},"scope":"Namespaced","shortNames":["fl","flu"],` +
		`"singularResource":"flunder","subresources":[{"responseKind":{"group":"","kind":"Flunder","version":""},"subresource":"status","verbs":["get"]}],"verbs":["get","list"]}`
	if got, _ := json.Marshal(res); string(got) != want {
		t.Errorf("aggregated resource:\n got  %s\n want %s", got, want)
	}

	a.stopBackend(t)
	a.condition(t, "False")
	if v := versionOf(); v == nil || v["freshness"] != "Stale" || len(v["resources"].([]any)) != 0 {
		t.Errorf("aggregated discovery of an APIService no longer available: %v", v)
	}
}

// TestAggregatedAPIGeneratedFrontProxy: without proxy flags platd makes
// a front-proxy CA and client pair, as kubeadm does, proxies with the
// pair, trusts the CA for request-header authentication and publishes it
// in the authentication ConfigMap, so that an extension server verifying
// the proxy against that ConfigMap trusts the users it names.
func TestAggregatedAPIGeneratedFrontProxy(t *testing.T) {
	t.Parallel()
	const ns, name, group, version = "wardle", "api", "wardle.example.com", "v1alpha1"
	x := startExtensionServer(t, ns, name, group, version)
	e := start(t)
	dir := filepath.Join(e.opts.CertDir, "front-proxy")
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	cmPath := "/api/v1/namespaces/" + e.opts.Brand.SystemNamespace + "/configmaps/extension-apiserver-authentication"
	data, _ := e.do("GET", cmPath, nil).mustCode(t, 200).obj(t)["data"].(map[string]any)
	want := map[string]any{
		"requestheader-client-ca-file": string(caPEM), "requestheader-allowed-names": `["front-proxy-client"]`,
		"requestheader-username-headers": `["X-Remote-User"]`, "requestheader-group-headers": `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`, "requestheader-uid-headers": `[]`,
	}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("%s = %v, want %v", k, data[k], v)
		}
	}

	// platd itself trusts the pair as kube-apiserver trusts its front proxy.
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "front-proxy-client.crt"), filepath.Join(dir, "front-proxy-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	tr := e.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = []tls.Certificate{pair}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", e.srv.URL()+groupPath(e.opts.Brand.Group("authentication"), "v1", "", "selfsubjectreviews"),
		strings.NewReader(`{"kind":"SelfSubjectReview","apiVersion":"`+e.opts.Brand.Group("authentication")+`/v1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Remote-User", "carol")
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var review map[string]any
	_ = json.NewDecoder(res.Body).Decode(&review)
	res.Body.Close()
	if at(review, "status", "userInfo", "username") != "carol" {
		t.Errorf("a request over the front-proxy pair: %d %v", res.StatusCode, review)
	}

	// The extension server sees the pair, which the published CA verifies.
	namespace, service, endpoints, apiService := x.backing(ns, name, e.opts.Brand)
	e.do("POST", "/api/v1/namespaces", namespace).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/"+ns+"/services", service).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/"+ns+"/endpoints", endpoints).mustCode(t, 201)
	e.do("POST", groupPath(e.opts.Brand.Group("apiregistration"), "v1", "", "apiservices"), apiService).mustCode(t, 201)
	eventually(t, "a proxied request", func() bool {
		return e.do("GET", "/apis/"+group+"/"+version+"/namespaces/x/flunders", nil).code == 200
	})
	peer := x.lastPeer()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(data["requestheader-client-ca-file"].(string)))
	if peer == nil || peer.Subject.CommonName != "front-proxy-client" {
		t.Fatalf("the extension server saw client certificate %v", peer)
	}
	if _, err := peer.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the published request-header CA does not verify the proxy: %v", err)
	}
}

// TestAggregatorProxyClientCertReloaded: a rotated
// --proxy-client-cert-file/--proxy-client-key-file pair is presented to
// extension servers without a restart, as upstream reloads it.
func TestAggregatorProxyClientCertReloaded(t *testing.T) {
	t.Parallel()
	a := &aggregatedEnv{ns: "wardle", name: "api", group: "wardle.example.com", version: "v1alpha1"}
	a.x = startExtensionServer(t, a.ns, a.name, a.group, a.version)
	cert, key := proxyClientFiles(t)
	a.env = start(t, withRBAC, func(o *config.Options) { o.ProxyClientCertFile, o.ProxyClientKeyFile = cert, key })
	b := a.opts.Brand
	var apiService map[string]any
	a.namespace, a.service, a.endpoints, apiService = a.x.backing(a.ns, a.name, b)
	a.apiServices = groupPath(b.Group("apiregistration"), "v1", "", "apiservices")
	a.apiService = a.apiServices + "/" + a.version + "." + a.group
	a.do("POST", a.apiServices, apiService).mustCode(t, 201)
	a.back(t)
	a.condition(t, "True")
	p := "/apis/" + a.group + "/" + a.version + "/namespaces/x/flunders"
	clientCN := func() string {
		var got struct{ Echo echo }
		_ = json.Unmarshal(a.do("GET", p, nil).mustCode(t, 200).body, &got)
		return got.Echo.ClientCN
	}
	if cn := clientCN(); cn != "front-proxy-client" {
		t.Fatalf("before rotation the extension server sees client CN %q", cn)
	}

	// Rotate: a new pair, with a new CN, in the same files.
	certPEM, keyPEM := newTestPKI(t, "front-proxy-ca-2").issue(t, "front-proxy-client-rotated")
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rotated client certificate", func() bool { return clientCN() == "front-proxy-client-rotated" })
}

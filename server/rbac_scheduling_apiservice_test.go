package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"reflect"
	"testing"
	"time"

	"platd/config"
	"platd/server/builtin"
)

// TestRBACSchedulingAPIServiceDefaults creates objects of the rbac,
// scheduling and apiregistration groups and reads back what upstream's
// defaulting and create rules store.
func TestRBACSchedulingAPIServiceDefaults(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	rbac := b.Group("rbac.authorization")
	type check = fieldCheck
	tests := []struct {
		name, path string
		body       map[string]any
		checks     []check
	}{
		{
			"clusterrole", groupPath(rbac, "v1", "", "clusterroles"),
			map[string]any{"metadata": map[string]any{"name": "system:reader"}, "rules": []any{
				map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}},
				map[string]any{"nonResourceURLs": []any{"/healthz"}, "verbs": []any{"get"}},
			}},
			[]check{
				{[]any{"rules", 1, "nonResourceURLs"}, []any{"/healthz"}},
				{[]any{"metadata", "generation"}, nil},
			},
		},
		{
			"rolebinding", groupPath(rbac, "v1", "default", "rolebindings"),
			map[string]any{"metadata": map[string]any{"name": "rb"}, "roleRef": map[string]any{"kind": "ClusterRole", "name": "view"},
				"subjects": []any{map[string]any{"kind": "User", "name": "u"}, map[string]any{"kind": "ServiceAccount", "name": "sa"}}},
			[]check{
				{[]any{"roleRef"}, map[string]any{"apiGroup": rbac, "kind": "ClusterRole", "name": "view"}},
				{[]any{"subjects", 0, "apiGroup"}, rbac},
				{[]any{"subjects", 1, "apiGroup"}, nil},
			},
		},
		{
			"clusterrolebinding", groupPath(rbac, "v1", "", "clusterrolebindings"),
			map[string]any{"metadata": map[string]any{"name": "crb"}, "roleRef": map[string]any{"apiGroup": rbac, "kind": "ClusterRole", "name": "view"},
				"subjects": []any{map[string]any{"kind": "Group", "name": "g"}}},
			[]check{{[]any{"subjects", 0, "apiGroup"}, rbac}},
		},
		{
			"priorityclass", groupPath(b.Group("scheduling"), "v1", "", "priorityclasses"),
			map[string]any{"metadata": map[string]any{"name": "high"}, "value": 1000},
			[]check{
				{[]any{"preemptionPolicy"}, "PreemptLowerPriority"},
				{[]any{"value"}, 1000.0},
			},
		},
		{
			"remote apiservice", groupPath(b.Group("apiregistration"), "v1", "", "apiservices"),
			map[string]any{"metadata": map[string]any{"name": "v1beta1.metrics.example.com"}, "spec": map[string]any{
				"group": "metrics.example.com", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 10,
				"service": map[string]any{"namespace": "ns", "name": "metrics"}},
				"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True"}}}},
			// The status the create sets aside is TestAPIServiceAvailability's.
			[]check{{[]any{"spec", "service", "port"}, 443.0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustStore(t, e, tt.path, tt.body, tt.checks) })
	}

	t.Run("local apiservice", func(t *testing.T) {
		// The server wrote it at start, as upstream's registration does.
		p := groupPath(b.Group("apiregistration"), "v1", "", "apiservices")
		got := e.do("GET", p+"/v1."+b.Group("scheduling"), nil).mustCode(t, 200).obj(t)
		cond, _ := at(got, "status", "conditions", 0).(map[string]any)
		if cond["type"] != "Available" || cond["status"] != "True" || cond["reason"] != "Local" ||
			cond["message"] != "Local APIServices are always available" || cond["lastTransitionTime"] == nil {
			t.Errorf("condition = %v", cond)
		}
		if at(got, "metadata", "name") != "v1."+b.Group("scheduling") || at(got, "spec", "groupPriorityMinimum") != 16600.0 {
			t.Errorf("apiservice = %v", got)
		}
		// The server keeps a local APIService available over a status
		// write, as upstream's availability controller does.
		got["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False", "reason": "Down"}}}
		up := e.do("PUT", p+"/"+at(got, "metadata", "name").(string)+"/status", got).mustCode(t, 200).obj(t)
		if at(up, "status", "conditions", 0, "status") != "True" || at(up, "status", "conditions", 0, "reason") != "Local" {
			t.Errorf("after status write: %v", up["status"])
		}
	})

	t.Run("role put creates", func(t *testing.T) {
		p := groupPath(rbac, "v1", "default", "roles") + "/r"
		e.do("PUT", p, map[string]any{"metadata": map[string]any{"name": "r"}, "rules": []any{}}).mustCode(t, 201)
	})
}

// TestRBACSchedulingAPIServiceRejectInvalid checks that each type answers
// a broken object with 422 and upstream's causes.
func TestRBACSchedulingAPIServiceRejectInvalid(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	rbac := b.Group("rbac.authorization")
	tests := []struct {
		name, path string
		body       map[string]any
		kind       string
		causes     []string
	}{
		{"role rules", groupPath(rbac, "v1", "default", "roles"),
			map[string]any{"metadata": map[string]any{"name": "r"}, "rules": []any{map[string]any{"nonResourceURLs": []any{"/x"}}}},
			"Role." + rbac, []string{
				"rules[0].verbs: Required value: verbs must contain at least one value",
				`rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs`,
			}},
		{"clusterrole rules", groupPath(rbac, "v1", "", "clusterroles"),
			map[string]any{"metadata": map[string]any{"name": "c"}, "rules": []any{map[string]any{"verbs": []any{"get"}}},
				"aggregationRule": map[string]any{}},
			"ClusterRole." + rbac, []string{
				"rules[0].apiGroups: Required value: resource rules must supply at least one api group",
				"rules[0].resources: Required value: resource rules must supply at least one resource",
				"aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
			}},
		{"clusterrolebinding", groupPath(rbac, "v1", "", "clusterrolebindings"),
			map[string]any{"metadata": map[string]any{"name": "crb"}, "roleRef": map[string]any{"kind": "Role", "name": "r"},
				"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "sa"}}},
			"ClusterRoleBinding." + rbac, []string{
				`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`,
				"subjects[0].namespace: Required value",
			}},
		{"rolebinding without ref", groupPath(rbac, "v1", "default", "rolebindings"),
			map[string]any{"metadata": map[string]any{"name": "rb"}},
			"RoleBinding." + rbac, []string{
				`roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"`,
				"roleRef.name: Required value",
			}},
		{"priorityclass", groupPath(b.Group("scheduling"), "v1", "", "priorityclasses"),
			map[string]any{"metadata": map[string]any{"name": "system-mine"}, "value": 5, "preemptionPolicy": "Always"},
			"PriorityClass." + b.Group("scheduling"), []string{
				"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
				`preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"`,
			}},
		{"apiservice", groupPath(b.Group("apiregistration"), "v1", "", "apiservices"),
			map[string]any{"metadata": map[string]any{"name": "v1.example.com"}, "spec": map[string]any{
				"group": "other.example.com", "version": "v1", "versionPriority": 10}},
			"APIService." + b.Group("apiregistration"), []string{
				"metadata.name: Invalid value: \"v1.example.com\": must be `spec.version+\".\"+spec.group`: \"v1.other.example.com\"",
				"spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
			}},
		{"csr", groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests"),
			map[string]any{"metadata": map[string]any{"name": "c"}, "spec": map[string]any{
				"request": base64.StdEncoding.EncodeToString([]byte("no")), "signerName": "example.com/s", "expirationSeconds": 60}},
			"CertificateSigningRequest." + b.Group("certificates"), []string{
				"spec.request: Invalid value: []byte{0x6e, 0x6f}: PEM block type must be CERTIFICATE REQUEST",
				"spec.usages: Required value",
				"spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustRefuse(t, e, tt.path, tt.body, tt.kind, tt.causes) })
	}
}

// TestRBACSchedulingUpdates checks the fields that never change and the
// classes that are never deleted.
func TestRBACSchedulingUpdates(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	rbac := b.Group("rbac.authorization")

	rb := groupPath(rbac, "v1", "default", "rolebindings")
	e.do("POST", rb, map[string]any{"metadata": map[string]any{"name": "rb"},
		"roleRef": map[string]any{"apiGroup": rbac, "kind": "Role", "name": "r"}}).mustCode(t, 201)
	obj := e.do("GET", rb+"/rb", nil).mustCode(t, 200).obj(t)
	obj["roleRef"] = map[string]any{"apiGroup": rbac, "kind": "ClusterRole", "name": "r"}
	st := e.do("PUT", rb+"/rb", obj).mustCode(t, 422).obj(t)
	want := `RoleBinding.` + rbac + ` "rb" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"` + rbac + `", Kind:"ClusterRole", Name:"r"}: cannot change roleRef`
	if st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}

	pcs := groupPath(b.Group("scheduling"), "v1", "", "priorityclasses")
	// The server writes the system classes at start; creating one again
	// is refused.
	for _, pc := range builtin.SystemPriorityClasses(b) {
		e.do("POST", pcs, pc).mustCode(t, 409)
	}
	got := e.do("GET", pcs+"/system-node-critical", nil).mustCode(t, 200).obj(t)
	if got["value"] != 2000001000.0 || got["description"] != "Used for system critical pods that must not be moved from their current node." {
		t.Errorf("system-node-critical = %v", got)
	}
	st = e.do("DELETE", pcs+"/system-cluster-critical", nil).mustCode(t, 403).obj(t)
	if want := `priorityclasses.` + b.Group("scheduling") + ` "system-cluster-critical" is forbidden: this is a system priority class and cannot be deleted`; st["message"] != want {
		t.Errorf("delete message:\n got  %s\n want %s", st["message"], want)
	}
	got["value"] = 1
	got["preemptionPolicy"] = "Never"
	st = e.do("PUT", pcs+"/system-node-critical", got).mustCode(t, 422).obj(t)
	want = `PriorityClass.` + b.Group("scheduling") + ` "system-node-critical" is invalid: [value: Forbidden: may not be changed in an update., preemptionPolicy: Invalid value: "Never": field is immutable]`
	if st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}

	// An APIService update must name the version it replaces.
	as := groupPath(b.Group("apiregistration"), "v1", "", "apiservices")
	cur := e.do("GET", as+"/v1.apps", nil).mustCode(t, 200).obj(t)
	delete(cur["metadata"].(map[string]any), "resourceVersion")
	e.do("PUT", as+"/v1.apps", cur).mustCode(t, 422).
		mustMessage(t, `APIService.`+b.Group("apiregistration")+` "v1.apps" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`)
}

// TestAPIServiceStatusPatch checks that status conditions merge by type
// and a status write leaves spec alone.
func TestAPIServiceStatusPatch(t *testing.T) {
	t.Parallel()
	e := start(t)
	p := groupPath(platBrand.Group("apiregistration"), "v1", "", "apiservices")
	e.do("POST", p, map[string]any{"metadata": map[string]any{"name": "v1.metrics.example.com"}, "spec": map[string]any{
		"group": "metrics.example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10,
		"service": map[string]any{"namespace": "ns", "name": "m", "port": 8443}}}).mustCode(t, 201)
	patch := func(body string) map[string]any {
		return e.do("PATCH", p+"/v1.metrics.example.com/status", body, "Content-Type", "application/strategic-merge-patch+json").mustCode(t, 200).obj(t)
	}
	// The server's availability check writes Available first (its
	// service is missing); the patches add other types beside it.
	eventually(t, "the Available condition", func() bool {
		got := e.do("GET", p+"/v1.metrics.example.com", nil).mustCode(t, 200).obj(t)
		return at(got, "status", "conditions", 0, "reason") == "ServiceNotFound"
	})
	patch(`{"status":{"conditions":[{"type":"Degraded","status":"False","reason":"Fine","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	got := patch(`{"spec":{"versionPriority":99},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	// A new type goes first, as upstream's merge orders patch items.
	conds, _ := at(got, "status", "conditions").([]any)
	if len(conds) != 3 || at(conds, 0, "type") != "Ready" || at(conds, 1, "type") != "Degraded" || at(conds, 1, "reason") != "Fine" ||
		at(conds, 2, "type") != "Available" || at(conds, 2, "reason") != "ServiceNotFound" {
		t.Errorf("conditions = %v", conds)
	}
	if at(got, "spec", "versionPriority") != 10.0 || at(got, "spec", "service", "port") != 8443.0 {
		t.Errorf("status patch changed spec: %v", got["spec"])
	}
	st := e.do("PATCH", p+"/v1.metrics.example.com/status", `{"status":{"conditions":[{"type":"Degraded","status":"Maybe"}]}}`,
		"Content-Type", "application/strategic-merge-patch+json").mustCode(t, 422).obj(t)
	want := `APIService.` + platBrand.Group("apiregistration") + ` "v1.metrics.example.com" is invalid: status.conditions[1].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"`
	if st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}
}

// csrPEM returns a base64 PEM certificate request and a base64 PEM
// certificate.
func csrPEM(t *testing.T) (req, cert string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "node-1"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "node-1"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, der []byte) string {
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	return enc("CERTIFICATE REQUEST", der), enc("CERTIFICATE", certDER)
}

// TestCSRSubresources checks the split of a certificate signing request:
// the main resource never changes spec or status, approval writes only
// conditions, status only the certificate and other conditions.
func TestCSRSubresources(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	p := groupPath(b.Group("certificates"), "v1", "", "certificatesigningrequests")
	req, cert := csrPEM(t)
	created := e.do("POST", p, map[string]any{"metadata": map[string]any{"name": "c"},
		"spec": map[string]any{"request": req, "signerName": "example.com/signer", "usages": []any{"client auth"},
			"username": "someone-else", "extra": map[string]any{"forged": []any{"x"}}},
		"status": map[string]any{"certificate": cert, "conditions": []any{map[string]any{"type": "Approved"}}},
	}).mustCode(t, 201).obj(t)
	if s, _ := created["status"].(map[string]any); len(s) != 0 {
		t.Errorf("status on create = %v", created["status"])
	}
	// The requester is the authenticated user, whatever the body says.
	if at(created, "spec", "username") != "admin" || at(created, "spec", "uid") != "admin-uid" ||
		!reflect.DeepEqual(at(created, "spec", "groups"), []any{"system:masters", "system:authenticated"}) || at(created, "spec", "extra") != nil {
		t.Errorf("requester on create = %v", created["spec"])
	}

	// Lists select by signer.
	list := e.do("GET", p+"?fieldSelector=spec.signerName%3Dexample.com%2Fsigner", nil).mustCode(t, 200).obj(t)
	other := e.do("GET", p+"?fieldSelector=spec.signerName%3Dexample.com%2Fother", nil).mustCode(t, 200).obj(t)
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("signer selector matched %v", list["items"])
	}
	if items, _ := other["items"].([]any); len(items) != 0 {
		t.Errorf("other signer matched %v", other["items"])
	}

	// Main update: spec and status stay, labels change.
	created["spec"].(map[string]any)["usages"] = []any{"server auth"}
	created["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
	up := e.do("PUT", p+"/c", created).mustCode(t, 200).obj(t)
	if at(up, "spec", "usages", 0) != "client auth" || at(up, "metadata", "labels", "a") != "b" {
		t.Errorf("main update: %v", up)
	}

	// Approval: conditions only, status True by default.
	up["status"] = map[string]any{"certificate": cert, "conditions": []any{map[string]any{"type": "Approved", "reason": "Test"}}}
	approved := e.do("PUT", p+"/c/approval", up).mustCode(t, 200).obj(t)
	if at(approved, "status", "conditions", 0, "status") != "True" || at(approved, "status", "certificate") != nil ||
		at(approved, "status", "conditions", 0, "lastUpdateTime") == nil {
		t.Errorf("approval: %v", approved["status"])
	}

	// Status: the certificate; the approval stays as it was.
	approved["status"] = map[string]any{"certificate": cert, "conditions": []any{map[string]any{"type": "Approved", "reason": "Other"}}}
	issued := e.do("PUT", p+"/c/status", approved).mustCode(t, 200).obj(t)
	if at(issued, "status", "certificate") != cert || at(issued, "status", "conditions", 0, "reason") != "Test" {
		t.Errorf("status: %v", issued["status"])
	}

	// Status may not add a denial; approval may not remove the approval.
	issued["status"].(map[string]any)["conditions"] = []any{
		map[string]any{"type": "Approved", "reason": "Test"}, map[string]any{"type": "Denied", "reason": "No"}}
	st := e.do("PUT", p+"/c/status", issued).mustCode(t, 422).obj(t)
	want := `CertificateSigningRequest.` + b.Group("certificates") + ` "c" is invalid: [status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive, status.conditions: Forbidden: updates may not add a condition of type "Denied"]`
	if st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}
	issued["status"] = map[string]any{}
	st = e.do("PUT", p+"/c/approval", issued).mustCode(t, 422).obj(t)
	want = `CertificateSigningRequest.` + b.Group("certificates") + ` "c" is invalid: status.conditions: Forbidden: updates may not remove a condition of type "Approved"`
	if st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}
}

// TestClusterRoleCreateGolden replays a v1.32 server's ClusterRole create
// and compares the stored object, less what differs per run.
func TestClusterRoleCreateGolden(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	rbac := b.Group("rbac.authorization")
	body := `{"apiVersion": "` + rbac + `/v1", "kind": "ClusterRole", "metadata": {"name": "golden-reader"}, "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list", "watch"]}, {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}`
	got := e.do("POST", groupPath(rbac, "v1", "", "clusterroles"), body).mustCode(t, 201).obj(t)
	var want map[string]any
	// managedFields are left out: the server does not track them yet.
	if err := json.Unmarshal([]byte(`{"kind": "ClusterRole", "apiVersion": "`+rbac+`/v1", "metadata": {"name": "golden-reader"},
		"rules": [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["configmaps", "secrets"]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}`), &want); err != nil {
		t.Fatal(err)
	}
	m := got["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
		if m[k] == nil {
			t.Errorf("metadata.%s missing", k)
		}
		delete(m, k)
	}
	delete(m, "managedFields")
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("created:\n got  %s\n want %s", g, w)
	}
}

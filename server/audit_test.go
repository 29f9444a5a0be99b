package server_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"platd/config"
	"platd/server"
)

// auditPolicy is the policy of the audit tests: one level per namespace,
// health checks (the harness polls /readyz) not at all.
const auditPolicy = `apiVersion: audit.DOMAIN/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/readyz*", "/livez*", "/healthz*"]
- level: Metadata
  namespaces: [lvl-meta]
  omitStages: [RequestReceived]
- level: Request
  namespaces: [lvl-req]
  omitStages: [RequestReceived]
- level: RequestResponse
  namespaces: [lvl-rr]
  omitStages: [RequestReceived]
  omitManagedFields: true
- level: RequestResponse
  namespaces: [lvl-rr-mf]
  omitStages: [RequestReceived]
- level: Metadata
  namespaces: [lvl-stages]
- level: Metadata
  resources: [{group: "", resources: [componentstatuses]}]
  omitStages: [RequestReceived]
- level: None
`

// withAudit turns audit on with policy (DOMAIN spelled as the brand's),
// logging to the returned file.
func withAudit(t *testing.T, policy string) (option, string) {
	t.Helper()
	dir := t.TempDir()
	pf := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pf, []byte(strings.ReplaceAll(policy, "DOMAIN", platBrand.Domain)), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "logs", "audit.log")
	return func(o *config.Options) {
		o.Audit = config.AuditLog{PolicyFile: pf, Path: log, Format: config.AuditFormatJSON}
	}, log
}

// auditEvents polls the log until n events of auditID are written, and
// returns them with their timestamps replaced by TIME.
func auditEvents(t *testing.T, log, auditID string, n int) []string {
	t.Helper()
	var lines []string
	eventually(t, "audit events of "+auditID, func() bool {
		lines = lines[:0]
		data, err := os.ReadFile(log)
		if err != nil {
			return false
		}
		// Only whole lines: the last may still be being written.
		whole := strings.Split(string(data), "\n")
		for _, line := range whole[:len(whole)-1] {
			if strings.Contains(line, `"auditID":"`+auditID+`"`) {
				lines = append(lines, timestamps.ReplaceAllString(line, `"TIME"`))
			}
		}
		return len(lines) >= n
	})
	if len(lines) != n {
		t.Fatalf("%d events of %s, want %d:\n%s", len(lines), auditID, n, strings.Join(lines, "\n"))
	}
	return lines
}

// timestamps are MicroTime values: UTC with microseconds.
var timestamps = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"`)

// branded spells DOMAIN as the test brand's domain.
func branded(s string) string { return strings.ReplaceAll(s, "DOMAIN", platBrand.Domain) }

const (
	adminUser = `"user":{"username":"admin","uid":"admin-uid","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"platd-test/1.0"`
	allowed   = `"annotations":{"authorization.DOMAIN/decision":"allow","authorization.DOMAIN/reason":""}`
)

func TestAuditLevels(t *testing.T) {
	t.Parallel()
	opt, log := withAudit(t, auditPolicy)
	e := start(t, opt)
	for _, ns := range []string{"lvl-meta", "lvl-req", "lvl-rr", "lvl-rr-mf", "lvl-stages"} {
		e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	}
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"k":"v"}}`
	// The request object is the body as decoded, before admission.
	decoded := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c1","creationTimestamp":null},"data":{"k":"v"}}`
	create := func(ns string) (string, []byte) {
		r := e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps", body).mustCode(t, 201)
		id := r.header.Get("Audit-Id")
		if id == "" {
			t.Fatal("no Audit-Id header")
		}
		return id, bytes.TrimSpace(r.body)
	}
	head := func(level, id, ns string) string {
		return `{"kind":"Event","apiVersion":"audit.DOMAIN/v1","level":"` + level + `","auditID":"` + id + `","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/` + ns + `/configmaps","verb":"create",` + adminUser +
			`,"objectRef":{"resource":"configmaps","namespace":"` + ns + `","name":"c1","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},`
	}
	tail := `"requestReceivedTimestamp":"TIME","stageTimestamp":"TIME",` + allowed + `}`

	t.Run("Metadata", func(t *testing.T) {
		id, _ := create("lvl-meta")
		got := auditEvents(t, log, id, 1)[0]
		if want := branded(head("Metadata", id, "lvl-meta") + tail); got != want {
			t.Errorf("event:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("Request", func(t *testing.T) {
		id, _ := create("lvl-req")
		got := auditEvents(t, log, id, 1)[0]
		want := branded(head("Request", id, "lvl-req") + `"requestObject":` + decoded + `,` + tail)
		if got != want {
			t.Errorf("event:\n got %s\nwant %s", got, want)
		}
	})
	for _, c := range []struct{ ns string }{{"lvl-rr"}, {"lvl-rr-mf"}} {
		t.Run("RequestResponse "+c.ns, func(t *testing.T) {
			id, resp := create(c.ns)
			if c.ns == "lvl-rr" {
				// omitManagedFields: the response as served, less its
				// managed fields (the last list of the body).
				resp = regexp.MustCompile(`,"managedFields":\[.*\]`).ReplaceAll(resp, nil)
			}
			got := auditEvents(t, log, id, 1)[0]
			want := branded(head("RequestResponse", id, c.ns) + `"requestObject":` + decoded + `,"responseObject":` + timestamps.ReplaceAllString(string(resp), `"TIME"`) + `,` + tail)
			if got != want {
				t.Errorf("event:\n got %s\nwant %s", got, want)
			}
			if has := strings.Contains(got, `"managedFields"`); has != (c.ns == "lvl-rr-mf") {
				t.Errorf("managedFields recorded: %t", has)
			}
		})
	}
	t.Run("failure", func(t *testing.T) {
		r := e.do("GET", "/api/v1/namespaces/lvl-meta/configmaps/nope", nil).mustCode(t, 404)
		id := r.header.Get("Audit-Id")
		got := auditEvents(t, log, id, 1)[0]
		want := branded(`{"kind":"Event","apiVersion":"audit.DOMAIN/v1","level":"Metadata","auditID":"` + id + `","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/lvl-meta/configmaps/nope","verb":"get",` + adminUser +
			`,"objectRef":{"resource":"configmaps","namespace":"lvl-meta","name":"nope","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404},` + tail)
		if got != want {
			t.Errorf("event:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("stages", func(t *testing.T) {
		// A client's audit ID is kept; a watch also writes ResponseStarted.
		const id = "client-chosen-id"
		r := e.do("GET", "/api/v1/namespaces/lvl-stages/configmaps?watch=true&timeoutSeconds=1", nil, "Audit-ID", id).mustCode(t, 200)
		if got := r.header.Get("Audit-Id"); got != id {
			t.Errorf("Audit-Id %q", got)
		}
		got := auditEvents(t, log, id, 3)
		ev := func(stage, status string) string {
			return branded(`{"kind":"Event","apiVersion":"audit.DOMAIN/v1","level":"Metadata","auditID":"` + id + `","stage":"` + stage + `","requestURI":"/api/v1/namespaces/lvl-stages/configmaps?watch=true\u0026timeoutSeconds=1","verb":"watch",` + adminUser +
				`,"objectRef":{"resource":"configmaps","namespace":"lvl-stages","apiVersion":"v1"},` + status + `"requestReceivedTimestamp":"TIME","stageTimestamp":"TIME"`)
		}
		want := []string{
			ev("RequestReceived", "") + `}`,
			ev("ResponseStarted", `"responseStatus":{"metadata":{},"code":200},`) + "," + branded(allowed) + `}`,
			ev("ResponseComplete", `"responseStatus":{"metadata":{},"code":200},`) + "," + branded(allowed) + `}`,
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("event %d:\n got %s\nwant %s", i, got[i], want[i])
			}
		}
	})
	t.Run("impersonation", func(t *testing.T) {
		r := e.do("GET", "/api/v1/namespaces/lvl-meta/configmaps/c1", nil, "Impersonate-User", "alice", "Impersonate-Group", "devs").mustCode(t, 200)
		got := auditEvents(t, log, r.header.Get("Audit-Id"), 1)[0]
		if want := `,"impersonatedUser":{"username":"alice","groups":["devs","system:authenticated"]},`; !strings.Contains(got, want) {
			t.Errorf("event %s lacks %s", got, want)
		}
	})
	t.Run("unauthenticated", func(t *testing.T) {
		r := e.send(req{method: "GET", path: "/api/v1/namespaces/lvl-meta/configmaps", token: "wrong"}).mustCode(t, 401)
		id := r.header.Get("Audit-Id")
		got := auditEvents(t, log, id, 1)[0]
		want := branded(`{"kind":"Event","apiVersion":"audit.DOMAIN/v1","level":"Metadata","auditID":"` + id + `","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/lvl-meta/configmaps","verb":"list","user":{},"sourceIPs":["127.0.0.1"],"userAgent":"platd-test/1.0",` +
			`"objectRef":{"resource":"configmaps","namespace":"lvl-meta","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401},"requestReceivedTimestamp":"TIME","stageTimestamp":"TIME"}`)
		if got != want {
			t.Errorf("event:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("bad timeout", func(t *testing.T) {
		// Refused before authentication: recorded with no user.
		r := e.do("GET", "/api/v1/namespaces/lvl-meta/configmaps?timeout=soon", nil).mustCode(t, 400)
		id := r.header.Get("Audit-Id")
		got := auditEvents(t, log, id, 1)[0]
		want := branded(`{"kind":"Event","apiVersion":"audit.DOMAIN/v1","level":"Metadata","auditID":"` + id + `","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/lvl-meta/configmaps?timeout=soon","verb":"list","user":{},"sourceIPs":["127.0.0.1"],"userAgent":"platd-test/1.0",` +
			`"objectRef":{"resource":"configmaps","namespace":"lvl-meta","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"invalid timeout specified in the request URL - time: invalid duration \"soon\"","reason":"BadRequest","code":400},"requestReceivedTimestamp":"TIME","stageTimestamp":"TIME"}`)
		if got != want {
			t.Errorf("event:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("not audited", func(t *testing.T) {
		r := e.do("GET", "/api/v1/namespaces/default/configmaps", nil).mustCode(t, 200)
		id := r.header.Get("Audit-Id")
		if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
			t.Errorf("Audit-Id %q is not a random UUID", id)
		}
		// An event written after this one's would be there by now.
		marker := e.do("GET", "/api/v1/namespaces/lvl-meta/configmaps", nil).header.Get("Audit-Id")
		auditEvents(t, log, marker, 1)
		auditEvents(t, log, id, 0)
	})
}

func TestAuditDeprecatedAPI(t *testing.T) {
	t.Parallel()
	opt, log := withAudit(t, auditPolicy)
	e := start(t, opt)
	r := e.do("GET", "/api/v1/componentstatuses", nil).mustCode(t, 200)
	if got := r.header.Values("Warning"); len(got) != 1 || got[0] != `299 - "v1 ComponentStatus is deprecated in v1.19+"` {
		t.Errorf("Warning %q", got)
	}
	got := auditEvents(t, log, r.header.Get("Audit-Id"), 1)[0]
	if want := branded(`"annotations":{"authorization.DOMAIN/decision":"allow","authorization.DOMAIN/reason":"","DOMAIN/deprecated":"true"}}`); !strings.HasSuffix(got, want) {
		t.Errorf("event %s\ndoes not end %s", got, want)
	}
	m := sample(scrape(t, e), "apiserver_requested_deprecated_apis", map[string]string{"group": "", "version": "v1", "resource": "componentstatuses", "subresource": "", "removed_release": ""})
	if m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("gauge: %v", m)
	}
}

func TestAuditPolicyFileRefused(t *testing.T) {
	t.Parallel()
	opt, _ := withAudit(t, "apiVersion: audit.DOMAIN/v1\nkind: Policy\nrules: [{level: Everything}]\n")
	o := testOptions(t, t.TempDir(), opt)
	_, err := server.New(context.Background(), o, quietLog())
	want := `rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ` + o.Audit.PolicyFile
	if err == nil || !strings.HasSuffix(err.Error(), want) || !strings.HasPrefix(err.Error(), "invalid configuration: --audit-policy-file: ") {
		t.Errorf("start: %v", err)
	}
}

// A custom resource's deprecated version counts in the gauge too, with no
// removed release, also on its subresources.
func TestDeprecatedCustomResourceGauge(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "dep.example.com")
	p := groupPath("dep.example.com", "v2", "default", "gadgets")
	e.do("GET", p, nil).mustCode(t, 200)
	e.do("GET", p+"/nope/scale", nil).mustCode(t, 404)
	fams := scrape(t, e)
	for _, sub := range []string{"", "scale"} {
		m := sample(fams, "apiserver_requested_deprecated_apis", map[string]string{"group": "dep.example.com", "version": "v2", "resource": "gadgets", "subresource": sub, "removed_release": ""})
		if m == nil || m.GetGauge().GetValue() != 1 {
			t.Errorf("subresource %q: gauge %v", sub, m)
		}
	}
	if m := sample(fams, "apiserver_requested_deprecated_apis", map[string]string{"group": "dep.example.com", "version": "v1", "resource": "gadgets", "subresource": "", "removed_release": ""}); m != nil {
		t.Errorf("the served v1 is not deprecated: %v", m)
	}
}

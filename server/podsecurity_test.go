package server_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"platd/config"
)

// The pod-security labels of a namespace refuse pods breaking the enforce
// level and warn of those breaking the warn level, pods and workload
// templates alike, with upstream's PodSecurity messages; bad label values
// are refused.
func TestPodSecurityAdmission(t *testing.T) {
	t.Parallel()
	e := start(t)
	label := func(mode string) string { return "pod-security." + platBrand.LongDomain + "/" + mode }
	namespace := func(name string, labels map[string]string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": name, "labels": labels}})
		e.do("POST", "/api/v1/namespaces", body).mustCode(t, 201)
	}
	namespace("strict", map[string]string{label("enforce"): "restricted"})
	namespace("lenient", map[string]string{label("enforce"): "baseline"})
	namespace("watched", map[string]string{label("warn"): "restricted"})
	plain := `{"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`
	violations := `allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), ` +
		`runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")`
	unquoted := func(s string) string { var out string; _ = json.Unmarshal([]byte(`"`+s+`"`), &out); return out }

	r := e.do("POST", "/api/v1/namespaces/strict/pods", plain).mustCode(t, 403)
	r.mustMessage(t, `pods "web" is forbidden: violates PodSecurity "restricted:latest": `+unquoted(violations))
	if got := e.do("GET", "/api/v1/namespaces/strict/pods/web", nil).code; got != 404 {
		t.Errorf("refused pod stored: %d", got)
	}

	r = e.do("POST", "/api/v1/namespaces/lenient/pods", plain).mustCode(t, 201)
	if got := r.header.Values("Warning"); len(got) != 0 {
		t.Errorf("baseline warned %q", got)
	}
	e.do("POST", "/api/v1/namespaces/lenient/pods", `{"metadata":{"name":"priv"},"spec":{"containers":[{"name":"c","image":"busybox","securityContext":{"privileged":true}}]}}`).
		mustCode(t, 403).mustMessage(t, `pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`)

	warning := `299 - "would violate PodSecurity \"restricted:latest\": ` + violations + `"`
	r = e.do("POST", "/api/v1/namespaces/watched/pods", plain).mustCode(t, 201)
	if got := r.header.Values("Warning"); !slices.Equal(got, []string{warning}) {
		t.Errorf("pod warnings %q\nwant %q", got, warning)
	}
	r = e.do("POST", "/apis/apps/v1/namespaces/watched/deployments", `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},`+
		`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`).mustCode(t, 201)
	if got := r.header.Values("Warning"); !slices.Equal(got, []string{warning}) {
		t.Errorf("deployment warnings %q\nwant %q", got, warning)
	}
	// Workloads are never refused by the enforce level.
	e.do("POST", "/apis/apps/v1/namespaces/strict/deployments", `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},`+
		`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`).mustCode(t, 201)

	e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"bad","labels":{"`+label("enforce")+`":"strict"}}}`).mustCode(t, 422).
		mustMessage(t, `Namespace "bad" is invalid: metadata.labels[`+label("enforce")+`]: Invalid value: "strict": must be one of privileged, baseline, restricted`)

	// Raising the enforce level of a namespace warns of its pods.
	r = e.do("PATCH", "/api/v1/namespaces/watched", `{"metadata":{"labels":{"`+label("enforce")+`":"restricted"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	want := []string{
		`299 - "existing pods in namespace \"watched\" violate the new PodSecurity enforce level \"restricted:latest\""`,
		`299 - "web: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"`,
	}
	if got := r.header.Values("Warning"); !slices.Equal(got, want) {
		t.Errorf("namespace update warnings %q\nwant %q", got, want)
	}
}

// A PodSecurity configuration given in --admission-control-config-file
// (here by a path relative to the file) sets the policy of namespaces
// without labels and exempts users, namespaces and runtime classes; the
// audit event of each pod write carries upstream's pod-security
// annotations.
func TestPodSecurityConfigurationAndAuditAnnotations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("podsecurity.yaml", "apiVersion: "+config.PodSecurityConfigAPIVersions(platBrand)[0]+"\nkind: PodSecurityConfiguration\n"+
		"defaults:\n  enforce: baseline\n  audit: restricted\n  audit-version: v1.30\n"+
		"exemptions:\n  usernames: [ci]\n  namespaces: [tools]\n  runtimeClasses: [kata]\n")
	file := write("admission.yaml", "apiVersion: "+config.AdmissionConfigAPIVersions(platBrand)[0]+"\nkind: AdmissionConfiguration\nplugins:\n"+
		"- name: EventRateLimit\n  path: elsewhere.yaml\n- name: PodSecurity\n  path: podsecurity.yaml\n")
	auditOpt, log := withAudit(t, "apiVersion: audit.DOMAIN/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: \"\", resources: [pods]}]\n  omitStages: [RequestReceived]\n- level: None\n")
	e := start(t, auditOpt, func(o *config.Options) { o.AdmissionControlConfigFile = file })

	for _, ns := range []string{"plain", "tools"} {
		e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	}
	e.do("POST", groupPath(platBrand.Group("node"), "v1", "", "runtimeclasses"), `{"metadata":{"name":"kata"},"handler":"kata"}`).mustCode(t, 201)

	key := func(k string) string { return "pod-security." + platBrand.LongDomain + "/" + k }
	privileged := `"securityContext":{"privileged":true}`
	pod := func(name, spec, container string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{` + spec + `"containers":[{"name":"c","image":"busybox"` + container + `}]}}`
	}
	restricted := `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	for _, tc := range []struct {
		name, ns, body string
		header         []string
		code           int
		message        string
		annotations    map[string]string
	}{
		{"default enforce refuses", "plain", pod("priv", "", ","+privileged), nil, 403,
			`pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`,
			map[string]string{key("enforce-policy"): "baseline:latest",
				key("audit-violations"): `would violate PodSecurity "restricted:v1.30": privileged (container "c" must not set securityContext.privileged=true), ` + restricted}},
		{"default audit annotates", "plain", pod("web", "", ""), nil, 201, "",
			map[string]string{key("enforce-policy"): "baseline:latest", key("audit-violations"): `would violate PodSecurity "restricted:v1.30": ` + restricted}},
		{"exempt namespace", "tools", pod("priv", "", ","+privileged), nil, 201, "", map[string]string{key("exempt"): "namespace"}},
		{"exempt user", "plain", pod("by-ci", "", ","+privileged), []string{"Impersonate-User", "ci"}, 201, "", map[string]string{key("exempt"): "user"}},
		{"exempt runtime class", "plain", pod("kata", `"runtimeClassName":"kata",`, ","+privileged), nil, 201, "", map[string]string{key("exempt"): "runtimeClass"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/api/v1/namespaces/"+tc.ns+"/pods", tc.body, tc.header...).mustCode(t, tc.code)
			if tc.message != "" {
				r.mustMessage(t, tc.message)
			}
			var name string
			var p map[string]any
			_ = json.Unmarshal([]byte(tc.body), &p)
			name, _ = path(p, "metadata.name").(string)
			stored := e.do("GET", "/api/v1/namespaces/"+tc.ns+"/pods/"+name, nil).code
			if want := map[int]int{201: 200, 403: 404}[tc.code]; stored != want {
				t.Errorf("GET after the write: %d, want %d", stored, want)
			}
			var ev struct {
				Annotations map[string]string `json:"annotations"`
			}
			if err := json.Unmarshal([]byte(auditEvents(t, log, r.header.Get("Audit-Id"), 1)[0]), &ev); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range ev.Annotations {
				if strings.HasPrefix(k, key("")) {
					got[k] = v
				}
			}
			if !maps.Equal(got, tc.annotations) {
				t.Errorf("pod-security annotations\n got %q\nwant %q", got, tc.annotations)
			}
		})
	}
}

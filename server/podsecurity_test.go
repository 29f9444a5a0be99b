package server_test

import (
	"encoding/json"
	"slices"
	"testing"
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

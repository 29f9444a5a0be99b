package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/filters"
	"platd/server/registry"
)

// psObj decodes a JSON object of a test.
func psObj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test object %s: %v", s, err)
	}
	return m
}

// Each check refuses what upstream's refuses, worded as upstream words it.
func TestPodSecurityChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		check  func(meta, spec map[string]any) psResult
		meta   string
		spec   string
		reason string
		detail string
	}{
		{"privileged allowed", psPrivilegedCheck, `{}`, `{"containers":[{"name":"a","securityContext":{"privileged":false}}]}`, "", ""},
		{"privileged", psPrivilegedCheck, `{}`, `{"initContainers":[{"name":"i","securityContext":{"privileged":true}}],"containers":[{"name":"a","securityContext":{"privileged":true}}]}`,
			"privileged", `containers "i", "a" must not set securityContext.privileged=true`},
		{"hostPath allowed", psHostPathVolumes, `{}`, `{"volumes":[{"name":"e","emptyDir":{}}]}`, "", ""},
		{"hostPath", psHostPathVolumes, `{}`, `{"volumes":[{"name":"h","hostPath":{"path":"/"}},{"name":"e","emptyDir":{}}]}`,
			"hostPath volumes", `volume "h"`},
		{"host namespaces", psHostNamespaces, `{}`, `{"hostPID":true,"hostNetwork":true}`, "host namespaces", "hostNetwork=true, hostPID=true"},
		{"host ports", psHostPorts, `{}`, `{"containers":[{"name":"a","ports":[{"containerPort":80,"hostPort":8080},{"containerPort":90,"hostPort":9090}]},{"name":"b","ports":[{"containerPort":80}]}]}`,
			"hostPort", `container "a" uses hostPorts 8080, 9090`},
		// Each port once, sorted as text, counted once for the plural.
		{"host ports repeated", psHostPorts, `{}`, `{"containers":[{"name":"a","ports":[{"containerPort":1,"hostPort":9000},{"containerPort":2,"hostPort":80}]},{"name":"b","ports":[{"containerPort":3,"hostPort":80}]}]}`,
			"hostPort", `containers "a", "b" use hostPorts 80, 9000`},
		{"baseline capabilities", psCapabilitiesBaseline, `{}`, `{"containers":[{"name":"a","securityContext":{"capabilities":{"add":["NET_RAW","CHOWN","SYS_ADMIN"]}}}]}`,
			"non-default capabilities", `container "a" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add`},
		{"sysctls", psSysctlsCheck, `{}`, `{"securityContext":{"sysctls":[{"name":"kernel.msgmax","value":"1"},{"name":"net.ipv4.tcp_syncookies","value":"1"}]},"containers":[{"name":"a"}]}`,
			"forbidden sysctls", "kernel.msgmax"},
		{"seccomp baseline", psSeccompBaseline, `{}`, `{"securityContext":{"seccompProfile":{"type":"Unconfined"}},"containers":[{"name":"a"}]}`,
			"seccompProfile", `pod must not set securityContext.seccompProfile.type to "Unconfined"`},
		{"restricted volumes", psRestrictedVolumes, `{}`, `{"volumes":[{"name":"h","hostPath":{"path":"/"}},{"name":"n","nfs":{"server":"s","path":"/"}},{"name":"s","secret":{"secretName":"x"}}]}`,
			"restricted volume types", `volumes "h", "n" use restricted volume types "hostPath", "nfs"`},
		{"runAsNonRoot explicit", psRunAsNonRoot, `{}`, `{"securityContext":{"runAsNonRoot":false},"containers":[{"name":"a","securityContext":{"runAsNonRoot":false}}]}`,
			"runAsNonRoot != true", `pod and container "a" must not set securityContext.runAsNonRoot=false`},
		{"runAsNonRoot pod level", psRunAsNonRoot, `{}`, `{"securityContext":{"runAsNonRoot":true},"containers":[{"name":"a"}]}`, "", ""},
		{"runAsUser", psRunAsUser, `{}`, `{"containers":[{"name":"a","securityContext":{"runAsUser":0}}]}`, "runAsUser=0", `container "a" must not set runAsUser=0`},
		{"restricted capabilities", psCapabilitiesRestricted, `{}`, `{"containers":[{"name":"a","securityContext":{"capabilities":{"drop":["ALL"],"add":["NET_BIND_SERVICE","CHOWN"]}}},{"name":"b"}]}`,
			"unrestricted capabilities", `container "b" must set securityContext.capabilities.drop=["ALL"]; container "a" must not include "CHOWN" in securityContext.capabilities.add`},
		{"restricted windows", psAllowPrivilegeEscalation, `{}`, `{"os":{"name":"windows"},"containers":[{"name":"a"}]}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.check(psObj(t, tc.meta), psObj(t, tc.spec))
			if r.reason != tc.reason || r.detail != tc.detail {
				t.Errorf("got %q (%q), want %q (%q)", r.reason, r.detail, tc.reason, tc.detail)
			}
		})
	}
}

// A plain pod breaks four restricted checks, in upstream's order, and no
// baseline one.
func TestPodSecurityEvaluate(t *testing.T) {
	plain := psObj(t, `{"containers":[{"name":"c","image":"busybox"}]}`)
	if rs := psEvaluate(psLevelVersion{psBaseline, -1}, nil, plain); len(rs) != 0 {
		t.Errorf("baseline refused a plain pod: %v", rs)
	}
	want := `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if got := psDetail(psEvaluate(psLevelVersion{psRestricted, -1}, nil, plain)); got != want {
		t.Errorf("restricted:\n got %s\nwant %s", got, want)
	}
	// v1.21 predates the restricted capabilities check.
	if got := psReason(psEvaluate(psLevelVersion{psRestricted, 21}, nil, plain)); got != "allowPrivilegeEscalation != false, runAsNonRoot != true, seccompProfile" {
		t.Errorf("restricted:v1.21 %s", got)
	}
	// Checks run in the order of their IDs; the baseline hostPath check
	// gives way to restricted's volume types.
	host := psObj(t, `{"volumes":[{"name":"h","hostPath":{"path":"/"}}],"containers":[{"name":"c","securityContext":{"privileged":true}}]}`)
	if got := psReason(psEvaluate(psLevelVersion{psBaseline, -1}, nil, host)); got != "hostPath volumes, privileged" {
		t.Errorf("baseline %s", got)
	}
	if got := psReason(psEvaluate(psLevelVersion{psRestricted, -1}, nil, host)); got != "privileged, allowPrivilegeEscalation != false, unrestricted capabilities, restricted volume types, runAsNonRoot != true, seccompProfile" {
		t.Errorf("restricted %s", got)
	}
}

func TestPodSecurityAdmission(t *testing.T) {
	ds := coreV1(brand)
	ps := newPodSecurity(brand, kindOf(ds, "Namespace"), kindOf(ds, "Pod"), config.PodSecurityConfiguration{})
	ns := func(name string, labels map[string]string) registry.Object {
		l := map[string]any{}
		for k, v := range labels {
			l[ps.label(k)] = v
		}
		return registry.Object{"metadata": map[string]any{"name": name, "labels": l}}
	}
	pod := func(ns, name, spec string) registry.Object {
		return registry.Object{"metadata": map[string]any{"namespace": ns, "name": name}, "spec": psObj(t, spec)}
	}
	plain := `{"containers":[{"name":"c","image":"busybox"}]}`
	privileged := `{"containers":[{"name":"c","image":"busybox","securityContext":{"privileged":true}}]}`
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{
		ps.namespaces: {
			ns("open", nil),
			ns("enforced", map[string]string{"enforce": "restricted"}),
			ns("warned", map[string]string{"enforce": "baseline", "warn": "restricted", "warn-version": "v1.30"}),
			ns("broken", map[string]string{"enforce": "strict"}),
		},
	}}
	for _, tc := range []struct {
		name, ns, spec string
		denial         string
		warnings       []string
	}{
		{"no labels", "open", privileged, "", nil},
		{"enforced", "enforced", plain, `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
			`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
			`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`, nil},
		{"warned", "warned", plain, "", []string{`would violate PodSecurity "restricted:v1.30": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
			`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
			`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`}},
		{"baseline enforced, no warning once refused", "warned", privileged, `violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`, nil},
		{"bad enforce level is restricted", "broken", plain, `violates PodSecurity "restricted:latest": allowPrivilegeEscalation`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			ctx := security.WithWarnings(context.Background(), func(m string) { warnings = append(warnings, m) })
			err := ps.validatePod(ctx, l, pod(tc.ns, "p", tc.spec), nil)
			var d *registry.Denial
			switch {
			case tc.denial == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.denial != "" && (!errors.As(err, &d) || !strings.HasPrefix(d.Reason, tc.denial)):
				t.Fatalf("got %v, want %s", err, tc.denial)
			}
			if !slices.Equal(warnings, tc.warnings) {
				t.Errorf("warnings %q, want %q", warnings, tc.warnings)
			}
		})
	}

	// An update that changes no container nor image is not checked.
	old := pod("enforced", "p", plain)
	upd := pod("enforced", "p", plain)
	upd["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
	if err := ps.validatePod(context.Background(), l, upd, old); err != nil {
		t.Errorf("metadata update refused: %v", err)
	}
	upd = pod("enforced", "p", `{"containers":[{"name":"c","image":"busybox:2"}]}`)
	if err := ps.validatePod(context.Background(), l, upd, old); err == nil {
		t.Errorf("image update allowed")
	}
}

func TestPodSecurityNamespaceLabels(t *testing.T) {
	ds := coreV1(brand)
	ps := newPodSecurity(brand, kindOf(ds, "Namespace"), kindOf(ds, "Pod"), config.PodSecurityConfiguration{})
	ns := func(labels ...string) registry.Object {
		l := map[string]any{}
		for i := 0; i < len(labels); i += 2 {
			l[ps.label(labels[i])] = labels[i+1]
		}
		return registry.Object{"metadata": map[string]any{"name": "x", "labels": l}}
	}
	err := ps.validateNamespace(context.Background(), fakeLookup{}, ns("enforce", "strict", "warn-version", "1.30"), nil)
	want := `Namespace "x" is invalid: [metadata.labels[` + ps.label("enforce") + `]: Invalid value: "strict": must be one of privileged, baseline, restricted, ` +
		`metadata.labels[` + ps.label("warn-version") + `]: Invalid value: "1.30": must be "latest" or "v1.x"]`
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status.Code != 422 || e.Status.Message != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	// An update keeping the same bad labels is let through.
	if err := ps.validateNamespace(context.Background(), fakeLookup{}, ns("enforce", "strict", "warn-version", "1.30"), ns("enforce", "strict", "warn-version", "1.30")); err != nil {
		t.Errorf("unchanged bad labels refused: %v", err)
	}

	// Raising the enforce level warns of the pods that break it.
	pod := func(name, spec string) registry.Object {
		return registry.Object{"metadata": map[string]any{"namespace": "x", "name": name}, "spec": psObj(t, spec)}
	}
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{ps.pods: {
		pod("b", `{"containers":[{"name":"c","securityContext":{"privileged":true}}]}`),
		pod("a", `{"containers":[{"name":"c","securityContext":{"privileged":true}}]}`),
		pod("h", `{"hostNetwork":true,"containers":[{"name":"c"}]}`),
		pod("ok", `{"containers":[{"name":"c"}]}`),
	}}}
	var warnings []string
	ctx := security.WithWarnings(context.Background(), func(m string) { warnings = append(warnings, m) })
	if err := ps.validateNamespace(ctx, l, ns("enforce", "baseline"), ns()); err != nil {
		t.Fatal(err)
	}
	wantWarnings := []string{
		`existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:latest"`,
		`a (and 1 other pod): privileged`,
		`h: host namespaces`,
	}
	if !slices.Equal(warnings, wantWarnings) {
		t.Errorf("warnings %q\nwant %q", warnings, wantWarnings)
	}
	// Relaxing it does not.
	warnings = nil
	if err := ps.validateNamespace(ctx, l, ns("enforce", "baseline"), ns("enforce", "restricted")); err != nil || warnings != nil {
		t.Errorf("relaxed: %v %q", err, warnings)
	}
}

// The configured defaults are the policy of modes a namespace sets no
// label of; exempt users, namespaces and runtime classes are admitted
// without evaluation, as upstream.
func TestPodSecurityDefaultsAndExemptions(t *testing.T) {
	ds := coreV1(brand)
	ps := newPodSecurity(brand, kindOf(ds, "Namespace"), kindOf(ds, "Pod"), config.PodSecurityConfiguration{
		Defaults:   config.PodSecurityDefaults{Enforce: "baseline", EnforceVersion: "latest", Audit: "privileged", AuditVersion: "latest", Warn: "restricted", WarnVersion: "v1.30"},
		Exemptions: config.PodSecurityExemptions{Usernames: []string{"ci"}, Namespaces: []string{"tools"}, RuntimeClasses: []string{"kata"}},
	})
	ns := func(name string, labels ...string) registry.Object {
		l := map[string]any{}
		for i := 0; i < len(labels); i += 2 {
			l[ps.label(labels[i])] = labels[i+1]
		}
		return registry.Object{"metadata": map[string]any{"name": name, "labels": l}}
	}
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{
		ps.namespaces: {ns("open"), ns("relaxed", "enforce", "privileged"), ns("tools"), ns("pinned", "enforce-version", "v1.0")},
	}}
	plain := `{"containers":[{"name":"c","image":"busybox"}]}`
	privileged := `{"containers":[{"name":"c","image":"busybox","securityContext":{"privileged":true}}]}`
	privilegedKata := `{"runtimeClassName":"kata","containers":[{"name":"c","image":"busybox","securityContext":{"privileged":true}}]}`
	const warning = `would violate PodSecurity "restricted:v1.30": `
	for _, tc := range []struct {
		name, user, ns, spec string
		denial               string
		warns                bool // the pod is warned of; a template is whenever it is warned of or refused
	}{
		{"default enforce", "", "open", privileged, `violates PodSecurity "baseline:latest": privileged`, false},
		{"default warn", "", "open", plain, "", true},
		{"label beats default", "", "relaxed", privileged, "", true},
		{"version label keeps default level", "", "pinned", privileged, `violates PodSecurity "baseline:v1.0": privileged`, false},
		{"exempt namespace", "", "tools", privileged, "", false},
		{"exempt user", "ci", "open", privileged, "", false},
		{"other user", "dev", "open", privileged, `violates PodSecurity "baseline:latest"`, false},
		{"exempt runtime class", "", "open", privilegedKata, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			ctx := security.WithWarnings(context.Background(), func(m string) { warnings = append(warnings, m) })
			if tc.user != "" {
				ctx = filters.WithUser(ctx, &security.User{Name: tc.user})
			}
			checkWarned := func(what string, want bool) {
				t.Helper()
				if want != (len(warnings) == 1 && strings.HasPrefix(warnings[0], warning)) || !want && len(warnings) > 0 {
					t.Errorf("%s warnings %q, want one: %v", what, warnings, want)
				}
			}
			pod := registry.Object{"metadata": map[string]any{"namespace": tc.ns, "name": "p"}, "spec": psObj(t, tc.spec)}
			err := ps.validatePod(ctx, l, pod, nil)
			var d *registry.Denial
			switch {
			case tc.denial == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.denial != "" && (!errors.As(err, &d) || !strings.HasPrefix(d.Reason, tc.denial)):
				t.Fatalf("got %v, want %s", err, tc.denial)
			}
			checkWarned("pod", tc.warns)
			// A workload's template is never refused, only warned of.
			warnings = nil
			deploy := registry.Object{"metadata": map[string]any{"namespace": tc.ns, "name": "d"}, "spec": map[string]any{"template": map[string]any{"spec": psObj(t, tc.spec)}}}
			if err := ps.validateTemplate("spec", "template")(ctx, l, deploy, nil); err != nil {
				t.Fatal(err)
			}
			checkWarned("template", tc.warns || tc.denial != "")
		})
	}

	// An exempt namespace is told that the policy its labels set is
	// ignored, unless it is privileged or the defaults'.
	for _, tc := range []struct {
		name   string
		labels []string
		want   []string
	}{
		{"stricter", []string{"enforce", "restricted", "warn", "baseline"}, []string{`namespace "tools" is exempt from Pod Security, and the policy (enforce=restricted:latest, warn=baseline:v1.30) will be ignored`}},
		{"defaults", []string{"enforce", "baseline", "warn-version", "v1.30"}, nil},
		{"privileged", []string{"enforce", "privileged", "warn", "privileged"}, nil},
	} {
		var warnings []string
		ctx := security.WithWarnings(context.Background(), func(m string) { warnings = append(warnings, m) })
		if err := ps.validateNamespace(ctx, l, ns("tools", tc.labels...), nil); err != nil || !slices.Equal(warnings, tc.want) {
			t.Errorf("%s: %v %q, want %q", tc.name, err, warnings, tc.want)
		}
	}

	// Raising the enforce level checks existing pods but those of exempt
	// runtime classes.
	pods := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{ps.pods: {
		{"metadata": map[string]any{"namespace": "x", "name": "k"}, "spec": psObj(t, privilegedKata)},
		{"metadata": map[string]any{"namespace": "x", "name": "p"}, "spec": psObj(t, privileged)},
	}}}
	got := ps.checkPods(context.Background(), pods, "x", psLevelVersion{psRestricted, -1})
	if len(got) != 2 || got[0] != `existing pods in namespace "x" violate the new PodSecurity enforce level "restricted:latest"` || !strings.HasPrefix(got[1], "p: privileged") {
		t.Errorf("checked pods: %q", got)
	}
}

// psAuditSink keeps the lines of an audit record.
type psAuditSink struct{ lines [][]byte }

func (s *psAuditSink) Write(line []byte) { s.lines = append(s.lines, slices.Clone(line)) }

// psAudited returns ctx carrying an audit record at Metadata, and a
// function that completes the record and returns its annotations.
func psAudited(t *testing.T, ctx context.Context) (context.Context, func() map[string]string) {
	t.Helper()
	sink := &psAuditSink{}
	r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/x/pods", nil)
	c := audit.NewContext(r, audit.Params{Config: audit.RequestConfig{Level: audit.LevelMetadata}, Sink: sink, Brand: brand,
		Attributes: &security.Attributes{User: &security.User{Name: "u"}, Verb: "create"}})
	return audit.WithContext(ctx, c), func() map[string]string {
		c.Complete()
		var ev struct {
			Annotations map[string]string `json:"annotations"`
		}
		if len(sink.lines) == 0 {
			t.Fatal("no audit event")
		}
		if err := json.Unmarshal(sink.lines[len(sink.lines)-1], &ev); err != nil {
			t.Fatal(err)
		}
		return ev.Annotations
	}
}

// The audit event of a pod or workload write carries upstream's
// pod-security annotations.
func TestPodSecurityAuditAnnotations(t *testing.T) {
	ds := coreV1(brand)
	ps := newPodSecurity(brand, kindOf(ds, "Namespace"), kindOf(ds, "Pod"), config.PodSecurityConfiguration{
		Exemptions: config.PodSecurityExemptions{Usernames: []string{"ci"}, Namespaces: []string{"tools"}, RuntimeClasses: []string{"kata"}},
	})
	ns := func(name string, labels ...string) registry.Object {
		l := map[string]any{}
		for i := 0; i < len(labels); i += 2 {
			l[ps.label(labels[i])] = labels[i+1]
		}
		return registry.Object{"metadata": map[string]any{"name": name, "labels": l}}
	}
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{ps.namespaces: {
		ns("open"),
		ns("audited", "enforce", "baseline", "audit", "restricted", "audit-version", "v1.31"),
		ns("broken", "enforce", "strict"),
		ns("tools", "enforce", "restricted"),
	}}}
	plain := `{"containers":[{"name":"c","image":"busybox"}]}`
	privileged := `{"containers":[{"name":"c","image":"busybox","securityContext":{"privileged":true}}]}`
	restrictedPlain := `would violate PodSecurity "restricted:v1.31": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	key := func(k string) string { return ps.label(k) }
	for _, tc := range []struct {
		name, user, ns, spec string
		template             bool
		want                 map[string]string
	}{
		{"privileged namespace", "", "open", plain, false, map[string]string{key("enforce-policy"): "privileged:latest"}},
		{"privileged namespace template", "", "open", plain, true, nil},
		{"audit violations", "", "audited", plain, false, map[string]string{key("enforce-policy"): "baseline:latest", key("audit-violations"): restrictedPlain}},
		{"audit violations of a refused pod", "", "audited", privileged, false, map[string]string{key("enforce-policy"): "baseline:latest",
			key("audit-violations"): `would violate PodSecurity "restricted:v1.31": privileged (container "c" must not set securityContext.privileged=true), ` + strings.TrimPrefix(restrictedPlain, `would violate PodSecurity "restricted:v1.31": `)}},
		{"audit violations of a template", "", "audited", plain, true, map[string]string{key("audit-violations"): restrictedPlain}},
		{"bad labels", "", "broken", plain, false, map[string]string{key("enforce-policy"): "restricted:latest",
			key("error"): `Failed to parse policy: metadata.labels[` + key("enforce") + `]: Invalid value: "strict": must be one of privileged, baseline, restricted`}},
		{"missing namespace template", "", "gone", plain, true, map[string]string{key("error"): `failed to lookup namespace "gone": ` + fakeLookupNotFound(l, ps.namespaces, "gone")}},
		{"exempt namespace", "ci", "tools", privileged, false, map[string]string{key("exempt"): "namespace"}},
		{"exempt user", "ci", "audited", privileged, true, map[string]string{key("exempt"): "user"}},
		{"exempt runtime class", "", "audited", `{"runtimeClassName":"kata","containers":[{"name":"c","securityContext":{"privileged":true}}]}`, false, map[string]string{key("exempt"): "runtimeClass"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.user != "" {
				ctx = filters.WithUser(ctx, &security.User{Name: tc.user})
			}
			ctx, annotations := psAudited(t, ctx)
			if tc.template {
				deploy := registry.Object{"metadata": map[string]any{"namespace": tc.ns, "name": "d"}, "spec": map[string]any{"template": map[string]any{"spec": psObj(t, tc.spec)}}}
				_ = ps.validateTemplate("spec", "template")(ctx, l, deploy, nil)
			} else {
				_ = ps.validatePod(ctx, l, registry.Object{"metadata": map[string]any{"namespace": tc.ns, "name": "p"}, "spec": psObj(t, tc.spec)}, nil)
			}
			if got := annotations(); !maps.Equal(got, tc.want) {
				t.Errorf("annotations\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// fakeLookupNotFound is the text of l's error for a missing object.
func fakeLookupNotFound(l fakeLookup, d *registry.Descriptor, name string) string {
	_, err := l.Get(d, "", name)
	return err.Error()
}

// TestPodSecurityWarnFollowsEnforce: a namespace enforcing a level
// stricter than its warn level, with no warn label, is warned at the
// enforced level and version, as upstream defaults warn to enforce.
func TestPodSecurityWarnFollowsEnforce(t *testing.T) {
	t.Parallel()
	ds := coreV1(brand)
	ps := newPodSecurity(brand, kindOf(ds, "Namespace"), kindOf(ds, "Pod"), config.PodSecurityConfiguration{})
	l := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[ps.label(kv[i])] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name   string
		labels map[string]any
		want   psLevelVersion
	}{
		{"enforce only", l("enforce", "restricted"), psLevelVersion{psRestricted, -1}},
		{"enforce with version", l("enforce", "baseline", "enforce-version", "v1.25"), psLevelVersion{psBaseline, 25}},
		{"warn version kept", l("enforce", "restricted", "enforce-version", "v1.25", "warn-version", "v1.20"), psLevelVersion{psRestricted, 20}},
		{"warn labeled", l("enforce", "restricted", "warn", "baseline"), psLevelVersion{psBaseline, -1}},
		{"warn labeled privileged", l("enforce", "restricted", "warn", "privileged"), psLevelVersion{psPrivileged, -1}},
		{"bad enforce level", l("enforce", "strict"), psLevelVersion{psPrivileged, -1}},
		{"no enforce", l("audit", "restricted"), psLevelVersion{psPrivileged, -1}},
	}
	for _, tt := range tests {
		p, _ := ps.policy(tt.labels)
		if p.warn != tt.want {
			t.Errorf("%s: warn %+v, want %+v", tt.name, p.warn, tt.want)
		}
	}
}

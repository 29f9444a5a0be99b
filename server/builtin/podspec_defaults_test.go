package builtin

import "testing"

// specDefaults are the members every defaulted PodSpec has, for building
// expected specs.
const specDefaults = `"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30`

// ctrDefaults are the members every defaulted container has besides its
// pull policy.
const ctrDefaults = `"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"`

func TestDefaultPodSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"empty", `{}`, `{` + specDefaults + `}`},
		{"set values stay",
			`{"dnsPolicy":"Default","restartPolicy":"Never","schedulerName":"s","securityContext":{"runAsUser":1},"terminationGracePeriodSeconds":0}`,
			`{"dnsPolicy":"Default","restartPolicy":"Never","schedulerName":"s","securityContext":{"runAsUser":1},"terminationGracePeriodSeconds":0}`},
		{"deprecated service account fills the name",
			`{"serviceAccount":"old"}`,
			`{` + specDefaults + `,"serviceAccount":"old","serviceAccountName":"old"}`},
		{"service account name wins",
			`{"serviceAccount":"old","serviceAccountName":"new"}`,
			`{` + specDefaults + `,"serviceAccount":"new","serviceAccountName":"new"}`},
		{"container",
			`{"containers":[{"name":"c","image":"nginx:1.27","ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}],
			"env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
			"resources":{"limits":{"cpu":"100u"},"requests":{"memory":"1e-4"}},
			"livenessProbe":{"httpGet":{"port":8080}},"readinessProbe":{"exec":{"command":["true"]},"timeoutSeconds":5},
			"lifecycle":{"preStop":{"httpGet":{"port":"http","path":"/stop"}}}}]}`,
			`{"containers":[{"name":"c","image":"nginx:1.27","imagePullPolicy":"IfNotPresent",` + ctrDefaults + `,
			"ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}],
			"env":[{"name":"N","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}}],
			"resources":{"limits":{"cpu":"1m"},"requests":{"memory":"1e-3"}},
			"livenessProbe":{"httpGet":{"path":"/","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
			"readinessProbe":{"exec":{"command":["true"]},"timeoutSeconds":5,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
			"lifecycle":{"preStop":{"httpGet":{"port":"http","path":"/stop","scheme":"HTTP"}}}}],` + specDefaults + `}`},
		{"init and ephemeral containers",
			`{"initContainers":[{"name":"i","image":"busybox"}],"ephemeralContainers":[{"name":"e","image":"busybox@sha256:` + hex64 + `"}]}`,
			`{"initContainers":[{"name":"i","image":"busybox","imagePullPolicy":"Always",` + ctrDefaults + `}],
			"ephemeralContainers":[{"name":"e","image":"busybox@sha256:` + hex64 + `","imagePullPolicy":"IfNotPresent",` + ctrDefaults + `}],` + specDefaults + `}`},
		{"templates get no pod-only defaults",
			`{"hostNetwork":true,"containers":[{"name":"c","image":"x:1","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}}}]}`,
			`{"hostNetwork":true,"containers":[{"name":"c","image":"x:1","imagePullPolicy":"IfNotPresent",` + ctrDefaults + `,
			"ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"1"}}}],` + specDefaults + `}`},
		{"volumes",
			`{"volumes":[{"name":"a"},{"name":"b","secret":{"secretName":"s"}},{"name":"c","configMap":{"name":"m","defaultMode":256}},
			{"name":"d","hostPath":{"path":"/x"}},{"name":"e","downwardAPI":{"items":[{"path":"l","fieldRef":{"fieldPath":"metadata.labels"}}]}},
			{"name":"f","projected":{"sources":[{"serviceAccountToken":{"path":"t"}},{"downwardAPI":{"items":[{"path":"n","fieldRef":{"fieldPath":"metadata.name"}}]}}]}},
			{"name":"g","ephemeral":{"volumeClaimTemplate":{"spec":{"resources":{"requests":{"storage":"1.0001Gi"}}}}}}]}`,
			`{"volumes":[{"name":"a","emptyDir":{}},{"name":"b","secret":{"secretName":"s","defaultMode":420}},{"name":"c","configMap":{"name":"m","defaultMode":256}},
			{"name":"d","hostPath":{"path":"/x","type":""}},{"name":"e","downwardAPI":{"defaultMode":420,"items":[{"path":"l","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.labels"}}]}},
			{"name":"f","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"path":"t","expirationSeconds":3600}},{"downwardAPI":{"items":[{"path":"n","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}]}}]}},
			{"name":"g","ephemeral":{"volumeClaimTemplate":{"spec":{"volumeMode":"Filesystem","resources":{"requests":{"storage":"1073849198183m"}}}}}}],` + specDefaults + `}`},
		{"overhead is rounded", `{"overhead":{"cpu":"0.0001"}}`, `{"overhead":{"cpu":"1m"},` + specDefaults + `}`},
	}
	for _, tt := range tests {
		spec := decodeJSON(t, tt.in)
		defaultPodSpec(spec)
		if got, want := canonicalJSON(t, spec), canonicalJSON(t, decodeJSON(t, tt.want)); got != want {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, got, want)
		}
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestDefaultPod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"service links and requests from limits",
			`{"spec":{"containers":[{"name":"c","image":"x:1","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}}}],
			"initContainers":[{"name":"i","image":"x:1","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}`,
			`{"spec":{"containers":[{"name":"c","image":"x:1","imagePullPolicy":"IfNotPresent",` + ctrDefaults + `,
			"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m","memory":"1Gi"}}}],
			"initContainers":[{"name":"i","image":"x:1","imagePullPolicy":"IfNotPresent",` + ctrDefaults + `,
			"resources":{"limits":{"nvidia.com/gpu":"1"},"requests":{"nvidia.com/gpu":"1"}}}],
			"enableServiceLinks":true,` + specDefaults + `}}`},
		{"explicit service links stay",
			`{"spec":{"enableServiceLinks":false}}`,
			`{"spec":{"enableServiceLinks":false,` + specDefaults + `}}`},
		{"host network ports",
			`{"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"x:1","ports":[{"containerPort":80},{"containerPort":81,"hostPort":9}]}]}}`,
			`{"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"x:1","imagePullPolicy":"IfNotPresent",` + ctrDefaults + `,
			"ports":[{"containerPort":80,"hostPort":80,"protocol":"TCP"},{"containerPort":81,"hostPort":9,"protocol":"TCP"}]}],
			"enableServiceLinks":true,` + specDefaults + `}}`},
	}
	for _, tt := range tests {
		obj := decodeJSON(t, tt.in)
		defaultPod(obj)
		if got, want := canonicalJSON(t, obj), canonicalJSON(t, decodeJSON(t, tt.want)); got != want {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, got, want)
		}
	}
}

func TestImagePullPolicyByTag(t *testing.T) {
	t.Parallel()
	tests := []struct{ image, tag, policy string }{
		{"nginx", "latest", pullAlways},
		{"nginx:latest", "latest", pullAlways},
		{"nginx:1.27", "1.27", pullIfNotPresent},
		{"registry.example.com:5000/team/app", "latest", pullAlways},
		{"registry.example.com:5000/team/app:v2", "v2", pullIfNotPresent},
		{"localhost/app:latest", "latest", pullAlways},
		{"nginx@sha256:" + hex64, "", pullIfNotPresent},
		{"nginx:latest@sha256:" + hex64, "latest", pullAlways},
		{"nginx@sha256:abc", "", pullIfNotPresent},
		{"NGINX", "", pullIfNotPresent},
		{"", "", pullIfNotPresent},
		{" nginx", "", pullIfNotPresent},
		{hex64, "", pullIfNotPresent},
		{"[::1]:5000/app", "latest", pullAlways},
		{"[::1]:5000/app:v1", "v1", pullIfNotPresent},
		{"host:5000/app:latestish", "latestish", pullIfNotPresent},
		{"host:5000/app@sha256:" + hex64, "", pullIfNotPresent},
		{"app:latest/x", "", pullIfNotPresent},
		{"registry.example.com/payments/checkout:v2.14.3", "v2.14.3", pullIfNotPresent},
	}
	for _, tt := range tests {
		if got := imageTag(tt.image); got != tt.tag {
			t.Errorf("imageTag(%q) = %q, want %q", tt.image, got, tt.tag)
		}
		if got, want := pullsLatest(tt.image), tt.tag == defaultImageTag; got != want {
			t.Errorf("pullsLatest(%q) = %v, want %v", tt.image, got, want)
		}
		c := map[string]any{"image": tt.image}
		defaultContainer(c)
		if got := c["imagePullPolicy"]; got != tt.policy {
			t.Errorf("%q: pull policy %v, want %s", tt.image, got, tt.policy)
		}
	}
}

func TestRoundUpMilli(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string
		ok   bool
	}{
		{"1", "", false}, {"100m", "", false}, {"100u", "1m", true}, {"1001u", "2m", true},
		{"-100u", "-1m", true}, {"1e-4", "1e-3", true}, {"1.0001", "1001m", true}, {"1Gi", "", false},
		{"not a quantity", "", false}, {int64(3), "", false},
	}
	for _, tt := range tests {
		got, ok := roundUpMilli(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("roundUpMilli(%v) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestSyncServiceAccount: the deprecated serviceAccount member follows
// serviceAccountName, filling it when only the old member is given; a
// pod whose members agree is left as it is, without allocating.
func TestSyncServiceAccount(t *testing.T) {
	tests := []struct{ name, spec, want string }{
		{"name only", `{"serviceAccountName":"a"}`, `{"serviceAccountName":"a","serviceAccount":"a"}`},
		{"old member only", `{"serviceAccount":"b"}`, `{"serviceAccountName":"b","serviceAccount":"b"}`},
		{"name wins", `{"serviceAccountName":"a","serviceAccount":"b"}`, `{"serviceAccountName":"a","serviceAccount":"a"}`},
		{"empty name, old member", `{"serviceAccountName":"","serviceAccount":"b"}`, `{"serviceAccountName":"b","serviceAccount":"b"}`},
		{"neither", `{"serviceAccountName":"","serviceAccount":""}`, `{}`},
		{"none", `{}`, `{}`},
	}
	for _, tt := range tests {
		spec := decodeJSON(t, tt.spec)
		syncServiceAccount(spec)
		if got, want := canonicalJSON(t, spec), canonicalJSON(t, decodeJSON(t, tt.want)); got != want {
			t.Errorf("%s: %s, want %s", tt.name, got, want)
		}
	}
	spec := decodeJSON(t, `{"serviceAccountName":"a","serviceAccount":"a"}`)
	if n := testing.AllocsPerRun(100, func() { syncServiceAccount(spec) }); n != 0 {
		t.Errorf("syncing a pod whose members agree: %v allocations", n)
	}
}

// TestDefaultTolerations: a pod tolerates the not-ready and unreachable
// taints for five minutes unless it tolerates them already, and each pod
// gets tolerations of its own.
func TestDefaultTolerations(t *testing.T) {
	t.Parallel()
	r := newPodRules(brand)
	tol := func(key string) string {
		return `{"key":"` + key + `","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}`
	}
	tests := []struct{ name, spec, want string }{
		{"none", `{}`, `{"tolerations":[` + tol(r.notReadyTaint) + `,` + tol(r.unreachableTaint) + `]}`},
		{"one of its own", `{"tolerations":[{"key":"k","operator":"Exists"}]}`,
			`{"tolerations":[{"key":"k","operator":"Exists"},` + tol(r.notReadyTaint) + `,` + tol(r.unreachableTaint) + `]}`},
		{"not ready tolerated", `{"tolerations":[{"key":"` + r.notReadyTaint + `","operator":"Exists","effect":"NoExecute"}]}`,
			`{"tolerations":[{"key":"` + r.notReadyTaint + `","operator":"Exists","effect":"NoExecute"},` + tol(r.unreachableTaint) + `]}`},
		{"everything tolerated", `{"tolerations":[{"operator":"Exists"}]}`, `{"tolerations":[{"operator":"Exists"}]}`},
	}
	for _, tt := range tests {
		spec := decodeJSON(t, tt.spec)
		r.addDefaultTolerations(spec)
		if got, want := canonicalJSON(t, spec), canonicalJSON(t, decodeJSON(t, tt.want)); got != want {
			t.Errorf("%s: %s, want %s", tt.name, got, want)
		}
	}
	first, second := map[string]any{}, map[string]any{}
	r.addDefaultTolerations(first)
	for _, m := range mapsOf(first["tolerations"]) {
		m["tolerationSeconds"], m["key"] = int64(1), "changed"
	}
	r.addDefaultTolerations(second)
	if got, want := canonicalJSON(t, second), canonicalJSON(t, decodeJSON(t, tests[0].want)); got != want {
		t.Errorf("a pod's tolerations changed with another's: %s, want %s", got, want)
	}
}

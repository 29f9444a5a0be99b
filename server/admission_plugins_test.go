package server_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"platd/config"
)

// TestAdmissionPluginsDisabled: --disable-admission-plugins turns off a
// plugin's step and nothing else: without ServiceAccount a pod is stored
// as written, naming an account that does not exist and without the
// token volume; without LimitRanger the namespace's defaults are not
// applied; by default both run, as upstream.
func TestAdmissionPluginsDisabled(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		disable []string
		// admitted: what the pod naming a missing account gets.
		missingAccount int
		wantAccount    string
		wantVolumes    bool
		wantResources  string
	}{
		{name: "default", missingAccount: 403, wantAccount: "default", wantVolumes: true,
			wantResources: `{"limits":{"cpu":"500m"},"requests":{"cpu":"250m"}}`},
		{name: "ServiceAccount off", disable: []string{config.PluginServiceAccount}, missingAccount: 201,
			wantResources: `{"limits":{"cpu":"500m"},"requests":{"cpu":"250m"}}`},
		{name: "LimitRanger off", disable: []string{config.PluginLimitRanger}, missingAccount: 403, wantAccount: "default", wantVolumes: true,
			wantResources: `{}`},
		{name: "both off", disable: []string{"ServiceAccount,LimitRanger"}, missingAccount: 201, wantResources: `{}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, withControllers("*", "-"+config.ControllerRootCA), func(o *config.Options) { o.DisableAdmissionPlugins = c.disable })
			e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"ns"}}`).mustCode(t, 201)
			e.do("POST", "/api/v1/namespaces/ns/limitranges",
				`{"metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","default":{"cpu":"500m"},"defaultRequest":{"cpu":"250m"}}]}}`).mustCode(t, 201)

			r := e.do("POST", "/api/v1/namespaces/ns/pods",
				`{"metadata":{"name":"lost"},"spec":{"serviceAccountName":"nope","containers":[{"name":"c","image":"x"}]}}`).mustCode(t, c.missingAccount)
			if c.missingAccount == 201 {
				stored := e.do("GET", "/api/v1/namespaces/ns/pods/lost", nil).mustCode(t, 200).obj(t)
				if got := path(stored, "spec.serviceAccountName"); got != "nope" {
					t.Errorf("stored serviceAccountName %v, want nope", got)
				}
				if v := path(stored, "spec.volumes"); v != nil {
					t.Errorf("stored volumes %v, want none", v)
				}
			} else {
				r.mustMessage(t, `pods "lost" is forbidden: error looking up service account ns/nope: serviceaccount "nope" not found`)
			}

			e.do("POST", "/api/v1/namespaces/ns/pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}}`).mustCode(t, 201)
			p := e.do("GET", "/api/v1/namespaces/ns/pods/p", nil).mustCode(t, 200).obj(t)
			if got, _ := path(p, "spec.serviceAccountName").(string); got != c.wantAccount {
				t.Errorf("serviceAccountName %q, want %q", got, c.wantAccount)
			}
			vols, _ := path(p, "spec.volumes").([]any)
			mounts := path(p, "spec.containers").([]any)[0].(map[string]any)["volumeMounts"]
			if (len(vols) == 1 && mounts != nil) != c.wantVolumes || (!c.wantVolumes && (vols != nil || mounts != nil)) {
				t.Errorf("volumes %v, mounts %v; want the token volume: %v", vols, mounts, c.wantVolumes)
			}
			if got := mustJSON(t, path(p, "spec.containers").([]any)[0].(map[string]any)["resources"]); got != c.wantResources {
				t.Errorf("resources %s, want %s", got, c.wantResources)
			}
			// The default tolerations are another plugin's: still there.
			if tol, _ := path(p, "spec.tolerations").([]any); len(tol) != 2 {
				t.Errorf("tolerations %v, want the two defaults", tol)
			}
		})
	}
}

// TestAdmissionPluginsOtherSteps: the steps of other plugins platd runs
// go with their plugin too, what they would have written is not stored.
func TestAdmissionPluginsOtherSteps(t *testing.T) {
	t.Parallel()
	// The claim protection controller would add the finalizer the
	// admission leaves out, as upstream's does.
	e := start(t, withControllers("*", "-"+config.ControllerRootCA, "-"+config.ControllerClaimProtection), func(o *config.Options) {
		o.DisableAdmissionPlugins = []string{"NamespaceLifecycle,ResourceQuota,DefaultTolerationSeconds", config.PluginStorageObjectInUseProtection}
	})
	// NamespaceLifecycle: content in a namespace that does not exist.
	e.do("POST", "/api/v1/namespaces/ghost/configmaps", `{"metadata":{"name":"c"},"data":{"k":"v"}}`).mustCode(t, 201)
	if got := path(e.do("GET", "/api/v1/namespaces/ghost/configmaps/c", nil).mustCode(t, 200).obj(t), "data.k"); got != "v" {
		t.Errorf("stored configmap data.k %v", got)
	}
	// ResourceQuota: a quota of no pods refuses none.
	e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"ns"}}`).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/ns/resourcequotas", `{"metadata":{"name":"q"},"spec":{"hard":{"pods":"0"}}}`).mustCode(t, 201)
	p := e.do("POST", "/api/v1/namespaces/ns/pods",
		`{"metadata":{"name":"p"},"spec":{"automountServiceAccountToken":false,"containers":[{"name":"c","image":"x"}]}}`).mustCode(t, 201).obj(t)
	// DefaultTolerationSeconds: no tolerations added.
	if tol := path(p, "spec.tolerations"); tol != nil {
		t.Errorf("tolerations %v, want none", tol)
	}
	// StorageObjectInUseProtection: no protection finalizer.
	claim := e.do("POST", "/api/v1/namespaces/ns/persistentvolumeclaims",
		`{"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`).mustCode(t, 201).obj(t)
	if f := path(claim, "metadata.finalizers"); f != nil {
		t.Errorf("claim finalizers %v, want none", f)
	}
	stored := e.do("GET", "/api/v1/namespaces/ns/persistentvolumeclaims/c", nil).mustCode(t, 200).obj(t)
	if f := path(stored, "metadata.finalizers"); f != nil {
		t.Errorf("stored claim finalizers %v, want none", f)
	}
}

// TestAlwaysDenyAndNamespaceExists: AlwaysDeny refuses every client
// write with upstream's message while reads and the server's own writes
// (its default objects) go on; NamespaceExists answers a write into a
// missing namespace 404 for the namespace even with NamespaceLifecycle
// off, which alone would store it.
func TestAlwaysDenyAndNamespaceExists(t *testing.T) {
	t.Parallel()
	t.Run("AlwaysDeny", func(t *testing.T) {
		t.Parallel()
		e := start(t, func(o *config.Options) { o.EnableAdmissionPlugins = []string{config.PluginAlwaysDeny} })
		e.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"}}`).mustCode(t, 403).
			mustMessage(t, `configmaps "c" is forbidden: admission control is denying all modifications`)
		eventually(t, "the default service account", func() bool {
			return e.do("GET", "/api/v1/namespaces/default/serviceaccounts/default", nil).code == 200
		})
		e.do("DELETE", "/api/v1/namespaces/default/serviceaccounts/default", nil).mustCode(t, 403).
			mustMessage(t, `serviceaccounts "default" is forbidden: admission control is denying all modifications`)
		e.do("GET", "/api/v1/namespaces/default/configmaps/c", nil).mustCode(t, 404)
		// The server's own objects were written.
		e.do("GET", "/api/v1/namespaces/default/services/"+e.opts.Brand.APIServiceName, nil).mustCode(t, 200)
	})
	for _, c := range []struct {
		name   string
		enable []string
		code   int
	}{
		{name: "NamespaceExists", enable: []string{config.PluginNamespaceExists}, code: 404},
		{name: "neither", code: 201},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, func(o *config.Options) {
				o.EnableAdmissionPlugins = c.enable
				o.DisableAdmissionPlugins = []string{config.PluginNamespaceLifecycle}
			})
			r := e.do("POST", "/api/v1/namespaces/nope/configmaps", `{"metadata":{"name":"c"}}`).mustCode(t, c.code)
			if c.code == 404 {
				r.mustMessage(t, `namespaces "nope" not found`)
				e.do("GET", "/api/v1/namespaces/nope/configmaps/c", nil).mustCode(t, 404)
			}
			e.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"}}`).mustCode(t, 201)
		})
	}
}

// TestNamespaceAutoProvision: a create into a namespace that does not
// exist makes the namespace first, as the server's own write; a dry run
// does not, and is refused by NamespaceLifecycle as upstream refuses it.
func TestNamespaceAutoProvision(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.EnableAdmissionPlugins = []string{config.PluginNamespaceAutoProvision} })
	e.do("POST", "/api/v1/namespaces/dry/configmaps?dryRun=All", `{"metadata":{"name":"c"}}`).mustCode(t, 404).
		mustMessage(t, `namespaces "dry" not found`)
	e.do("GET", "/api/v1/namespaces/dry", nil).mustCode(t, 404)
	e.do("POST", "/api/v1/namespaces/fresh/configmaps", `{"metadata":{"name":"c"},"data":{"k":"v"}}`).mustCode(t, 201)
	ns := e.do("GET", "/api/v1/namespaces/fresh", nil).mustCode(t, 200).obj(t)
	if got := path(ns, "status.phase"); got != "Active" {
		t.Errorf("provisioned namespace phase %v, want Active", got)
	}
	if mf, _ := path(ns, "metadata.managedFields").([]any); len(mf) != 1 || path(mf[0].(map[string]any), "manager") != e.opts.Brand.FieldManager {
		t.Errorf("provisioned namespace managed by %v, want the server's own manager", path(ns, "metadata.managedFields"))
	}
	if got := path(e.do("GET", "/api/v1/namespaces/fresh/configmaps/c", nil).mustCode(t, 200).obj(t), "data.k"); got != "v" {
		t.Errorf("stored config map data %v", got)
	}
	// An existing namespace is used as it is.
	e.do("POST", "/api/v1/namespaces/fresh/configmaps", `{"metadata":{"name":"d"}}`).mustCode(t, 201)
}

// TestOwnerReferencesPermissionEnforcement: with the plugin on, a user
// RBAC lets create and update config maps (not delete them) may create
// one owned by another, may not add an owner to an existing one, and may
// block its owner's deletion only once allowed to update the owner's
// finalizers; what was refused is not stored.
func TestOwnerReferencesPermissionEnforcement(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeRBAC}
		o.EnableAdmissionPlugins = []string{config.PluginOwnerReferencesPermissionEnforcement}
	})
	rbac := "/apis/" + e.opts.Brand.Group("rbac.authorization") + "/v1/namespaces/default/"
	e.do("POST", rbac+"roles", `{"metadata":{"name":"writer"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","create","update","patch"]}]}`).mustCode(t, 201)
	e.do("POST", rbac+"rolebindings", `{"metadata":{"name":"alice-writer"},"roleRef":{"apiGroup":"`+e.opts.Brand.Group("rbac.authorization")+`","kind":"Role","name":"writer"},`+
		`"subjects":[{"kind":"User","name":"alice"}]}`).mustCode(t, 201)
	owner := e.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"owner"}}`).mustCode(t, 201).obj(t)
	uid := path(owner, "metadata.uid").(string)
	ref := func(block bool) string {
		return `[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"` + uid + `","blockOwnerDeletion":` + strconv.FormatBool(block) + `}]`
	}
	alice := func(method, p, body string) *resp {
		h := map[string]string{}
		if method == "PATCH" {
			h["Content-Type"] = "application/merge-patch+json"
		}
		return e.send(req{method: method, path: "/api/v1/namespaces/default/configmaps" + p, body: body, token: aliceToken, header: h})
	}
	eventually(t, "alice's role to apply", func() bool {
		return alice("GET", "/owner", "").code == 200
	})
	alice("POST", "", `{"metadata":{"name":"owned","ownerReferences":`+ref(false)+`}}`).mustCode(t, 201)
	alice("POST", "", `{"metadata":{"name":"plain"}}`).mustCode(t, 201)
	r := alice("PATCH", "/plain", `{"metadata":{"ownerReferences":`+ref(false)+`}}`).mustCode(t, 403)
	if msg := r.obj(t)["message"].(string); !strings.HasPrefix(msg, `configmaps "plain" is forbidden: cannot set an ownerRef on a resource you can't delete: `) {
		t.Errorf("refusal %q", msg)
	}
	if got := path(e.do("GET", "/api/v1/namespaces/default/configmaps/plain", nil).mustCode(t, 200).obj(t), "metadata.ownerReferences"); got != nil {
		t.Errorf("a refused owner was stored: %v", got)
	}
	r = alice("POST", "", `{"metadata":{"name":"blocking","ownerReferences":`+ref(true)+`}}`).mustCode(t, 403)
	if msg := r.obj(t)["message"].(string); !strings.HasPrefix(msg, `configmaps "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: `) {
		t.Errorf("refusal %q", msg)
	}
	e.do("POST", rbac+"roles", `{"metadata":{"name":"finalizers"},"rules":[{"apiGroups":[""],"resources":["configmaps/finalizers"],"verbs":["update"],"resourceNames":["owner"]}]}`).mustCode(t, 201)
	e.do("POST", rbac+"rolebindings", `{"metadata":{"name":"alice-finalizers"},"roleRef":{"apiGroup":"`+e.opts.Brand.Group("rbac.authorization")+`","kind":"Role","name":"finalizers"},`+
		`"subjects":[{"kind":"User","name":"alice"}]}`).mustCode(t, 201)
	eventually(t, "alice to block the owner's deletion", func() bool {
		return alice("POST", "", `{"metadata":{"name":"blocking","ownerReferences":`+ref(true)+`}}`).code == 201
	})
	// The admin is not restricted.
	e.do("PATCH", "/api/v1/namespaces/default/configmaps/plain", `{"metadata":{"ownerReferences":`+ref(true)+`}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
}

// TestEventRateLimit: with EventRateLimit enabled, creates and updates of
// the core group's events past a limit's burst are refused with 429 and
// upstream's message, and not stored; other kinds, the events group's
// kind and dry runs are not counted; a User limit gives each user a
// bucket. The limits refill at 1 qps, far slower than the requests come.
func TestEventRateLimit(t *testing.T) {
	t.Parallel()
	startLimited := func(t *testing.T, limits string) *env {
		file := filepath.Join(t.TempDir(), "admission.yaml")
		body := "apiVersion: " + config.AdmissionConfigAPIVersions(platBrand)[0] + "\nkind: AdmissionConfiguration\nplugins:\n" +
			"- name: EventRateLimit\n  configuration:\n    apiVersion: " + config.EventRateLimitConfigAPIVersions(platBrand)[0] +
			"\n    kind: Configuration\n    limits: " + limits + "\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return start(t, func(o *config.Options) {
			o.EnableAdmissionPlugins = []string{config.PluginEventRateLimit}
			o.AdmissionControlConfigFile = file
		})
	}
	event := func(name string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name},
			"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "R", "message": "m", "type": "Normal"}
	}
	events := "/api/v1/namespaces/default/events"
	refused := func(t *testing.T, r *resp, key string) {
		t.Helper()
		r.mustCode(t, 429).mustMessage(t, "Too many requests: limit reached on type "+key)
		st := r.obj(t)
		if st["kind"] != "Status" || st["status"] != "Failure" || st["reason"] != "TooManyRequests" || st["code"] != float64(429) || st["details"] != nil {
			t.Errorf("refusal %s, want upstream's TooManyRequests Status", r.body)
		}
	}

	t.Run("Server", func(t *testing.T) {
		t.Parallel()
		e := startLimited(t, "[{type: Server, qps: 1, burst: 2}]")
		e.do("POST", events, event("e1")).mustCode(t, 201)
		e.do("POST", events, event("e2")).mustCode(t, 201)
		refused(t, e.do("POST", events, event("e3")), "Server for key ")
		e.do("GET", events+"/e3", nil).mustCode(t, 404)
		// An update is counted as a create is.
		e1 := e.do("GET", events+"/e1", nil).mustCode(t, 200).obj(t)
		e1["message"] = "changed"
		refused(t, e.do("PUT", events+"/e1", e1), "Server for key ")
		if got := path(e.do("GET", events+"/e1", nil).mustCode(t, 200).obj(t), "message"); got != "m" {
			t.Errorf("stored message %v, want m", got)
		}
		// Neither another kind, nor the events group's kind, nor a dry run
		// is counted.
		e.do("POST", "/api/v1/namespaces/default/configmaps", cm("c1", nil, nil)).mustCode(t, 201)
		e.do("POST", events+"?dryRun=All", event("e4")).mustCode(t, 201)
		grouped := map[string]any{"metadata": map[string]any{"name": "e5"}, "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "x/y",
			"reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal", "regarding": map[string]any{"kind": "Pod", "name": "p", "namespace": "default"}}
		e.do("POST", groupPath(platBrand.Group("events"), "v1", "default", "events"), grouped).mustCode(t, 201)
		list := e.do("GET", events, nil).mustCode(t, 200).obj(t)
		var names []string
		for _, it := range list["items"].([]any) {
			names = append(names, path(it.(map[string]any), "metadata.name").(string))
		}
		if got := fmt.Sprint(names); got != "[e1 e2 e5]" {
			t.Errorf("stored events %s, want [e1 e2 e5]", got)
		}
	})

	t.Run("User", func(t *testing.T) {
		t.Parallel()
		e := startLimited(t, "[{type: User, qps: 1, burst: 1}]")
		asAlice := func(name string) *resp {
			return e.send(req{method: "POST", path: events, body: event(name), token: aliceToken})
		}
		e.do("POST", events, event("admin-1")).mustCode(t, 201)
		refused(t, e.do("POST", events, event("admin-2")), "User for key admin")
		asAlice("alice-1").mustCode(t, 201)
		refused(t, asAlice("alice-2"), "User for key alice")
	})
}

// TestImagePolicyWebhook: with ImagePolicyWebhook enabled, every pod
// create and update, and every update of a pod's ephemeral containers,
// is reviewed by the backend the configuration's kubeconfig names: a pod
// running an image it denies is refused 403 with upstream's message and
// not stored, an allowed one is stored as written.
func TestImagePolicyWebhook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var namespaces []string
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			APIVersion string `json:"apiVersion"`
			Spec       struct {
				Containers []struct{ Image string } `json:"containers"`
				Namespace  string                   `json:"namespace"`
			} `json:"spec"`
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.APIVersion != platBrand.Group("imagepolicy")+"/v1alpha1" {
			http.Error(w, "not an ImageReview", http.StatusBadRequest)
			return
		}
		mu.Lock()
		namespaces = append(namespaces, review.Spec.Namespace)
		mu.Unlock()
		status := map[string]any{"allowed": true}
		for _, c := range review.Spec.Containers {
			if c.Image == "evil:1" {
				status = map[string]any{"allowed": false, "reason": c.Image + " is banned"}
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review.APIVersion, "kind": "ImageReview", "status": status})
	}))
	t.Cleanup(backend.Close)
	dir := t.TempDir()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: backend.Certificate().Raw}))
	kubeconfig := filepath.Join(dir, "backend.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("clusters:\n- name: b\n  cluster: {server: \""+backend.URL+"\", certificate-authority-data: "+ca+
		"}\ncontexts:\n- name: c\n  context: {cluster: b}\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "admission.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: "+config.AdmissionConfigAPIVersions(platBrand)[0]+"\nkind: AdmissionConfiguration\nplugins:\n"+
		"- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy: {kubeConfigFile: "+kubeconfig+", allowTTL: 50, denyTTL: 50}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) {
		o.EnableAdmissionPlugins = []string{config.PluginImagePolicyWebhook}
		o.AdmissionControlConfigFile = file
	})
	pods := "/api/v1/namespaces/default/pods"
	pod := func(name, image string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"c","image":"` + image + `"}]}}`
	}
	r := e.do("POST", pods, pod("bad", "evil:1")).mustCode(t, 403)
	r.mustMessage(t, `pods "bad" is forbidden: image policy webhook backend denied one or more images: evil:1 is banned`)
	if st := r.obj(t); st["reason"] != "Forbidden" || path(st, "details.name") != "bad" || path(st, "details.kind") != "pods" {
		t.Errorf("refusal %s, want upstream's Forbidden naming the pod", r.body)
	}
	e.do("GET", pods+"/bad", nil).mustCode(t, 404)

	e.do("POST", pods, pod("good", "nginx:1")).mustCode(t, 201)
	stored := e.do("GET", pods+"/good", nil).mustCode(t, 200).obj(t)
	if got := path(stored, "spec.containers").([]any)[0].(map[string]any)["image"]; got != "nginx:1" || path(stored, "metadata.annotations") != nil {
		t.Errorf("stored image %v, annotations %v", got, path(stored, "metadata.annotations"))
	}

	// An update to a denied image is refused and leaves the pod as it was.
	stored["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "evil:1"
	e.do("PUT", pods+"/good", stored).mustCode(t, 403).
		mustMessage(t, `pods "good" is forbidden: image policy webhook backend denied one or more images: evil:1 is banned`)

	// So is a debug container of a denied image, through
	// pods/ephemeralcontainers.
	stored = e.do("GET", pods+"/good", nil).mustCode(t, 200).obj(t)
	stored["spec"].(map[string]any)["ephemeralContainers"] = []any{map[string]any{"name": "debug", "image": "evil:1"}}
	e.do("PUT", pods+"/good/ephemeralcontainers", stored).mustCode(t, 403).
		mustMessage(t, `pods "good" is forbidden: image policy webhook backend denied one or more images: evil:1 is banned`)
	after := e.do("GET", pods+"/good", nil).mustCode(t, 200).obj(t)
	if got := path(after, "spec.containers").([]any)[0].(map[string]any)["image"]; got != "nginx:1" || path(after, "spec.ephemeralContainers") != nil {
		t.Errorf("after refusals: image %v, ephemeral containers %v", got, path(after, "spec.ephemeralContainers"))
	}
	stored["spec"].(map[string]any)["ephemeralContainers"] = []any{map[string]any{"name": "debug", "image": "busybox:1"}}
	e.do("PUT", pods+"/good/ephemeralcontainers", stored).mustCode(t, 200)
	mu.Lock()
	defer mu.Unlock()
	// The refusals of evil:1 after the first are the remembered answer
	// to the same review.
	if got := fmt.Sprint(namespaces); got != "[default default default]" {
		t.Errorf("backend reviews of namespaces %v, want 3 of default", got)
	}
}

package helm

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// widgets is the resource of the chart's custom resource definition.
var widgets = schema.GroupVersionResource{Group: "shop.example.com", Version: "v1", Resource: "widgets"}

// widgetsCRD is the name of the chart's custom resource definition.
const widgetsCRD = "widgets.shop.example.com"

// shopValues are the values of the shop chart that the tests set and
// check.
type shopValues struct {
	replicas int32
	tag      string
	greeting string
	// logLevel, when set, adds an env var and a configuration key that a
	// rollback removes again.
	logLevel string
	// strategy is the Deployment's update strategy; a change of it
	// patches with $retainKeys.
	strategy string
}

// defaults are the chart's values.yaml.
var defaults = shopValues{replicas: 1, tag: "1.25.0", greeting: "hello", strategy: "RollingUpdate"}

// upgraded are the values an upgrade sets.
var upgraded = shopValues{replicas: 3, tag: "1.27.1", greeting: "welcome", logLevel: "debug", strategy: "Recreate"}

// helmValues turns v into the map Helm merges over values.yaml.
func (v shopValues) helmValues() map[string]interface{} {
	return map[string]interface{}{
		"replicas": v.replicas,
		"image":    map[string]interface{}{"tag": v.tag},
		"greeting": v.greeting,
		"logLevel": v.logLevel,
		"strategy": v.strategy,
	}
}

// crdGate makes the first chart install of the package run alone. Helm
// creates the chart's CRD and waits for it to be established only in the
// install that created it; a concurrent install that finds it already
// there goes on at once and fails to map the custom resource while the
// CRD is not yet established. A real API server behaves the same, so the
// tests let one install create the CRD before the others start.
var crdGate struct {
	sync.Mutex
	installed bool
}

// withCRD runs an action that installs the chart, alone if no install
// has created the CRD yet.
func withCRD(run func() error) error {
	crdGate.Lock()
	if crdGate.installed {
		crdGate.Unlock()
		return run()
	}
	defer crdGate.Unlock()
	err := run()
	if err == nil {
		crdGate.installed = true
	}
	return err
}

// install runs helm install of the shop chart as release name in ns.
func install(t *testing.T, ns, name string, vals map[string]interface{}) *release.Release {
	t.Helper()
	in := action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout = ns, name, waitTimeout
	var rel *release.Release
	err := withCRD(func() (err error) {
		rel, err = in.Run(loadChart(t), vals)
		return err
	})
	if err != nil {
		t.Fatalf("helm install %s: %v", name, err)
	}
	if rel.Info.Status != release.StatusDeployed || rel.Version != 1 {
		t.Fatalf("helm install %s: release %s version %d, want deployed version 1", name, rel.Info.Status, rel.Version)
	}
	return rel
}

// fullname is the name the chart gives its objects.
func fullname(release string) string { return release + "-shop" }

// checkRelease checks what Helm and platd hold of release version
// version: the release Secret with Helm's labels and type, and the status
// Helm reads back.
func checkRelease(t *testing.T, ns, name string, version int, status release.Status) {
	t.Helper()
	cs := clientset(t)
	secretName := fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, version)
	s, err := cs.CoreV1().Secrets(ns).Get(context.Background(), secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("release secret: %v", err)
	}
	if s.Type != "helm.sh/release.v1" {
		t.Errorf("release secret type %q, want helm.sh/release.v1", s.Type)
	}
	wantLabels := map[string]string{"name": name, "owner": "helm", "status": string(status), "version": fmt.Sprint(version)}
	for k, v := range wantLabels {
		if s.Labels[k] != v {
			t.Errorf("release secret label %s=%q, want %q (labels %v)", k, s.Labels[k], v, s.Labels)
		}
	}
	if len(s.Data["release"]) == 0 {
		t.Errorf("release secret has no release data: %v", s.Data)
	}
	st := action.NewStatus(helmConfig(t, ns))
	st.Version = version
	rel, err := st.Run(name)
	if err != nil {
		t.Fatalf("helm status %s --revision %d: %v", name, version, err)
	}
	if rel.Info.Status != status {
		t.Errorf("helm status %s --revision %d: %s, want %s", name, version, rel.Info.Status, status)
	}
}

// checkOwned checks the labels and annotations by which Helm owns an
// object of release name.
func checkOwned(t *testing.T, what string, meta metav1.Object, ns, name string) {
	t.Helper()
	if got := meta.GetLabels()["app.kubernetes.io/managed-by"]; got != "Helm" {
		t.Errorf("%s: label app.kubernetes.io/managed-by=%q, want Helm", what, got)
	}
	a := meta.GetAnnotations()
	if a["meta.helm.sh/release-name"] != name || a["meta.helm.sh/release-namespace"] != ns {
		t.Errorf("%s: annotations %v, want meta.helm.sh/release-name=%s and release-namespace=%s", what, a, name, ns)
	}
}

// checkShop checks every object of the shop release name in ns against
// the values v it was rendered with.
func checkShop(t *testing.T, ns, name string, v shopValues) {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t)
	full := fullname(name)

	d, err := cs.AppsV1().Deployments(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("deployment: %v", err)
	}
	checkOwned(t, "deployment", d, ns, name)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != v.replicas {
		t.Errorf("deployment replicas %v, want %d", d.Spec.Replicas, v.replicas)
	}
	if c := d.Spec.Template.Spec.Containers; len(c) != 1 || c[0].Image != "nginx:"+v.tag {
		t.Errorf("deployment containers %+v, want one of image nginx:%s", c, v.tag)
	}
	if c := d.Spec.Template.Spec.Containers; len(c) == 1 {
		env := map[string]string{}
		for _, e := range c[0].Env {
			env[e.Name] = e.Value
		}
		level, set := env["LOG_LEVEL"]
		if len(c[0].Env) != 1+btoi(set) || set != (v.logLevel != "") || level != v.logLevel {
			t.Errorf("deployment env %+v, want GREETING and LOG_LEVEL=%q only if set", c[0].Env, v.logLevel)
		}
	}
	if st := d.Spec.Strategy; string(st.Type) != v.strategy || (st.RollingUpdate != nil) != (v.strategy == "RollingUpdate") ||
		(st.RollingUpdate != nil && (st.RollingUpdate.MaxSurge.String() != "1" || st.RollingUpdate.MaxUnavailable.String() != "0")) {
		t.Errorf("deployment strategy %+v, want %s (maxSurge 1, maxUnavailable 0 for RollingUpdate)", st, v.strategy)
	}
	if got := d.Spec.Template.Spec.ServiceAccountName; got != full {
		t.Errorf("deployment serviceAccountName %q, want %q", got, full)
	}
	if d.Spec.Template.Annotations["checksum/config"] == "" {
		t.Errorf("deployment template annotations %v, want checksum/config", d.Spec.Template.Annotations)
	}
	if d.Spec.Selector == nil || d.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != name {
		t.Errorf("deployment selector %v", d.Spec.Selector)
	}

	pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("poddisruptionbudget (rendered where the API versions Helm discovered have it): %v", err)
	}
	checkOwned(t, "poddisruptionbudget", pdb, ns, name)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("poddisruptionbudget maxUnavailable %v", pdb.Spec.MaxUnavailable)
	}

	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, full+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap: %v", err)
	}
	checkOwned(t, "configmap", cm, ns, name)
	if cm.Data["greeting"] != v.greeting || !strings.Contains(cm.Data["shop.conf"], fmt.Sprintf("replicas %d\n", v.replicas)) {
		t.Errorf("configmap data %v, want greeting %q and replicas %d", cm.Data, v.greeting, v.replicas)
	}
	if level, set := cm.Data["log.level"]; set != (v.logLevel != "") || level != v.logLevel {
		t.Errorf("configmap data %v, want log.level=%q only if set", cm.Data, v.logLevel)
	}

	s, err := cs.CoreV1().Secrets(ns).Get(ctx, full+"-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("secret: %v", err)
	}
	checkOwned(t, "secret", s, ns, name)
	if s.Type != corev1.SecretTypeOpaque || len(s.Data["password"]) != 16 || string(s.Data["user"]) != "admin" {
		t.Errorf("secret type %q data %v, want Opaque with a 16-byte password and user admin", s.Type, s.Data)
	}

	svc, err := cs.CoreV1().Services(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("service: %v", err)
	}
	checkOwned(t, "service", svc, ns, name)
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != "http" || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("service spec %+v, want ClusterIP with port 80 TCP to http", svc.Spec)
	}
	if svc.Spec.ClusterIP == "" {
		t.Errorf("service has no cluster IP allocated")
	}

	sa, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("serviceaccount: %v", err)
	}
	checkOwned(t, "serviceaccount", sa, ns, name)

	role, err := cs.RbacV1().Roles(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("role: %v", err)
	}
	checkOwned(t, "role", role, ns, name)
	if len(role.Rules) != 2 || len(role.Rules[0].ResourceNames) != 1 || role.Rules[0].ResourceNames[0] != full+"-config" ||
		role.Rules[1].APIGroups[0] != "shop.example.com" {
		t.Errorf("role rules %+v", role.Rules)
	}
	rb, err := cs.RbacV1().RoleBindings(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("rolebinding: %v", err)
	}
	checkOwned(t, "rolebinding", rb, ns, name)
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != full || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != full || rb.Subjects[0].Namespace != ns {
		t.Errorf("rolebinding roleRef %+v subjects %+v", rb.RoleRef, rb.Subjects)
	}

	ing, err := cs.NetworkingV1().Ingresses(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ingress: %v", err)
	}
	checkOwned(t, "ingress", ing, ns, name)
	if r := ing.Spec.Rules; len(r) != 1 || r[0].Host != "shop.example.test" || r[0].HTTP == nil || len(r[0].HTTP.Paths) != 1 ||
		r[0].HTTP.Paths[0].Backend.Service == nil || r[0].HTTP.Paths[0].Backend.Service.Name != full ||
		r[0].HTTP.Paths[0].Backend.Service.Port.Name != "http" {
		t.Errorf("ingress rules %+v", r)
	}

	w, err := dynamicClient(t).Resource(widgets).Namespace(ns).Get(ctx, full, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("widget: %v", err)
	}
	checkOwned(t, "widget", w, ns, name)
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	color, _, _ := unstructured.NestedString(w.Object, "spec", "color")
	if size != 3 || color != "blue" {
		t.Errorf("widget spec %v, want size 3 and the defaulted color blue", w.Object["spec"])
	}
}

// checkHook checks the hook ConfigMap that revision ran.
func checkHook(t *testing.T, ns, name string, revision int, upgrade bool) {
	t.Helper()
	cm, err := clientset(t).CoreV1().ConfigMaps(ns).Get(context.Background(), fullname(name)+"-hook", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("hook configmap: %v", err)
	}
	if cm.Data["revision"] != fmt.Sprint(revision) || cm.Data["upgrade"] != fmt.Sprint(upgrade) {
		t.Errorf("hook configmap data %v, want revision %d upgrade %t", cm.Data, revision, upgrade)
	}
	if cm.Annotations["helm.sh/hook"] != "pre-install,post-upgrade" {
		t.Errorf("hook configmap annotations %v", cm.Annotations)
	}
}

// notFound reports whether err is a 404 of the API.
func notFound(err error) bool { return apierrors.IsNotFound(err) }

// apiextensions returns a client of the CRDs.
func apiextensions(t *testing.T) *apiextclient.Clientset {
	t.Helper()
	c, err := apiextclient.NewForConfig(rest.CopyConfig(cluster.config))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// get keeps only the error of a client's Get.
func get[T any](_ T, err error) error { return err }

// b64 encodes data as the chart writes a Secret's data.
func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

package helm

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
)

// kindsObject is one object of the kinds chart and a field that the
// chart's size value sets.
type kindsObject struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	suffix     string
	// path is a JSONPath into the object; want gives its value for a size.
	path string
	want func(size int) string
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

func fixed(v string) func(int) string { return func(int) string { return v } }

// nodePortService is the NodePort Service, whose allocated port must
// survive upgrades, also a --force replace that does not carry it.
var nodePortService = kindsObject{gvr("", "v1", "services"), true, "np", "{.spec.type}", fixed("NodePort")}

var kindsObjects = []kindsObject{
	{gvr("apps", "v1", "statefulsets"), true, "db", "{.spec.replicas}", func(s int) string { return fmt.Sprint(s) }},
	{gvr("apps", "v1", "daemonsets"), true, "agent", "{.spec.template.spec.containers[0].image}", func(s int) string { return fmt.Sprintf("busybox:1.%d", s) }},
	{gvr("batch", "v1", "cronjobs"), true, "backup", "{.spec.schedule}", func(s int) string { return fmt.Sprintf("*/%d * * * *", 5+s) }},
	{gvr("autoscaling", "v2", "horizontalpodautoscalers"), true, "hpa", "{.spec.maxReplicas}", func(s int) string { return fmt.Sprint(4 + s) }},
	{gvr("autoscaling", "v2", "horizontalpodautoscalers"), true, "hpa", "{.spec.metrics[0].resource.target.averageUtilization}", func(s int) string {
		if s == 1 {
			return "80" // autoscaling/v1's targetCPUUtilizationPercentage
		}
		return fmt.Sprint(80 + s)
	}},
	{gvr("policy", "v1", "poddisruptionbudgets"), true, "pdb", "{.spec.minAvailable}", func(s int) string { return fmt.Sprint(s) }},
	{gvr("networking.k8s.io", "v1", "networkpolicies"), true, "np", "{.spec.ingress[0].ports[0].port}", fixed("5432")},
	{gvr("", "v1", "persistentvolumeclaims"), true, "cache", "{.spec.resources.requests.storage}", fixed("1Gi")},
	{gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), false, "reader", "{.rules[0].verbs}", fixed(`["get","list"]`)},
	{gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), false, "reader", "{.roleRef.name}", fixed("kinds-reader")},
	{gvr("scheduling.k8s.io", "v1", "priorityclasses"), false, "high", "{.value}", fixed("1000")},
	{gvr("networking.k8s.io", "v1", "ingressclasses"), false, "ic", "{.spec.controller}", fixed("example.com/ingress")},
	{gvr("", "v1", "limitranges"), true, "lr", "{.spec.limits[0].default.cpu}", func(s int) string { return fmt.Sprintf("%d00m", s) }},
	{gvr("", "v1", "resourcequotas"), true, "rq", "{.spec.hard.pods}", func(s int) string { return fmt.Sprint(10 + s) }},
	{gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), false, "vwc", "{.webhooks[0].failurePolicy}", fixed("Ignore")},
	{gvr("", "v1", "services"), true, "headless", "{.spec.clusterIP}", fixed("None")},
	nodePortService,
	{gvr("", "v1", "services"), true, "ext", "{.spec.externalName}", fixed("db.example.com")},
}

// TestManyKinds installs, upgrades (by patch and by --force replace),
// rolls back and uninstalls a chart with one object of each kind charts
// commonly carry, namespaced and cluster-scoped.
func TestManyKinds(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ch, err := loader.Load(filepath.Join("testdata", "kinds"))
	if err != nil {
		t.Fatal(err)
	}
	const name = "kinds"
	in := action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout = ns, name, waitTimeout
	if _, err := in.Run(ch, nil); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	checkKinds(t, ns, 1)
	nodePort := kindsField(t, ns, nodePortService, "{.spec.ports[0].nodePort}")

	for _, step := range []struct {
		size  int
		force bool
	}{{2, false}, {3, true}} {
		up := action.NewUpgrade(helmConfig(t, ns))
		up.Namespace, up.Timeout, up.Force = ns, waitTimeout, step.force
		if _, err := up.Run(name, ch, map[string]interface{}{"size": step.size}); err != nil {
			t.Fatalf("helm upgrade --force=%t: %v", step.force, err)
		}
		checkKinds(t, ns, step.size)
		if got := kindsField(t, ns, nodePortService, "{.spec.ports[0].nodePort}"); got != nodePort {
			t.Errorf("upgrade --force=%t: node port %s, was %s", step.force, got, nodePort)
		}
	}

	rb := action.NewRollback(helmConfig(t, ns))
	rb.Version, rb.Timeout = 1, waitTimeout
	if err := rb.Run(name); err != nil {
		t.Fatalf("helm rollback: %v", err)
	}
	checkKinds(t, ns, 1)
	checkRelease(t, ns, name, 4, release.StatusDeployed)

	un := action.NewUninstall(helmConfig(t, ns))
	un.Timeout, un.Wait = waitTimeout, true
	if _, err := un.Run(name); err != nil {
		t.Fatalf("helm uninstall --wait: %v", err)
	}
	dc := dynamicClient(t)
	for _, o := range kindsObjects {
		_, err := dc.Resource(o.gvr).Namespace(kindsNamespace(o, ns)).Get(context.Background(), "kinds-"+o.suffix, metav1.GetOptions{})
		if !notFound(err) {
			t.Errorf("%s kinds-%s after uninstall --wait: %v", o.gvr.Resource, o.suffix, err)
		}
	}
}

func kindsNamespace(o kindsObject, ns string) string {
	if o.namespaced {
		return ns
	}
	return ""
}

// checkKinds checks every object of the kinds chart rendered with size.
func checkKinds(t *testing.T, ns string, size int) {
	t.Helper()
	for _, o := range kindsObjects {
		if got, want := kindsField(t, ns, o, o.path), o.want(size); got != want {
			t.Errorf("size %d: %s kinds-%s %s = %q, want %q", size, o.gvr.Resource, o.suffix, o.path, got, want)
		}
	}
}

// kindsField reads one field of an object of the kinds chart.
func kindsField(t *testing.T, ns string, o kindsObject, path string) string {
	t.Helper()
	u, err := dynamicClient(t).Resource(o.gvr).Namespace(kindsNamespace(o, ns)).Get(context.Background(), "kinds-"+o.suffix, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s kinds-%s: %v", o.gvr.Resource, o.suffix, err)
	}
	checkOwned(t, o.gvr.Resource, u, ns, "kinds")
	return jsonPath(t, u, path)
}

func jsonPath(t *testing.T, u *unstructured.Unstructured, path string) string {
	t.Helper()
	jp := jsonpath.New("field")
	if err := jp.Parse(path); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := jp.Execute(&b, u.Object); err != nil {
		t.Fatalf("%s of %s: %v", path, u.GetName(), err)
	}
	return b.String()
}

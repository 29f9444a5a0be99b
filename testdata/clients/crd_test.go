package clients

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	crdv1client "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crdClient is the typed client of CustomResourceDefinitions.
func crdClient(t *testing.T) crdv1client.CustomResourceDefinitionInterface {
	t.Helper()
	c, err := apiextensions.NewForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	return c.ApiextensionsV1().CustomResourceDefinitions()
}

// simpleCRD describes plural.group with one served version v1, a status
// subresource, and a spec of a defaulted size and a free-text note.
func simpleCRD(group, plural, kind string, scope apiextensionsv1.ResourceScope) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size": {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("1")}},
							"note": {Type: "string"},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"phase": {Type: "string"},
						}},
					},
				}},
			}},
		},
	}
}

// createCRD creates crd and deletes it when the test ends.
func createCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds := crdClient(t)
	created, err := crds.Create(context.Background(), crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CRD %s: %v", crd.Name, err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	return created
}

// conditionTrue reports whether the CRD holds condition typ with status True.
func conditionTrue(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// thing is an unstructured custom resource of simpleCRD's schema.
func thing(gv schema.GroupVersion, kind, name, note string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(), "kind": kind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"note": note},
	}}
}

func TestDynamicInformerOnCustomResourceSyncs(t *testing.T) {
	crd := simpleCRD("informer.example.com", "gadgets", "Gadget", apiextensionsv1.NamespaceScoped)
	// A list kind not ending in List: client-go can then not guess the
	// items' kind, so the list must carry it.
	crd.Spec.Names.ListKind = "GadgetCollection"
	createCRD(t, crd)
	gvr := schema.GroupVersionResource{Group: "informer.example.com", Version: "v1", Resource: "gadgets"}
	gv := gvr.GroupVersion()
	ns := namespace(t, clientset(t, config(t)))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	dc, err := dynamic.NewForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	gadgets := dc.Resource(gvr).Namespace(ns)
	if _, err := gadgets.Create(ctx, thing(gv, "Gadget", "before", "one"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, informerResync, ns, nil)
	inf := factory.ForResource(gvr)
	s := &seen{events: map[string]bool{}}
	if _, err := inf.Informer().AddEventHandler(s.handler()); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	// Shutdown waits for the informers, which stop with ctx.
	defer func() { cancel(); factory.Shutdown() }()
	for r, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", r)
		}
	}
	got, err := inf.Lister().ByNamespace(ns).Get("before")
	if err != nil {
		t.Fatalf("synced cache lacks the object made before: %v", err)
	}
	if u := got.(*unstructured.Unstructured); u.GetKind() != "Gadget" || u.GetAPIVersion() != gv.String() ||
		!reflect.DeepEqual(u.Object["spec"], map[string]any{"note": "one", "size": int64(1)}) {
		t.Errorf("cached object: %v", u.Object)
	}

	after, err := gadgets.Create(ctx, thing(gv, "Gadget", "after", "two"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the new object", func() bool { return s.has("add after") })
	if err := unstructured.SetNestedField(after.Object, int64(7), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if _, err := gadgets.Update(ctx, after, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the update", func() bool { return s.has("update after") })
	eventually(t, "the lister to hold the update", func() bool {
		got, err := inf.Lister().ByNamespace(ns).Get("after")
		if err != nil {
			return false
		}
		size, _, _ := unstructured.NestedInt64(got.(*unstructured.Unstructured).Object, "spec", "size")
		return size == 7
	})
	if err := gadgets.Delete(ctx, "after", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the delete", func() bool { return s.has("delete after") })
	if _, err := inf.Lister().ByNamespace(ns).Get("after"); !apierrors.IsNotFound(err) {
		t.Errorf("lister after the delete: %v", err)
	}

	// The informer keeps up across a schema change, which ends its watch
	// as upstream's storage teardown does, and sees the new field.
	cur, err := crdClient(t).Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"red"`)}}
	if _, err := crdClient(t).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("adding a field: %v", err)
	}
	if _, err := gadgets.Create(ctx, thing(gv, "Gadget", "third", "three"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see an object of the new schema", func() bool {
		got, err := inf.Lister().ByNamespace(ns).Get("third")
		if err != nil {
			return false
		}
		color, _, _ := unstructured.NestedString(got.(*unstructured.Unstructured).Object, "spec", "color")
		return color == "red"
	})
}

// TestCRDCreateServesAtOnce checks what envtest users wait for: when the
// CRD create returns, the CRD is Established, discovery lists the resource
// and a custom resource can be created, with no retry. The same holds for
// an update that adds a version.
func TestCRDCreateServesAtOnce(t *testing.T) {
	ctx := context.Background()
	gv := schema.GroupVersion{Group: "immediate.example.com", Version: "v1"}
	crd := simpleCRD(gv.Group, "things", "Thing", apiextensionsv1.ClusterScoped)
	crd.Spec.Names.ShortNames = []string{"thg"}
	created := createCRD(t, crd)
	if !conditionTrue(created, apiextensionsv1.Established) || !conditionTrue(created, apiextensionsv1.NamesAccepted) {
		t.Errorf("CRD create answered conditions %+v", created.Status.Conditions)
	}
	if created.Status.AcceptedNames.Plural != "things" || created.Status.AcceptedNames.Singular != "thing" || created.Status.AcceptedNames.ListKind != "ThingList" {
		t.Errorf("CRD create answered accepted names %+v", created.Status.AcceptedNames)
	}

	// Fresh discovery clients, so nothing is cached.
	dc, err := discovery.NewDiscoveryClientForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		t.Fatalf("discovery of %s right after the CRD create: %v", gv, err)
	}
	checkThingsDiscovered(t, "legacy discovery", list)
	_, all, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("aggregated discovery: %v", err)
	}
	i := slices.IndexFunc(all, func(l *metav1.APIResourceList) bool { return l.GroupVersion == gv.String() })
	if i < 0 {
		t.Fatalf("aggregated discovery lacks %s", gv)
	}
	checkThingsDiscovered(t, "aggregated discovery", all[i])
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := restmapper.NewDiscoveryRESTMapper(groups).RESTMapping(schema.GroupKind{Group: gv.Group, Kind: "Thing"})
	if err != nil || m.Resource != gv.WithResource("things") {
		t.Errorf("REST mapping of Thing: %v %+v", err, m)
	}

	dyn, err := dynamic.NewForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(gv.WithResource("things")).Create(ctx, thing(gv, "Thing", "t1", "first"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("custom resource create right after the CRD create: %v", err)
	}
	if got.GetAPIVersion() != gv.String() || got.GetKind() != "Thing" || got.GetUID() == "" || got.GetGeneration() != 1 || got.GetNamespace() != "" ||
		!reflect.DeepEqual(got.Object["spec"], map[string]any{"note": "first", "size": int64(1)}) {
		t.Errorf("created custom resource: %v", got.Object)
	}

	// An update adding a served version serves it when it returns.
	cur, err := crdClient(t).Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v2 := *cur.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	cur.Spec.Versions = append(cur.Spec.Versions, v2)
	updated, err := crdClient(t).Update(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("adding v2: %v", err)
	}
	if !conditionTrue(updated, apiextensionsv1.Established) {
		t.Errorf("CRD update answered conditions %+v", updated.Status.Conditions)
	}
	gv2 := schema.GroupVersion{Group: gv.Group, Version: "v2"}
	if _, err := dc.ServerResourcesForGroupVersion(gv2.String()); err != nil {
		t.Errorf("discovery of %s right after the CRD update: %v", gv2, err)
	}
	viaV2, err := dyn.Resource(gv2.WithResource("things")).Get(ctx, "t1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading through v2 right after the CRD update: %v", err)
	}
	if viaV2.GetAPIVersion() != gv2.String() || viaV2.GetUID() != got.GetUID() {
		t.Errorf("custom resource through v2: %v", viaV2.Object)
	}

	// Deleting the CRD removes its objects, then itself, then its API.
	if err := crdClient(t).Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the CRD to go", func() bool {
		_, err := crdClient(t).Get(ctx, crd.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := dc.ServerResourcesForGroupVersion(gv.String()); !apierrors.IsNotFound(err) {
		t.Errorf("discovery of %s after the CRD is gone: %v", gv, err)
	}
}

// checkThingsDiscovered checks the discovery entry of the things resource
// and its status subresource.
func checkThingsDiscovered(t *testing.T, what string, list *metav1.APIResourceList) {
	t.Helper()
	i := slices.IndexFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "things" })
	if i < 0 {
		t.Errorf("%s lacks things: %+v", what, list.APIResources)
		return
	}
	r := list.APIResources[i]
	verbs := slices.Sorted(slices.Values(r.Verbs))
	if r.Kind != "Thing" || r.Namespaced || r.SingularName != "thing" || !slices.Equal(r.ShortNames, []string{"thg"}) ||
		!slices.Equal(verbs, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}) {
		t.Errorf("%s: things = %+v", what, r)
	}
	if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "things/status" }) {
		t.Errorf("%s lacks things/status: %+v", what, list.APIResources)
	}
}

// TestConcurrentCRDCreatesServeAtOnce creates several CRDs at the same time
// and a custom resource of each right after its CRD create returns.
func TestConcurrentCRDCreatesServeAtOnce(t *testing.T) {
	const n = 4
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		plural := fmt.Sprintf("parts%d", i)
		gv := schema.GroupVersion{Group: "concurrent.example.com", Version: "v1"}
		crd := simpleCRD(gv.Group, plural, fmt.Sprintf("Part%d", i), apiextensionsv1.ClusterScoped)
		t.Cleanup(func() { _ = crdClient(t).Delete(ctx, crd.Name, metav1.DeleteOptions{}) })
		crds := crdClient(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("creating CRD %s: %w", crd.Name, err)
				return
			}
			got, err := dyn.Resource(gv.WithResource(plural)).Create(ctx, thing(gv, crd.Spec.Names.Kind, "p", plural), metav1.CreateOptions{})
			if err != nil {
				errs <- fmt.Errorf("custom resource create right after the CRD create of %s: %w", crd.Name, err)
				return
			}
			if note, _, _ := unstructured.NestedString(got.Object, "spec", "note"); note != plural || got.GetKind() != crd.Spec.Names.Kind {
				errs <- fmt.Errorf("created %s: %v", plural, got.Object)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMetadataInformerOnCustomResourceSyncs watches custom resources'
// metadata only, as controller-runtime's metadata watches do: client-go's
// metadata client asks for PartialObjectMetadata in protobuf first.
func TestMetadataInformerOnCustomResourceSyncs(t *testing.T) {
	createCRD(t, simpleCRD("metadata.example.com", "sprockets", "Sprocket", apiextensionsv1.NamespaceScoped))
	gvr := schema.GroupVersionResource{Group: "metadata.example.com", Version: "v1", Resource: "sprockets"}
	ns := namespace(t, clientset(t, config(t)))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	dc, err := dynamic.NewForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	sprockets := dc.Resource(gvr).Namespace(ns)
	before, err := sprockets.Create(ctx, thing(gvr.GroupVersion(), "Sprocket", "before", "one"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	mc, err := metadata.NewForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	one, err := mc.Resource(gvr).Namespace(ns).Get(ctx, "before", metav1.GetOptions{})
	if err != nil || one.UID != before.GetUID() || one.Generation != 1 || len(one.ManagedFields) != 1 {
		t.Errorf("metadata get: %v %+v", err, one)
	}
	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, informerResync, ns, nil)
	inf := factory.ForResource(gvr)
	s := &seen{events: map[string]bool{}}
	if _, err := inf.Informer().AddEventHandler(s.handler()); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	// Shutdown waits for the informers, which stop with ctx.
	defer func() { cancel(); factory.Shutdown() }()
	for r, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", r)
		}
	}
	got, err := inf.Lister().ByNamespace(ns).Get("before")
	if m, ok := got.(*metav1.PartialObjectMetadata); err != nil || !ok || m.UID != before.GetUID() {
		t.Errorf("cached metadata: %v %#v", err, got)
	}
	before.SetLabels(map[string]string{"stage": "two"})
	if _, err := sprockets.Update(ctx, before, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the lister to hold the new label", func() bool {
		got, err := inf.Lister().ByNamespace(ns).Get("before")
		return err == nil && got.(*metav1.PartialObjectMetadata).Labels["stage"] == "two"
	})
	if err := sprockets.Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the delete", func() bool { return s.has("delete before") })
}

// TestServerSideApplyOnCustomResource applies a custom resource and its
// status with controller-runtime's client, as operators do: the manager
// owns what it applied, the status subresource applies status alone, and
// a field left out of the next apply is removed.
func TestServerSideApplyOnCustomResource(t *testing.T) {
	createCRD(t, simpleCRD("apply.example.com", "valves", "Valve", apiextensionsv1.NamespaceScoped))
	gv := schema.GroupVersion{Group: "apply.example.com", Version: "v1"}
	ns := namespace(t, clientset(t, config(t)))
	ctx := context.Background()
	c, err := client.New(config(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	valve := func(member string, value map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": gv.String(), "kind": "Valve",
			"metadata": map[string]any{"name": "v1", "namespace": ns}, member: value}}
	}
	owner := client.FieldOwner("valve-operator")

	u := valve("spec", map[string]any{"note": "first"})
	if err := c.Patch(ctx, u, client.Apply, owner, client.ForceOwnership); err != nil {
		t.Fatalf("applying the valve: %v", err)
	}
	mf := u.GetManagedFields()
	if !reflect.DeepEqual(u.Object["spec"], map[string]any{"note": "first", "size": int64(1)}) || len(mf) != 1 ||
		mf[0].Manager != "valve-operator" || mf[0].Operation != metav1.ManagedFieldsOperationApply || string(mf[0].FieldsV1.Raw) != `{"f:spec":{"f:note":{}}}` {
		t.Errorf("applied valve: spec %v, managed fields %+v", u.Object["spec"], mf)
	}

	st := valve("status", map[string]any{"phase": "Open"})
	if err := c.Status().Patch(ctx, st, client.Apply, owner, client.ForceOwnership); err != nil {
		t.Fatalf("applying the valve's status: %v", err)
	}
	if phase, _, _ := unstructured.NestedString(st.Object, "status", "phase"); phase != "Open" || !reflect.DeepEqual(st.Object["spec"], u.Object["spec"]) ||
		!slices.ContainsFunc(st.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
			return e.Subresource == "status" && e.Manager == "valve-operator"
		}) {
		t.Errorf("status apply: %v, managed fields %+v", st.Object, st.GetManagedFields())
	}

	u = valve("spec", map[string]any{"size": int64(3)})
	if err := c.Patch(ctx, u, client.Apply, owner, client.ForceOwnership); err != nil {
		t.Fatalf("applying the valve again: %v", err)
	}
	if !reflect.DeepEqual(u.Object["spec"], map[string]any{"size": int64(3)}) || u.GetGeneration() != 2 {
		t.Errorf("re-applied valve: generation %d, spec %v", u.GetGeneration(), u.Object["spec"])
	}
}

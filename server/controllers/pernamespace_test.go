package controllers

import (
	"context"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
)

func TestServiceAccountController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	nsd := e.reg.Namespaces()
	sad := e.lookup(t, "", "v1", "serviceaccounts")
	e.createNamespace(t, "before")
	e.run(t, (&ServiceAccounts{Source: e.store, Objects: e.api, Registry: e.reg, ServiceAccounts: sad, Log: e.log}).Run)
	e.createNamespace(t, "after")

	exists := func(ns string) func() bool {
		return func() bool { _, err := e.api.Get(sad, ns, "default"); return err == nil }
	}
	waitFor(t, "the SA in an existing namespace", exists("before"))
	waitFor(t, "the SA in a new namespace", exists("after"))

	// A changed SA is left as it is; a deleted one comes back with a new
	// uid.
	changed, err := e.api.Update(ctx, sad, "after", "default", "", func(sa registry.Object) registry.Object {
		child(child(sa, "metadata"), "labels")["mine"] = "yes"
		return sa
	})
	if err != nil {
		t.Fatal(err)
	}
	old := metaString(changed, "uid")
	if _, err := e.api.Delete(ctx, sad, "after", "default", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the SA to come back", func() bool {
		sa, err := e.api.Get(sad, "after", "default")
		return err == nil && metaString(sa, "uid") != old && child(sa, "metadata")["labels"] == nil
	})

	// A terminating namespace gets none back.
	e.createNamespace(t, "ending")
	waitFor(t, "the SA in a namespace about to end", exists("ending"))
	held := registry.Object{"metadata": map[string]any{"name": "held", "namespace": "ending", "finalizers": []any{"example.com/hold"}}}
	if _, err := e.api.Create(ctx, e.lookup(t, "", "v1", "configmaps"), held); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Delete(ctx, nsd, "", "ending", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Delete(ctx, sad, "ending", "default", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A later namespace's SA proves the controller went past the deletion.
	e.createNamespace(t, "later")
	waitFor(t, "the SA in a later namespace", exists("later"))
	if _, err := e.api.Get(sad, "ending", "default"); apierr.ReasonOf(err) != apierr.ReasonNotFound {
		t.Errorf("SA in a terminating namespace: %v", err)
	}
}

func TestRootCAController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	cmd := e.lookup(t, "", "v1", "configmaps")
	const bundle = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	e.createNamespace(t, "before")
	c := &RootCA{Source: e.store, Objects: e.api, Registry: e.reg, ConfigMaps: cmd, Name: e.brand.RootCAConfigMap,
		Annotation: e.brand.Label("description"), Description: e.brand.RootCADescription, CA: []byte(bundle), Log: e.log}
	e.run(t, c.Run)
	e.createNamespace(t, "after")

	published := func(ns string) func() bool {
		return func() bool {
			cm, err := e.api.Get(cmd, ns, e.brand.RootCAConfigMap)
			if err != nil {
				return false
			}
			data, _ := cm["data"].(map[string]any)
			ann, _ := child(cm, "metadata")["annotations"].(map[string]any)
			return len(data) == 1 && data["ca.crt"] == bundle && ann[e.brand.Label("description")] == e.brand.RootCADescription
		}
	}
	waitFor(t, "the bundle in an existing namespace", published("before"))
	waitFor(t, "the bundle in a new namespace", published("after"))

	// Changed data is put back; labels the user added stay.
	if _, err := e.api.Update(ctx, cmd, "after", e.brand.RootCAConfigMap, "", func(cm registry.Object) registry.Object {
		cm["data"] = map[string]any{"ca.crt": "tampered", "extra": "x"}
		child(child(cm, "metadata"), "labels")["mine"] = "yes"
		return cm
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bundle to be repaired", func() bool {
		cm, _ := e.api.Get(cmd, "after", e.brand.RootCAConfigMap)
		return published("after")() && child(child(cm, "metadata"), "labels")["mine"] == "yes"
	})

	// A deleted bundle comes back.
	if _, err := e.api.Delete(ctx, cmd, "before", e.brand.RootCAConfigMap, registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bundle to be created again", published("before"))
}

// createNamespace creates a namespace through the in-process API.
func (e *testEnv) createNamespace(t *testing.T, name string) {
	t.Helper()
	if _, err := e.api.Create(context.Background(), e.reg.Namespaces(), registry.Object{"metadata": map[string]any{"name": name}}); err != nil {
		t.Fatal(err)
	}
}

// createPodNamespace creates a namespace with its default service account,
// which pods need to be admitted.
func (e *testEnv) createPodNamespace(t *testing.T, name string) {
	t.Helper()
	e.createNamespace(t, name)
	if err := e.createDefaultAccount(name); err != nil {
		t.Fatal(err)
	}
}

func (e *testEnv) createDefaultAccount(ns string) error {
	_, err := e.api.Create(context.Background(), e.reg.Lookup("", "v1", "serviceaccounts"),
		registry.Object{"metadata": map[string]any{"name": "default", "namespace": ns}})
	return err
}

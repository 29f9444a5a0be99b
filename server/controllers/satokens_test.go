package controllers

import (
	"context"
	"encoding/base64"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
)

func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	sas, secrets := e.lookup(t, "", "v1", "serviceaccounts"), e.lookup(t, "", "v1", "secrets")
	c := &ServiceAccountTokens{Source: e.store, Objects: e.api, ServiceAccounts: sas, Secrets: secrets,
		Type: e.brand.Label("service-account-token"), NameAnnotation: e.brand.Label("service-account.name"),
		UIDAnnotation: e.brand.Label("service-account.uid"), CA: []byte("CA PEM"), Log: e.log,
		Sign: func(ns, sa, uid, secret string) (string, error) { return ns + "|" + sa + "|" + uid + "|" + secret, nil },
	}
	if _, err := e.api.Create(ctx, e.reg.Namespaces(), registry.Object{"metadata": map[string]any{"name": "ns"}}); err != nil {
		t.Fatal(err)
	}
	sa, err := e.api.Create(ctx, sas, registry.Object{"metadata": map[string]any{"name": "robot", "namespace": "ns"}})
	if err != nil {
		t.Fatal(err)
	}
	uid := metaString(sa, "uid")
	tokenSecret := func(name, account string, data map[string]any) {
		t.Helper()
		obj := registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns", "annotations": map[string]any{c.NameAnnotation: account}}, "type": c.Type}
		if data != nil {
			obj["data"] = data
		}
		if _, err := e.api.Create(ctx, secrets, obj); err != nil {
			t.Fatal(err)
		}
	}
	// One exists before the controller starts, one is made after.
	tokenSecret("before", "robot", nil)
	e.run(t, c.Run)
	tokenSecret("after", "robot", nil)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, name := range []string{"before", "after"} {
		waitFor(t, name+" filled", func() bool {
			s, err := e.api.Get(secrets, "ns", name)
			if err != nil {
				return false
			}
			d, _ := s["data"].(map[string]any)
			return d["token"] == b64("ns|robot|"+uid+"|"+name) && d["ca.crt"] == b64("CA PEM") && d["namespace"] == b64("ns") &&
				annotation(s, c.UIDAnnotation) == uid
		})
	}
	// A token already there is kept.
	tokenSecret("kept", "robot", map[string]any{"token": b64("mine")})
	waitFor(t, "kept filled", func() bool {
		s, _ := e.api.Get(secrets, "ns", "kept")
		d, _ := s["data"].(map[string]any)
		return d["token"] == b64("mine") && d["namespace"] == b64("ns")
	})
	// Other secret types are left alone.
	if _, err := e.api.Create(ctx, secrets, registry.Object{"metadata": map[string]any{"name": "plain", "namespace": "ns"}}); err != nil {
		t.Fatal(err)
	}
	// A secret for a missing account, and the account's secrets once it
	// is deleted, are deleted.
	tokenSecret("orphan", "nobody", nil)
	gone := func(name string) func() bool {
		return func() bool {
			_, err := e.api.Get(secrets, "ns", name)
			return apierr.ReasonOf(err) == apierr.ReasonNotFound
		}
	}
	waitFor(t, "orphan deleted", gone("orphan"))
	if _, err := e.api.Delete(ctx, sas, "ns", "robot", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"before", "after", "kept"} {
		waitFor(t, name+" deleted with its account", gone(name))
	}
	if s, err := e.api.Get(secrets, "ns", "plain"); err != nil || s["data"] != nil {
		t.Errorf("plain secret: %v %v", s, err)
	}
}

// A deleted token secret's name leaves its service account's secrets;
// the other references stay, and an account recreated under the name (a
// new UID) is not touched.
func TestServiceAccountTokensUnreferenceDeleted(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	sas, secrets := e.lookup(t, "", "v1", "serviceaccounts"), e.lookup(t, "", "v1", "secrets")
	c := &ServiceAccountTokens{Source: e.store, Objects: e.api, ServiceAccounts: sas, Secrets: secrets,
		Type: e.brand.Label("service-account-token"), NameAnnotation: e.brand.Label("service-account.name"),
		UIDAnnotation: e.brand.Label("service-account.uid"), Log: e.log,
		Sign: func(ns, sa, uid, secret string) (string, error) { return "t", nil },
	}
	if _, err := e.api.Create(ctx, e.reg.Namespaces(), registry.Object{"metadata": map[string]any{"name": "ns"}}); err != nil {
		t.Fatal(err)
	}
	refs := []any{map[string]any{"name": "tok"}, map[string]any{"name": "other"}}
	if _, err := e.api.Create(ctx, sas, registry.Object{"metadata": map[string]any{"name": "robot", "namespace": "ns"}, "secrets": refs}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tok", "other"} {
		obj := registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns", "annotations": map[string]any{c.NameAnnotation: "robot"}}, "type": c.Type}
		if _, err := e.api.Create(ctx, secrets, obj); err != nil {
			t.Fatal(err)
		}
	}
	e.run(t, c.Run)
	waitFor(t, "tok filled", func() bool {
		s, _ := e.api.Get(secrets, "ns", "tok")
		return annotation(s, c.UIDAnnotation) != ""
	})
	if _, err := e.api.Delete(ctx, secrets, "ns", "tok", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	secretNames := func() []string {
		sa, err := e.api.Get(sas, "ns", "robot")
		if err != nil {
			return nil
		}
		var out []string
		for _, r := range sa["secrets"].([]any) {
			out = append(out, r.(map[string]any)["name"].(string))
		}
		return out
	}
	waitFor(t, "tok unreferenced", func() bool {
		n := secretNames()
		return len(n) == 1 && n[0] == "other"
	})
	// The account recreated: a secret of the old one going does not
	// change the new one's references.
	if _, err := e.api.Delete(ctx, sas, "ns", "robot", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "other deleted with its account", func() bool {
		_, err := e.api.Get(secrets, "ns", "other")
		return apierr.ReasonOf(err) == apierr.ReasonNotFound
	})
	if _, err := e.api.Create(ctx, sas, registry.Object{"metadata": map[string]any{"name": "robot", "namespace": "ns"}, "secrets": []any{map[string]any{"name": "other"}}}); err != nil {
		t.Fatal(err)
	}
	// A marker write after the recreate: once its sync is done, the queue
	// has passed the old secret's deletion too.
	if _, err := e.api.Create(ctx, secrets, registry.Object{"metadata": map[string]any{"name": "marker", "namespace": "ns", "annotations": map[string]any{c.NameAnnotation: "robot"}}, "type": c.Type}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "marker filled", func() bool {
		s, _ := e.api.Get(secrets, "ns", "marker")
		return annotation(s, c.UIDAnnotation) != ""
	})
	if n := secretNames(); len(n) != 1 || n[0] != "other" {
		t.Errorf("recreated account's secrets = %v, want [other]", n)
	}
}

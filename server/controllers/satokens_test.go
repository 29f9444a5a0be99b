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

package controllers

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// bootstrapEnv is a store with the system and public namespaces, and the
// bootstrap token controllers' shared settings at clock now.
func bootstrapEnv(t *testing.T, now func() time.Time) (*testEnv, BootstrapTokens, *registry.Descriptor) {
	t.Helper()
	e := newTestEnv(t)
	ctx := context.Background()
	for _, ns := range []string{e.brand.SystemNamespace, e.brand.PublicNamespace} {
		if err := e.api.EnsureNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	tokens := BootstrapTokens{Source: e.store, Objects: e.api, Secrets: e.lookup(t, "", "v1", "secrets"),
		SystemNamespace: e.brand.SystemNamespace, TokenType: e.brand.BootstrapTokenType(), Now: now, Log: e.log}
	return e, tokens, e.lookup(t, "", "v1", "configmaps")
}

func createToken(t *testing.T, tk BootstrapTokens, id string, data map[string]string) {
	t.Helper()
	enc := map[string]any{"token-id": b64s(id), "token-secret": b64s("0123456789abcdef")}
	for k, v := range data {
		enc[k] = b64s(v)
	}
	_, err := tk.Objects.Create(context.Background(), tk.Secrets, registry.Object{
		"metadata": map[string]any{"name": security.BootstrapTokenSecretName(id), "namespace": tk.SystemNamespace},
		"type":     tk.TokenType, "data": enc,
	})
	if err != nil {
		t.Fatal(err)
	}
}

func b64s(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestTokenCleanerUsesItsClock(t *testing.T) {
	t.Parallel()
	// Two hours ahead: a token expiring in one hour is already expired.
	e, tk, _ := bootstrapEnv(t, func() time.Time { return time.Now().Add(2 * time.Hour) })
	hour := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	day := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	createToken(t, tk, "hour00", map[string]string{"expiration": hour})
	createToken(t, tk, "day000", map[string]string{"expiration": day})
	createToken(t, tk, "never0", nil)
	e.run(t, (&TokenCleaner{BootstrapTokens: tk}).Run)
	gone := func(id string) bool {
		_, err := tk.Objects.Get(tk.Secrets, tk.SystemNamespace, security.BootstrapTokenSecretName(id))
		return apierr.ReasonOf(err) == apierr.ReasonNotFound
	}
	waitFor(t, "the expired token to be deleted", func() bool { return gone("hour00") })
	if gone("day000") || gone("never0") {
		t.Fatal("a token that has not expired was deleted")
	}
}

func TestBootstrapSignerSkipsTokensThatCannotSign(t *testing.T) {
	t.Parallel()
	e, tk, cms := bootstrapEnv(t, func() time.Time { return time.Now().Add(2 * time.Hour) })
	hour := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	day := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	createToken(t, tk, "sign00", map[string]string{"usage-bootstrap-signing": "true", "expiration": day})
	createToken(t, tk, "expd00", map[string]string{"usage-bootstrap-signing": "true", "expiration": hour})
	createToken(t, tk, "nosign", map[string]string{"usage-bootstrap-signing": "false"})
	ctx := context.Background()
	// Without cluster-info the signer has nothing to do; it signs the
	// ConfigMap once it appears.
	e.run(t, (&BootstrapSigner{BootstrapTokens: tk, ConfigMaps: cms, PublicNamespace: e.brand.PublicNamespace}).Run)
	if _, err := e.api.Create(ctx, cms, registry.Object{
		"metadata": map[string]any{"name": security.ClusterInfoName, "namespace": e.brand.PublicNamespace},
		"data":     map[string]any{"kubeconfig": "kc", "other": "kept"},
	}); err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	waitFor(t, "cluster-info to be signed", func() bool {
		cm, err := e.api.Get(cms, e.brand.PublicNamespace, security.ClusterInfoName)
		if err != nil {
			t.Fatal(err)
		}
		data, _ = cm["data"].(map[string]any)
		return data["jws-kubeconfig-sign00"] != nil
	})
	if len(data) != 3 || data["other"] != "kept" {
		t.Fatalf("data %v: want kubeconfig, other and one signature", data)
	}
	if err := security.VerifyDetachedJWS(data["jws-kubeconfig-sign00"].(string), []byte("kc"), "sign00", "0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
}

package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"platd/config"
)

// TestAuthzModesBuildOnce: a reloaded authorization configuration calls
// the mode constructors again and must get the instances serving now.
func TestAuthzModesBuildOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, _ := config.LookupBrand("plat")
	policy := filepath.Join(dir, "policy.jsonl")
	if err := os.WriteFile(policy, []byte(`{"user":"alice"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := config.Options{DataDir: dir, BindAddress: "127.0.0.1", Brand: b, HistoryRetention: config.DefaultHistoryRetention, UnsafeNoFsync: true,
		AuthorizationModes: []string{config.ModeNode, config.ModeABAC}, AuthorizationPolicyFile: policy}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.store.Close()
	defer s.ln.Close()
	for _, m := range []string{config.ModeNode, config.ModeABAC} {
		first, err := s.authzOnce(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.authzOnce(m)
		if err != nil || again != first {
			t.Errorf("%s: built again: %p then %p (%v)", m, first, again, err)
		}
	}
	// The node graph's loop was queued once, for Serve to start, beside
	// the followers of the admission policies, the webhook configurations
	// and the flow-control configuration, and the legacy token tracking.
	if n := len(s.background.pending); n != 5 {
		t.Errorf("%d background loops queued, want 5", n)
	}
}

func TestAuthzBuiltOncePerServer(t *testing.T) {
	t.Parallel()
	kc := filepath.Join(t.TempDir(), "kc")
	if err := os.WriteFile(kc, []byte("clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: config.Options{AuthorizationModes: []string{config.ModeWebhook, config.ModeAlwaysDeny},
		AuthorizationWebhook: config.AuthorizationWebhook{ConfigFile: kc, Version: "v1"}}}
	a, err := s.authzOnce(config.ModeWebhook)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.authzOnce(config.ModeWebhook)
	if err != nil || a != b {
		t.Fatalf("built twice: %p %p %v", a, b, err)
	}
	if _, err := s.authzOnce("Nope"); err == nil {
		t.Fatal("an unknown mode was built")
	}
	if !s.authorizationModeEnabled(config.ModeAlwaysDeny) || s.authorizationModeEnabled(config.ModeRBAC) {
		t.Error("modes from the flags")
	}
	s.opts.AuthorizationConfigFile = "/f"
	s.authzLive = &liveAuthz{startTypes: []string{config.ModeRBAC}}
	if !s.authorizationModeEnabled(config.ModeRBAC) || s.authorizationModeEnabled(config.ModeAlwaysDeny) {
		t.Error("modes from the file")
	}
}

package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"platd/config"
	"platd/security"
	servercel "platd/server/cel"
)

// authzModes builds each authorization mode's authorizer. A mode whose
// authorizer follows the store (RBAC, Node) loads its state here, before
// the first request, and keeps it current from the store's watch. The
// server calls each constructor at most once (authzOnce), also when the
// --authorization-config file is reloaded. Webhook is built from the
// --authorization-webhook-* flags; the file's webhooks are built from
// their own entries.
var authzModes = map[string]func(s *Server) (security.Authorizer, error){
	config.ModeAlwaysAllow: func(*Server) (security.Authorizer, error) { return security.AlwaysAllow{}, nil },
	config.ModeAlwaysDeny:  func(*Server) (security.Authorizer, error) { return security.AlwaysDeny{}, nil },
	config.ModeWebhook:     (*Server).flagsWebhookAuthorizer,
	config.ModeABAC:        func(s *Server) (security.Authorizer, error) { return security.NewABAC(s.opts.ABACPolicies), nil },
	config.ModeNode:        func(s *Server) (security.Authorizer, error) { return s.nodeAuthorizer() },
	config.ModeRBAC:        func(s *Server) (security.Authorizer, error) { return s.rbacAuthorizer() },
}

// DefaultAuthzConfigReloadInterval is how often --authorization-config is
// re-read: upstream's minute. Each tick reads and hashes the small file
// rather than trusting modification times (see the authentication file).
const DefaultAuthzConfigReloadInterval = time.Minute

// reloadableAuthzTypes may be added to the file after start; the others
// keep state from the store and are built only at start.
var reloadableAuthzTypes = []string{config.ModeAlwaysAllow, config.ModeAlwaysDeny, config.ModeWebhook}

// liveAuthz is the server's authorizer chain: a reload of
// --authorization-config swaps it atomically, so the filter and the
// access reviews see the new chain from their next call. Safe for
// concurrent use.
type liveAuthz struct {
	cur atomic.Pointer[builtAuthz]

	// reloadMu serializes reloads and guards hash, cfg and startTypes.
	reloadMu   sync.Mutex
	hash       [sha256.Size]byte
	cfg        *config.AuthorizationConfiguration
	startTypes []string
	statsMu    sync.Mutex
	stats      security.ReloadStats
}

// builtAuthz is one chain and the webhooks it owns.
type builtAuthz struct {
	chain    security.Chain
	webhooks []*security.WebhookAuthorizer
}

func (l *liveAuthz) Authorize(ctx context.Context, a security.Attributes) (security.Decision, string, error) {
	return l.cur.Load().chain.Authorize(ctx, a)
}

func (l *liveAuthz) RulesFor(ctx context.Context, u *security.User, namespace string) (security.Rules, bool, error) {
	return l.cur.Load().chain.RulesFor(ctx, u, namespace)
}

// authorizer builds the chain of --authorization-config when set, else of
// modes, and returns the live holder.
func (s *Server) authorizer(modes []string) (security.Chain, error) {
	s.authzLive = &liveAuthz{}
	var b *builtAuthz
	var err error
	if path := s.opts.AuthorizationConfigFile; path != "" {
		c, hash, lerr := s.loadAuthzConfig(path)
		if lerr != nil {
			return nil, fmt.Errorf("%w: --authorization-config: %w", config.ErrInvalid, lerr)
		}
		for _, a := range c.Authorizers {
			if a.Type != config.ModeWebhook && !slices.Contains(s.authzLive.startTypes, a.Type) {
				s.authzLive.startTypes = append(s.authzLive.startTypes, a.Type)
			}
		}
		if b, err = s.authzFromConfig(c, false); err != nil {
			return nil, fmt.Errorf("--authorization-config: %w", err)
		}
		s.authzLive.cfg, s.authzLive.hash = c, hash
	} else if b, err = s.authzFromModes(modes); err != nil {
		return nil, err
	}
	s.authzLive.cur.Store(b)
	return s.authzLive, nil
}

func (s *Server) authzFromModes(modes []string) (*builtAuthz, error) {
	b := &builtAuthz{}
	var chain []security.Authorizer
	for _, m := range modes {
		z, err := s.authzOnce(m)
		if err != nil {
			return nil, err
		}
		if w, ok := z.(*security.WebhookAuthorizer); ok {
			b.webhooks = append(b.webhooks, w)
		}
		chain = append(chain, s.counted(z, m, config.AuthorizerName(m)))
	}
	b.chain = security.NewChain(chain...)
	return b, nil
}

// authzOnce returns mode's authorizer, built on first use and then kept:
// RBAC and Node index the store once per server.
func (s *Server) authzOnce(mode string) (security.Authorizer, error) {
	s.authzMu.Lock()
	defer s.authzMu.Unlock()
	if z, ok := s.authzBuilt[mode]; ok {
		return z, nil
	}
	build, ok := authzModes[mode]
	if !ok {
		return nil, fmt.Errorf("%w: authorization mode %q is not available", config.ErrInvalid, mode)
	}
	z, err := build(s)
	if err != nil {
		return nil, fmt.Errorf("authorization mode %s: %w", mode, err)
	}
	if s.authzBuilt == nil {
		s.authzBuilt = map[string]security.Authorizer{}
	}
	s.authzBuilt[mode] = z
	return z, nil
}

// flagsWebhookAuthorizer is the Webhook mode of the flags: failure policy
// NoOpinion and upstream's 30 s timeout.
func (s *Server) flagsWebhookAuthorizer() (security.Authorizer, error) {
	f := s.opts.AuthorizationWebhook
	kc, err := config.LoadKubeconfigClient(f.ConfigFile)
	if err != nil {
		return nil, fmt.Errorf("%w: --authorization-webhook-config-file: %w", config.ErrInvalid, err)
	}
	w, err := security.NewWebhookAuthorizer(security.WebhookAuthorizerConfig{
		Name: config.AuthorizerName(config.ModeWebhook), Client: kc, Version: f.Version, AuthorizedTTL: f.AuthorizedTTL, UnauthorizedTTL: f.UnauthorizedTTL,
		Timeout: config.LegacyAuthzWebhookTimeout, FailurePolicy: config.FailurePolicyNoOpinion, Brand: s.opts.Brand,
		Metrics: s.authzWebhookMetrics(),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: --authorization-webhook-config-file: %w", config.ErrInvalid, err)
	}
	return w, nil
}

// authzCompiler is the match-condition compiler, built on first use.
func (s *Server) authzCompiler() (*security.AuthzCompiler, error) {
	s.authzMu.Lock()
	defer s.authzMu.Unlock()
	if s.authzCEL == nil {
		c, err := security.NewAuthzCompiler(servercel.Libraries())
		if err != nil {
			return nil, err
		}
		s.authzCEL = c
	}
	return s.authzCEL, nil
}

// loadAuthzConfig reads, decodes and validates the file with upstream's
// messages, and returns its hash.
func (s *Server) loadAuthzConfig(path string) (*config.AuthorizationConfiguration, [sha256.Size]byte, error) {
	c, data, err := config.LoadAuthorizationConfig(path, s.opts.Brand)
	hash := sha256.Sum256(data)
	if err != nil {
		return nil, hash, err
	}
	cel, err := s.authzCompiler()
	if err != nil {
		return nil, hash, err
	}
	if ferrs := config.ValidateAuthorizationConfig(c, cel.Check); len(ferrs) > 0 {
		return nil, hash, fmt.Errorf("%w: %s: %w", config.ErrAuthorizationConfig, path, ferrs)
	}
	for _, a := range c.Authorizers {
		if want := config.AuthorizerName(a.Type); a.Type != config.ModeWebhook && a.Name != want {
			return nil, hash, fmt.Errorf("%w: %s: expected name %s for authorizer %s instead of %s", config.ErrAuthorizationConfig, path, want, a.Type, a.Name)
		}
	}
	if p := c.AnonymousAllowAll(s.opts.AnonymousAuth); p != "" {
		return nil, hash, fmt.Errorf("%w: %s: %s", config.ErrAuthorizationConfig, path, p)
	}
	return c, hash, nil
}

// authzFromConfig builds the file's chain. On reload no stateful type may
// appear that the start did not build.
func (s *Server) authzFromConfig(c *config.AuthorizationConfiguration, reload bool) (*builtAuthz, error) {
	b := &builtAuthz{}
	fail := func(err error) (*builtAuthz, error) {
		b.close()
		return nil, err
	}
	var chain []security.Authorizer
	for _, a := range c.Authorizers {
		if a.Type != config.ModeWebhook {
			if reload && !slices.Contains(s.authzLive.startTypes, a.Type) && !slices.Contains(reloadableAuthzTypes, a.Type) {
				return fail(fmt.Errorf("authorizer type %s is not allowed if it was not enabled at initial server startup", a.Type))
			}
			z, err := s.authzOnce(a.Type)
			if err != nil {
				return fail(err)
			}
			chain = append(chain, s.counted(z, a.Type, a.Name))
			continue
		}
		w, err := s.fileWebhookAuthorizer(a)
		if err != nil {
			// What a webhook needs is all in the operator's files.
			return fail(fmt.Errorf("%w: authorizer %q: %w", config.ErrInvalid, a.Name, err))
		}
		b.webhooks = append(b.webhooks, w)
		chain = append(chain, s.counted(w, a.Type, a.Name))
	}
	b.chain = security.NewChain(chain...)
	return b, nil
}

// webhookClient reads the kubeconfig a configured webhook is reached
// through; at start before anything is written, and when its chain is
// built.
func webhookClient(ci config.WebhookConnectionInfo) (config.KubeconfigClient, error) {
	if ci.Type != config.ConnectionKubeConfigFile || ci.KubeConfigFile == nil {
		// platd runs outside any cluster: there is no in-cluster
		// service account to reach a webhook with.
		return config.KubeconfigClient{}, fmt.Errorf("connectionInfo.type %s is not supported: use %s", ci.Type, config.ConnectionKubeConfigFile)
	}
	return config.LoadKubeconfigClient(*ci.KubeConfigFile)
}

func (s *Server) fileWebhookAuthorizer(a config.AuthorizerConfiguration) (*security.WebhookAuthorizer, error) {
	wc := a.Webhook
	kc, err := webhookClient(wc.ConnectionInfo)
	if err != nil {
		return nil, err
	}
	cel, err := s.authzCompiler()
	if err != nil {
		return nil, err
	}
	var exprs []string
	for _, mc := range wc.MatchConditions {
		exprs = append(exprs, mc.Expression)
	}
	return security.NewWebhookAuthorizer(security.WebhookAuthorizerConfig{
		Name: a.Name, Client: kc, Version: wc.SubjectAccessReviewVersion,
		AuthorizedTTL: wc.AuthorizedTTL.Duration, UnauthorizedTTL: wc.UnauthorizedTTL.Duration, Timeout: wc.Timeout.Duration,
		FailurePolicy: wc.FailurePolicy, MatchConditions: exprs, Compiler: cel, Brand: s.opts.Brand,
		Metrics: s.authzWebhookMetrics(),
	})
}

func (b *builtAuthz) close() {
	for _, w := range b.webhooks {
		w.Close()
	}
}

// startAuthzReload re-reads --authorization-config every interval
// (DefaultAuthzConfigReloadInterval when 0) until ctx ends, then releases
// the webhooks' connections.
func (s *Server) startAuthzReload(ctx context.Context, interval time.Duration) {
	if s.opts.AuthorizationConfigFile == "" {
		context.AfterFunc(ctx, func() { s.authzLive.cur.Load().close() })
		return
	}
	if interval <= 0 {
		interval = DefaultAuthzConfigReloadInterval
	}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				s.authzLive.cur.Load().close()
				return
			case <-t.C:
				_ = s.reloadAuthz()
			}
		}
	}()
}

// reloadAuthz re-reads the file: unchanged bytes or an equal configuration
// are a no-op; a valid new one replaces the chain, anything else keeps
// the old chain, is logged and counted. The same content is tried again
// at the next check.
func (s *Server) reloadAuthz() error {
	l := s.authzLive
	path := s.opts.AuthorizationConfigFile
	l.reloadMu.Lock()
	defer l.reloadMu.Unlock()
	data, err := os.ReadFile(path)
	if err == nil && sha256.Sum256(data) == l.hash {
		return nil
	}
	c, hash, err := s.loadAuthzConfig(path)
	// The apiVersion is spelling: the same authorizers in another
	// version are the same configuration.
	if err == nil && reflect.DeepEqual(c.Authorizers, l.cfg.Authorizers) {
		l.hash = hash
		return nil
	}
	var b *builtAuthz
	if err == nil {
		err = missingAuthzTypes(c, l.startTypes)
	}
	if err == nil {
		b, err = s.authzFromConfig(c, true)
	}
	if err != nil {
		l.record(false)
		s.log.Error("authorization config reload failed, keeping the previous configuration", "path", path, "err", err)
		return err
	}
	l.hash, l.cfg = hash, c
	old := l.cur.Swap(b)
	old.close()
	l.record(true)
	s.log.Info("authorization config reloaded", "path", path, "authorizers", len(c.Authorizers))
	return nil
}

// missingAuthzTypes requires every non-webhook type of the start.
func missingAuthzTypes(c *config.AuthorizationConfiguration, startTypes []string) error {
	var missing []string
	for _, t := range startTypes {
		if !slices.ContainsFunc(c.Authorizers, func(a config.AuthorizerConfiguration) bool { return a.Type == t }) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("%w: missing required types: %v", config.ErrAuthorizationConfig, missing)
	}
	return nil
}

func (l *liveAuthz) record(ok bool) {
	now := time.Now()
	l.statsMu.Lock()
	defer l.statsMu.Unlock()
	if ok {
		l.stats.Success++
		l.stats.LastSuccess = now
	} else {
		l.stats.Failure++
		l.stats.LastFailure = now
	}
}

// AuthorizationConfigReloads returns the counters of
// apiserver_authorization_config_controller_automatic_reloads_total and
// the last reload times (zero without --authorization-config).
func (s *Server) AuthorizationConfigReloads() security.ReloadStats {
	if s.authzLive == nil {
		return security.ReloadStats{}
	}
	s.authzLive.statsMu.Lock()
	defer s.authzLive.statsMu.Unlock()
	return s.authzLive.stats
}

// AuthorizationWebhookMetrics returns the webhook authorizers' counters
// by authorizer name, for /metrics; those of webhooks a reload removed
// stay.
func (s *Server) AuthorizationWebhookMetrics() map[string]security.WebhookAuthzMetrics {
	return s.authzWebhookMetrics().Snapshot()
}

// authzWebhookMetrics is the server's webhook counters, made on first use.
func (s *Server) authzWebhookMetrics() *security.AuthzWebhookMetrics {
	s.authzMetricsOnce.Do(func() { s.authzMetrics = security.NewAuthzWebhookMetrics() })
	return s.authzMetrics
}

// ReloadAuthorizationConfig checks --authorization-config now, as the
// periodic check does, and returns the error that kept the old chain.
func (s *Server) ReloadAuthorizationConfig() error {
	if s.opts.AuthorizationConfigFile == "" {
		return nil
	}
	return s.reloadAuthz()
}

// authorizationModeEnabled reports whether mode's authorizer is in the
// chain the server started with: the --authorization-mode list, or the
// --authorization-config file's types (which a reload cannot add to for
// RBAC, Node and ABAC). The RBAC bootstrap policy runs when RBAC is.
func (s *Server) authorizationModeEnabled(mode string) bool {
	if s.opts.AuthorizationConfigFile == "" {
		return slices.Contains(s.opts.AuthorizationModes, mode)
	}
	return s.authzLive != nil && slices.Contains(s.authzLive.startTypes, mode)
}

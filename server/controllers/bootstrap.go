package controllers

import (
	"context"
	"encoding/base64"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// bootstrapRetryDelay is how long a failed signing or cleaning waits before
// it is tried again; failures are storage errors, rare enough for a fixed
// delay.
const bootstrapRetryDelay = time.Second

// BootstrapTokens names what both bootstrap token controllers read.
type BootstrapTokens struct {
	Source  Source
	Objects Objects
	// Secrets is the descriptor of secrets; tokens live in
	// SystemNamespace and have type TokenType.
	Secrets         *registry.Descriptor
	SystemNamespace string
	TokenType       string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	Log *slog.Logger
}

func (t *BootstrapTokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// isToken reports whether a secret is a bootstrap token secret.
func (t *BootstrapTokens) isToken(s registry.Object) bool {
	typ, _ := s["type"].(string)
	return typ == t.TokenType
}

// secretValue returns a decoded data value of a secret ("" when absent).
func secretValue(s registry.Object, key string) string {
	data, _ := s["data"].(map[string]any)
	v, _ := data[key].(string)
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// BootstrapSigner keeps one detached signature of the kubeconfig in the
// public cluster-info ConfigMap per token that may sign, under
// jws-kubeconfig-<id>, so that a joining client holding a token can trust
// the kubeconfig it reads anonymously. It works when the ConfigMap or a
// secret of the system namespace changes.
type BootstrapSigner struct {
	BootstrapTokens
	// ConfigMaps is the descriptor of config maps; cluster-info lives in
	// PublicNamespace.
	ConfigMaps      *registry.Descriptor
	PublicNamespace string
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *BootstrapSigner) Run(ctx context.Context) {
	// Everything is one piece of work: the ConfigMap's signatures.
	const key = security.ClusterInfoName
	q := newQueue()
	all := func([]bolt.KV) { q.add(key) }
	q.workWhile(ctx, c.Log, bootstrapRetryDelay, func(ctx context.Context, _ string) error { return c.sync(ctx) }, func() {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			follow(ctx, c.Source, c.Secrets.Prefix(c.SystemNamespace), c.Log, all, func(bolt.Event) { q.add(key) })
		}()
		follow(ctx, c.Source, c.ConfigMaps.Prefix(c.PublicNamespace), c.Log, all, func(ev bolt.Event) {
			if _, name, ok := c.ConfigMaps.SplitKey(ev.KV.Key); ok && name == security.ClusterInfoName {
				q.add(key)
			}
		})
		wg.Wait()
	})
}

// sync brings cluster-info's signatures up to date. A missing ConfigMap,
// or one without a kubeconfig, is left alone.
func (c *BootstrapSigner) sync(ctx context.Context) error {
	cm, err := c.Objects.Get(c.ConfigMaps, c.PublicNamespace, security.ClusterInfoName)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if _, ok := c.signed(cm); ok {
		return nil
	}
	_, err = c.Objects.Update(ctx, c.ConfigMaps, c.PublicNamespace, security.ClusterInfoName, "", func(cm registry.Object) registry.Object {
		data, ok := c.signed(cm)
		if ok {
			return nil
		}
		cm["data"] = data
		return cm
	})
	switch apierr.ReasonOf(err) {
	case apierr.ReasonNotFound, apierr.ReasonConflict:
		// Changed or gone meanwhile: its event brings the work back.
		return nil
	}
	if err == nil {
		c.Log.Info("cluster-info signatures updated")
	}
	return err
}

// signed returns cm's data with the signatures it should hold, and
// whether that is what it holds already (also true when there is nothing
// to sign).
func (c *BootstrapSigner) signed(cm registry.Object) (map[string]any, bool) {
	data, _ := cm["data"].(map[string]any)
	kc, ok := data[security.ClusterInfoKubeconfigKey].(string)
	if !ok {
		return nil, true
	}
	want := maps.Clone(data)
	maps.DeleteFunc(want, func(k string, _ any) bool { return strings.HasPrefix(k, security.ClusterInfoJWSPrefix) })
	for id, secret := range c.signingTokens() {
		sig, err := security.SignDetachedJWS([]byte(kc), id, secret)
		if err != nil {
			c.Log.Warn("signing cluster-info", "token", id, "err", err)
			continue
		}
		want[security.ClusterInfoJWSPrefix+id] = sig
	}
	return want, maps.Equal(want, data)
}

// signingTokens returns the id and secret of every token that may sign:
// named for its id, with a secret, unexpired and with the signing usage.
func (c *BootstrapSigner) signingTokens() map[string]string {
	secrets, _, err := c.Objects.List(c.Secrets, c.SystemNamespace)
	if err != nil {
		c.Log.Warn("listing bootstrap tokens", "err", err)
		return nil
	}
	now := c.now()
	out := map[string]string{}
	for _, s := range secrets {
		id, ok := security.ParseBootstrapTokenSecretName(metaString(s, "name"))
		if !ok || !c.isToken(s) || out[id] != "" || secretValue(s, security.BootstrapTokenIDKey) != id {
			continue
		}
		secret := secretValue(s, security.BootstrapTokenSecretKey)
		if _, expired := security.BootstrapTokenExpiration(secretValue(s, security.BootstrapTokenExpirationKey), now); secret == "" || expired {
			continue
		}
		if secretValue(s, security.BootstrapTokenUsagePrefix+security.BootstrapUsageSigning) == "true" {
			out[id] = secret
		}
	}
	return out
}

// TokenCleaner deletes bootstrap token secrets once they expire (an
// unparseable expiration counts as expired); secrets without one are kept.
// A secret is looked at when it is written, and again when its expiration
// comes, by a timer: nothing polls.
type TokenCleaner struct {
	BootstrapTokens
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *TokenCleaner) Run(ctx context.Context) {
	q := newQueue()
	t := newExpiryTimers(q.add)
	defer t.stopAll()
	observe := func(ev bolt.Event) {
		_, name, ok := c.Secrets.SplitKey(ev.KV.Key)
		switch {
		case !ok:
		case ev.Type == bolt.Delete:
			t.cancel(name)
		default:
			q.add(name)
		}
	}
	q.workWhile(ctx, c.Log, bootstrapRetryDelay, func(ctx context.Context, name string) error { return c.sync(ctx, name, t) }, func() {
		follow(ctx, c.Source, c.Secrets.Prefix(c.SystemNamespace), c.Log, asPuts(observe), observe)
	})
}

func (c *TokenCleaner) sync(ctx context.Context, name string, t *expiryTimers) error {
	s, err := c.Objects.Get(c.Secrets, c.SystemNamespace, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		t.cancel(name)
		return nil
	}
	if err != nil {
		return err
	}
	if !c.isToken(s) {
		t.cancel(name)
		return nil
	}
	left, expired := security.BootstrapTokenExpiration(secretValue(s, security.BootstrapTokenExpirationKey), c.now())
	if !expired {
		if left > 0 {
			t.schedule(name, left)
		} else {
			t.cancel(name)
		}
		return nil
	}
	_, err = c.Objects.Delete(ctx, c.Secrets, c.SystemNamespace, name, registry.DeleteOptions{PreconditionUID: metaString(s, "uid")})
	switch apierr.ReasonOf(err) {
	case apierr.ReasonNotFound, apierr.ReasonConflict:
		// Gone or replaced meanwhile; a replacement brings its own event.
		return nil
	}
	if err == nil {
		c.Log.Info("expired bootstrap token deleted", "secret", name)
	}
	return err
}

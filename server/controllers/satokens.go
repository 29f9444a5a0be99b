package controllers

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// Data keys of a service-account token secret.
const (
	tokenKey          = "token"
	tokenCAKey        = "ca.crt"
	tokenNamespaceKey = "namespace"
)

// tokenRetryDelay is how long a token secret whose write failed waits
// before the next attempt; failures are rare (storage errors, a conflict
// lost twice), so a fixed delay keeps it simple.
const tokenRetryDelay = time.Second

// LegacyTokenSigner signs the token of a secret for service account
// ns/name with uid.
type LegacyTokenSigner func(ns, saName, saUID, secretName string) (string, error)

// ServiceAccountTokens fills secrets of the service-account token type
// with a signed token, the CA bundle and the namespace, deletes those
// whose service account is gone (or was recreated with another UID), and
// takes a deleted one's name out of its service account's secrets, as
// upstream's tokens controller does.
type ServiceAccountTokens struct {
	Source          Source
	Objects         Objects
	ServiceAccounts *registry.Descriptor
	Secrets         *registry.Descriptor
	// Type is the secret type; NameAnnotation and UIDAnnotation name the
	// service account a secret is for.
	Type, NameAnnotation, UIDAnnotation string
	// CA is the PEM bundle written as ca.crt.
	CA   []byte
	Sign LegacyTokenSigner
	Log  *slog.Logger
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *ServiceAccountTokens) Run(ctx context.Context) {
	q := newQueue()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A service account's change queues the token secrets naming it.
		follow(ctx, c.Source, c.ServiceAccounts.Prefix(""), c.Log, func([]bolt.KV) {}, func(ev bolt.Event) {
			ns, name, ok := c.ServiceAccounts.SplitKey(ev.KV.Key)
			if !ok {
				return
			}
			secrets, _, err := c.Objects.List(c.Secrets, ns)
			if err != nil {
				c.Log.Warn("listing token secrets", "namespace", ns, "err", err)
				return
			}
			for _, s := range secrets {
				if str(s, "type") == c.Type && annotation(s, c.NameAnnotation) == name {
					q.add(ns + "/" + metaString(s, "name"))
				}
			}
		})
	}()
	onSecret := func(kv bolt.KV) {
		if !bytes.Contains(kv.Value, []byte(c.Type)) {
			return
		}
		if ns, name, ok := c.Secrets.SplitKey(kv.Key); ok {
			q.add(ns + "/" + name)
		}
	}
	onDeleted := func(kv bolt.KV) {
		if !bytes.Contains(kv.Value, []byte(c.Type)) {
			return
		}
		s, err := schema.DecodeStored(kv.Value, c.Secrets.Schema)
		if err != nil || str(s, "type") != c.Type {
			return
		}
		q.add(unrefKey(metaString(s, "namespace"), annotation(s, c.NameAnnotation), annotation(s, c.UIDAnnotation), metaString(s, "name")))
	}
	q.workWhile(ctx, c.Log, tokenRetryDelay, c.work, func() {
		follow(ctx, c.Source, c.Secrets.Prefix(""), c.Log, func(kvs []bolt.KV) {
			for _, kv := range kvs {
				onSecret(kv)
			}
		}, func(ev bolt.Event) {
			if ev.Type == bolt.Put {
				onSecret(ev.KV)
			} else {
				onDeleted(ev.KV)
			}
		})
	})
	<-done
}

// unrefPrefix marks a queue key that takes a deleted secret's name out of
// its service account; no namespace name starts with it.
const unrefPrefix = "!"

// unrefKey is the queue key removing secret from the secrets of service
// account ns/saName, if its UID is still saUID (any UID when empty).
func unrefKey(ns, saName, saUID, secret string) string {
	return unrefPrefix + strings.Join([]string{ns, saName, saUID, secret}, "/")
}

// work does one queued key: a token secret to sync or a deleted one to
// unreference.
func (c *ServiceAccountTokens) work(ctx context.Context, key string) error {
	if rest, ok := strings.CutPrefix(key, unrefPrefix); ok {
		f := strings.SplitN(rest, "/", 4)
		if len(f) != 4 {
			return nil
		}
		return c.unreference(ctx, f[0], f[1], f[2], f[3])
	}
	return c.sync(ctx, key)
}

// unreference removes a deleted token secret from its service account's
// secrets. A secret created again under the name meanwhile keeps it.
func (c *ServiceAccountTokens) unreference(ctx context.Context, ns, saName, saUID, secret string) error {
	if saName == "" {
		return nil
	}
	if _, err := c.Objects.Get(c.Secrets, ns, secret); err == nil {
		return nil
	} else if apierr.ReasonOf(err) != apierr.ReasonNotFound {
		return err
	}
	_, err := c.Objects.Update(ctx, c.ServiceAccounts, ns, saName, "", func(old registry.Object) registry.Object {
		if saUID != "" && metaString(old, "uid") != saUID {
			return nil
		}
		refs, _ := old["secrets"].([]any)
		kept := make([]any, 0, len(refs))
		for _, r := range refs {
			if m, ok := r.(map[string]any); ok && m["name"] == secret {
				continue
			}
			kept = append(kept, r)
		}
		if len(kept) == len(refs) {
			return nil
		}
		if len(kept) == 0 {
			delete(old, "secrets")
		} else {
			old["secrets"] = kept
		}
		return old
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err == nil {
		c.Log.Info("deleted token secret removed from its service account", "namespace", ns, "serviceaccount", saName, "secret", secret)
	}
	return err
}

// sync brings one token secret to what it should be.
func (c *ServiceAccountTokens) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	s, err := c.Objects.Get(c.Secrets, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if str(s, "type") != c.Type || metaString(s, "deletionTimestamp") != "" {
		return nil
	}
	saName, wantUID := annotation(s, c.NameAnnotation), annotation(s, c.UIDAnnotation)
	sa, err := c.Objects.Get(c.ServiceAccounts, ns, saName)
	switch {
	case apierr.ReasonOf(err) == apierr.ReasonNotFound:
		return c.remove(ctx, s)
	case err != nil:
		return err
	case wantUID != "" && wantUID != metaString(sa, "uid"):
		return c.remove(ctx, s)
	}
	saUID := metaString(sa, "uid")
	if !c.needsWork(s, saUID) {
		return nil
	}
	token, err := c.Sign(ns, saName, saUID, name)
	if err != nil {
		return err
	}
	_, err = c.Objects.Update(ctx, c.Secrets, ns, name, "", func(old registry.Object) registry.Object {
		if metaString(old, "uid") != metaString(s, "uid") || annotation(old, c.NameAnnotation) != saName || !c.needsWork(old, saUID) {
			return nil
		}
		data := child(old, "data")
		if len(decoded(data[tokenKey])) == 0 {
			data[tokenKey] = base64.StdEncoding.EncodeToString([]byte(token))
		}
		if len(c.CA) > 0 {
			data[tokenCAKey] = base64.StdEncoding.EncodeToString(c.CA)
		}
		if len(decoded(data[tokenNamespaceKey])) == 0 {
			data[tokenNamespaceKey] = base64.StdEncoding.EncodeToString([]byte(ns))
		}
		child(child(old, "metadata"), "annotations")[c.UIDAnnotation] = saUID
		return old
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err == nil {
		c.Log.Info("service account token filled", "namespace", ns, "secret", name)
	}
	return err
}

// needsWork reports a secret missing its token, namespace, current CA
// bundle or service-account UID annotation.
func (c *ServiceAccountTokens) needsWork(s registry.Object, saUID string) bool {
	data, _ := s["data"].(map[string]any)
	return len(decoded(data[tokenKey])) == 0 || len(decoded(data[tokenNamespaceKey])) == 0 ||
		len(c.CA) > 0 && !bytes.Equal(decoded(data[tokenCAKey]), c.CA) || annotation(s, c.UIDAnnotation) != saUID
}

// remove deletes a token secret whose service account is gone, if it is
// still the same secret.
func (c *ServiceAccountTokens) remove(ctx context.Context, s registry.Object) error {
	ns, name := metaString(s, "namespace"), metaString(s, "name")
	_, err := c.Objects.Delete(ctx, c.Secrets, ns, name, registry.DeleteOptions{PreconditionUID: metaString(s, "uid")})
	if err == nil {
		c.Log.Info("token secret of a deleted service account removed", "namespace", ns, "secret", name)
	}
	if r := apierr.ReasonOf(err); r == apierr.ReasonNotFound || r == apierr.ReasonConflict {
		return nil
	}
	return err
}

func annotation(obj registry.Object, key string) string {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	v, _ := ann[key].(string)
	return v
}

func str(obj registry.Object, key string) string {
	v, _ := obj[key].(string)
	return v
}

// decoded is a secret data value's bytes.
func decoded(v any) []byte {
	s, _ := v.(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

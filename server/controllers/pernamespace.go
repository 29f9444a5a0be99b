package controllers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// ensureRetryDelay is how long a namespace whose object could not be
// written waits before the next attempt; failures are rare (storage
// errors), so a fixed delay keeps it simple.
const ensureRetryDelay = time.Second

// perNamespace keeps one object in every live namespace. A namespace is
// worked when it appears or changes, and when its object changes or goes.
type perNamespace struct {
	src     Source
	objects Objects
	reg     *registry.Registry
	target  *registry.Descriptor
	name    string
	log     *slog.Logger
	// ensure brings the object in a live namespace to what it should be.
	ensure func(ctx context.Context, ns string) error
}

// run works until ctx ends and returns after its goroutines stopped.
func (p *perNamespace) run(ctx context.Context) {
	q := newQueue()
	nsd := p.reg.Namespaces()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		q.work(ctx, p.log, ensureRetryDelay, p.sync)
	}()
	// Namespaces are worked on only once changes to their objects are
	// followed, so that no change after the work goes unseen.
	watching := make(chan struct{})
	go func() {
		defer wg.Done()
		followChanges(ctx, p.src, p.target.Prefix(""), p.log, func(first bool) {
			if first {
				close(watching)
				return
			}
			// Deletions may have been missed: every namespace is checked.
			nss, _, err := p.objects.List(nsd, "")
			if err != nil {
				p.log.Warn("listing namespaces", "err", err)
				return
			}
			for _, ns := range nss {
				q.add(metaString(ns, "name"))
			}
		}, func(ev bolt.Event) {
			if ns, name, ok := p.target.SplitKey(ev.KV.Key); ok && name == p.name {
				q.add(ns)
			}
		})
	}()
	onNamespace := func(kv bolt.KV) {
		if _, name, ok := nsd.SplitKey(kv.Key); ok {
			q.add(name)
		}
	}
	select {
	case <-watching:
	case <-ctx.Done():
		wg.Wait()
		return
	}
	follow(ctx, p.src, nsd.Prefix(""), p.log, func(kvs []bolt.KV) {
		for _, kv := range kvs {
			onNamespace(kv)
		}
	}, func(ev bolt.Event) {
		if ev.Type == bolt.Put {
			onNamespace(ev.KV)
		}
	})
	wg.Wait()
}

// sync ensures the object in namespace ns unless the namespace is gone or
// terminating: content is not created there.
func (p *perNamespace) sync(ctx context.Context, ns string) error {
	obj, err := p.objects.Get(p.reg.Namespaces(), "", ns)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if metaString(obj, "deletionTimestamp") != "" {
		return nil
	}
	err = p.ensure(ctx, ns)
	if terminatingOrGone(err) {
		return nil
	}
	if refused(err) {
		// An immutable ConfigMap, say: retrying cannot help.
		p.log.Warn("namespace default refused", "namespace", ns, "name", p.name, "err", err)
		return nil
	}
	return err
}

// causeNamespaceTerminating is the cause type of a create refused because
// its namespace is being deleted.
const causeNamespaceTerminating = "NamespaceTerminating"

// terminatingOrGone reports an error a create in a namespace that is
// being deleted (or is gone) gets: nothing to retry.
func terminatingOrGone(err error) bool {
	if err == nil {
		return false
	}
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return true
	}
	if d := apierr.FromError(err).Status.Details; d != nil {
		for _, c := range d.Causes {
			if c.Type == causeNamespaceTerminating {
				return true
			}
		}
	}
	return false
}

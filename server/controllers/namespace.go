// Package controllers holds the server's in-process controllers. Each is
// driven by the store's watch, never by polling.
package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/rest"
)

// NamespaceContent is what the namespace controller needs from the server.
type NamespaceContent interface {
	DeleteNamespaceContent(ctx context.Context, ns string) (rest.NamespaceContent, error)
	SetNamespaceConditions(ctx context.Context, name string, c rest.NamespaceContent) error
	FinalizeNamespace(ctx context.Context, name string) error
}

// namespaceRetryDelay is how long a namespace whose cleanup failed waits
// before the next attempt; failures are rare (storage errors), so a fixed
// delay keeps the controller simple.
const namespaceRetryDelay = time.Second

// Namespaces finalizes deleted namespaces: once a namespace is
// terminating it deletes the namespace's content and, when nothing is left,
// removes the server's finalizer so the namespace itself goes away.
type Namespaces struct {
	Store     bolt.Store
	Content   NamespaceContent
	Finalizer string
	Log       *slog.Logger

	mu          sync.Mutex
	terminating map[string]bool
	queue       chan string
	queued      map[string]bool
}

const namespacesPrefix = "/namespaces/"

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *Namespaces) Run(ctx context.Context) {
	c.terminating = map[string]bool{}
	c.queued = map[string]bool{}
	c.queue = make(chan string, 1024)
	for {
		if err := c.runOnce(ctx); err == nil || ctx.Err() != nil {
			return
		} else {
			c.Log.Warn("namespace controller restarting", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(namespaceRetryDelay):
		}
	}
}

// runOnce lists, then watches everything from the list's revision.
func (c *Namespaces) runOnce(ctx context.Context) error {
	res, err := c.Store.List(namespacesPrefix, bolt.ListOptions{})
	if err != nil {
		return err
	}
	for _, kv := range res.Items {
		c.observeNamespace(kv.Key, kv.Value)
	}
	w, err := c.Store.Watch(ctx, "/", res.Revision)
	if err != nil {
		return err
	}
	defer w.Stop()
	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() { defer wg.Done(); c.work(wctx) }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events():
			if !ok {
				if err := w.Err(); err != nil {
					return err
				}
				return errors.New("watch closed")
			}
			if strings.HasPrefix(ev.KV.Key, namespacesPrefix) {
				if ev.Type == bolt.Delete {
					c.forget(strings.TrimPrefix(ev.KV.Key, namespacesPrefix))
				} else {
					c.observeNamespace(ev.KV.Key, ev.KV.Value)
				}
				continue
			}
			if ns := namespaceOfKey(ev.KV.Key); ns != "" && c.isTerminating(ns) {
				c.enqueue(ns)
			}
		}
	}
}

// namespaceOfKey returns the namespace of a namespaced object key
// "/<resource>/<ns>/<name>", or "".
func namespaceOfKey(key string) string {
	parts := strings.SplitN(strings.TrimPrefix(key, "/"), "/", 3)
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}

type nsState struct {
	Metadata struct {
		Name              string `json:"name"`
		DeletionTimestamp string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Finalizers []string `json:"finalizers"`
	} `json:"spec"`
}

func (c *Namespaces) observeNamespace(key string, value []byte) {
	if !bytes.Contains(value, []byte(`"deletionTimestamp":`)) {
		return
	}
	var st nsState
	if err := json.Unmarshal(value, &st); err != nil {
		c.Log.Error("namespace controller: undecodable namespace", "key", key, "err", err)
		return
	}
	mine := false
	for _, f := range st.Spec.Finalizers {
		mine = mine || f == c.Finalizer
	}
	if !mine {
		return
	}
	c.mu.Lock()
	c.terminating[st.Metadata.Name] = true
	c.mu.Unlock()
	c.enqueue(st.Metadata.Name)
}

func (c *Namespaces) isTerminating(ns string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminating[ns]
}

func (c *Namespaces) forget(ns string) {
	c.mu.Lock()
	delete(c.terminating, ns)
	c.mu.Unlock()
}

func (c *Namespaces) enqueue(ns string) {
	c.mu.Lock()
	if c.queued[ns] {
		c.mu.Unlock()
		return
	}
	c.queued[ns] = true
	c.mu.Unlock()
	c.queue <- ns
}

// work finalizes queued namespaces one at a time.
func (c *Namespaces) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ns := <-c.queue:
			c.mu.Lock()
			delete(c.queued, ns)
			c.mu.Unlock()
			if err := c.sync(ctx, ns); err != nil && ctx.Err() == nil {
				c.Log.Warn("namespace cleanup failed; retrying", "namespace", ns, "err", err)
				time.AfterFunc(namespaceRetryDelay, func() {
					if ctx.Err() == nil {
						c.enqueue(ns)
					}
				})
			}
		}
	}
}

func (c *Namespaces) sync(ctx context.Context, ns string) error {
	if !c.isTerminating(ns) {
		return nil
	}
	content, err := c.Content.DeleteNamespaceContent(ctx, ns)
	if err != nil {
		return err
	}
	if err := c.Content.SetNamespaceConditions(ctx, ns, content); err != nil {
		return err
	}
	if !content.Empty() {
		if len(content.Failures) > 0 {
			return errors.New(strings.Join(content.Failures, "; "))
		}
		// Objects waiting for their finalizers; their updates re-queue us.
		return nil
	}
	c.Log.Info("namespace content removed", "namespace", ns)
	return c.Content.FinalizeNamespace(ctx, ns)
}

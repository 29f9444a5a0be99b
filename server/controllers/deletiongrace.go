package controllers

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// graceRetryDelay is how long a removal that failed waits before the next
// attempt; failures are rare (storage errors), so a fixed delay will do.
const graceRetryDelay = time.Second

// DeletionGrace removes objects whose deletion grace period has run out:
// a gracefully deleted pod stays, marked, until the node confirms it is
// stopped, and no node does here. Any object deleted with a grace period
// whose finalizers are all gone is removed once its deletionTimestamp
// passes. One timer per waiting object; nothing polls.
type DeletionGrace struct {
	Source   Source
	Objects  Objects
	Registry *registry.Registry
	Log      *slog.Logger

	timers *expiryTimers
	queue  *queue
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *DeletionGrace) Run(ctx context.Context) {
	c.queue = newQueue()
	c.timers = newExpiryTimers(c.queue.add)
	defer c.timers.stopAll()
	c.queue.workWhile(ctx, c.Log, graceRetryDelay, c.sync, func() {
		follow(ctx, c.Source, "/", c.Log, asPuts(c.observe), c.observe)
	})
}

// deletionMark is in every stored object that is being deleted, at its
// deletionTimestamp: objects without it are passed over unparsed, and a
// match elsewhere (a label, say) is settled by parsing the metadata. It
// leaves out the member name's opening quote: a search starting with a
// byte as common in JSON as a quote falls back to a far slower scan.
var deletionMark = []byte(`deletionTimestamp":`)

// observe sets or clears the timer of the object an event is about.
func (c *DeletionGrace) observe(ev bolt.Event) {
	if ev.Type == bolt.Delete || !bytes.Contains(ev.KV.Value, deletionMark) {
		c.timers.cancel(ev.KV.Key)
		return
	}
	m, err := parseMeta(ev.KV.Value)
	if err != nil {
		c.timers.cancel(ev.KV.Key)
		return
	}
	c.timers.scheduleAt(ev.KV.Key, graceEnd(m))
}

// graceEnd is when an object marked for deletion is due to go, or zero
// when a grace period does not decide it (finalizers hold it, or it was
// deleted without one).
func graceEnd(m objectMeta) time.Time {
	if !m.deleting() || len(m.Finalizers) > 0 || m.DeletionGracePeriodSeconds == nil || *m.DeletionGracePeriodSeconds <= 0 {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339, m.DeletionTimestamp)
	if err != nil {
		return time.Time{}
	}
	return at
}

// sync removes the object at key if its grace period is over.
func (c *DeletionGrace) sync(ctx context.Context, key string) error {
	d, ns, name := c.Registry.ByKey(key)
	if d == nil {
		return nil
	}
	obj, err := c.Objects.Get(d, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	m := objectMeta{
		DeletionTimestamp: metaString(obj, "deletionTimestamp"),
		Finalizers:        registry.Strings(child(obj, "metadata")["finalizers"]),
	}
	if g, ok := child(obj, "metadata")["deletionGracePeriodSeconds"].(int64); ok {
		m.DeletionGracePeriodSeconds = &g
	}
	end := graceEnd(m)
	if end.IsZero() || (d.Strategy.PendingFinalizers != nil && d.Strategy.PendingFinalizers(obj)) {
		return nil
	}
	if wait := time.Until(end); wait > 0 {
		// Timestamps have whole seconds: the timer may fire early.
		c.timers.scheduleAt(key, end)
		return nil
	}
	zero := int64(0)
	_, err = c.Objects.Delete(ctx, d, ns, name, registry.DeleteOptions{GracePeriodSeconds: &zero, PreconditionUID: metaString(obj, "uid")})
	switch apierr.ReasonOf(err) {
	case apierr.ReasonNotFound, apierr.ReasonConflict:
		// Gone already, or replaced by a new object of the same name.
		return nil
	}
	if err == nil {
		c.Log.Debug("deletion grace period over; object removed", "key", key)
	}
	if refused(err) {
		c.Log.Warn("removal after the deletion grace period refused", "key", key, "err", err)
		return nil
	}
	return err
}

package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// The tracking ConfigMap's one key and its date's form, upstream's.
const (
	trackingSinceKey    = "since"
	trackingDateFormat  = "2006-01-02"
	trackingCreateEvery = 30 * time.Minute
	trackingRetryDelay  = time.Second
)

// LegacyTokenTracking keeps the ConfigMap that says since when the use
// of legacy (secret-based) service-account tokens is tracked, as
// upstream's API server does: the server marks each such token's secret
// with the day it was last used, and a cleaner may only trust those
// marks from this date on. A missing ConfigMap is created with today's
// date (UTC), at most once every 30 minutes, as upstream rate-limits it;
// one whose date does not parse gets today's.
type LegacyTokenTracking struct {
	Source     Source
	Objects    Objects
	ConfigMaps *registry.Descriptor
	// Namespace and Name are the ConfigMap's.
	Namespace, Name string
	// After, when set, holds back the writes until it is closed: they are
	// no part of a start.
	After <-chan struct{}
	Log   *slog.Logger

	queue *queue
	// retry brings the ConfigMap back to the queue when a creation may
	// be tried again.
	retry *expiryTimers
	// created is when this server last created the ConfigMap; only the
	// queue's one worker reads and writes it.
	created time.Time
}

// Run works until ctx ends and returns once its goroutines have stopped.
func (c *LegacyTokenTracking) Run(ctx context.Context) {
	c.queue = newQueue()
	c.retry = newExpiryTimers(c.queue.add)
	defer c.retry.stopAll()
	key := c.ConfigMaps.Key(c.Namespace, c.Name)
	c.queue.workWhile(ctx, c.Log, trackingRetryDelay, c.sync, func() {
		follow(ctx, c.Source, c.ConfigMaps.Prefix(c.Namespace), c.Log,
			func([]bolt.KV) { c.queue.add(c.Name) },
			func(ev bolt.Event) {
				if ev.KV.Key == key {
					c.queue.add(c.Name)
				}
			})
	})
}

func (c *LegacyTokenTracking) sync(ctx context.Context, _ string) error {
	if !waitClosed(ctx, c.After) {
		return nil
	}
	now := time.Now().UTC()
	today := now.Format(trackingDateFormat)
	cur, err := c.Objects.Get(c.ConfigMaps, c.Namespace, c.Name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		if wait := c.created.Add(trackingCreateEvery).Sub(now); !c.created.IsZero() && wait > 0 {
			c.retry.schedule(c.Name, wait)
			return nil
		}
		err := c.Objects.CreateOnly(ctx, c.ConfigMaps, registry.Object{"apiVersion": "v1", "kind": c.ConfigMaps.Kind,
			"metadata": map[string]any{"namespace": c.Namespace, "name": c.Name},
			"data":     map[string]any{trackingSinceKey: today}})
		switch {
		case err == nil:
			c.created = now
			return nil
		case apierr.ReasonOf(err) == apierr.ReasonAlreadyExists:
			return nil
		default:
			return fmt.Errorf("creating ConfigMap %s/%s: %w", c.Namespace, c.Name, err)
		}
	}
	if err != nil {
		return err
	}
	if validTrackingDate(cur) {
		return nil
	}
	_, err = c.Objects.Update(ctx, c.ConfigMaps, c.Namespace, c.Name, "", func(old registry.Object) registry.Object {
		if validTrackingDate(old) {
			return nil
		}
		child(old, "data")[trackingSinceKey] = today
		return old
	})
	if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound && apierr.ReasonOf(err) != apierr.ReasonConflict {
		return fmt.Errorf("updating ConfigMap %s/%s: %w", c.Namespace, c.Name, err)
	}
	return nil
}

// validTrackingDate reports whether cm's date parses.
func validTrackingDate(cm registry.Object) bool {
	data, _ := cm["data"].(map[string]any)
	since, _ := data[trackingSinceKey].(string)
	_, err := time.Parse(trackingDateFormat, since)
	return err == nil
}

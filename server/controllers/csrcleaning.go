package controllers

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// How long certificate signing requests are kept, upstream's: a decided
// request an hour after its decision (an approved one once issued), a
// pending one a day after its creation, an issued one no longer than its
// certificate is valid.
const (
	decidedRequestTTL = time.Hour
	pendingRequestTTL = 24 * time.Hour
)

// CSRCleaning deletes CertificateSigningRequests once they are of no more
// use, as upstream's controller manager does (it looks every hour; here
// one timer per request fires when its time comes).
type CSRCleaning struct {
	Source   Source
	Objects  Objects
	Requests *registry.Descriptor
	Log      *slog.Logger

	timers *expiryTimers
	queue  *queue
}

// Run works until ctx ends and returns once its goroutines have stopped.
func (c *CSRCleaning) Run(ctx context.Context) {
	c.queue = newQueue()
	c.timers = newExpiryTimers(c.queue.add)
	defer c.timers.stopAll()
	c.queue.workWhile(ctx, c.Log, csrSigningRetryDelay, c.sync, func() {
		follow(ctx, c.Source, c.Requests.Prefix(""), c.Log, asPuts(c.observe), c.observe)
	})
}

// cleanupAt is when the request may go, zero when never: the earliest of
// its approval (once issued), denial or failure plus decidedRequestTTL,
// its creation plus pendingRequestTTL while it has no condition, and the
// end of its issued certificate. Times that do not parse (a condition
// without lastUpdateTime) count for nothing, as upstream's.
func cleanupAt(r *signingRequest) time.Time {
	var at time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	parse := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}
		}
		return t
	}
	issued := len(r.Status.Certificate) > 0
	approved := false
	for _, cond := range r.Status.Conditions {
		switch cond.Type {
		case "Approved":
			approved = true
			if issued {
				if t := parse(cond.LastUpdateTime); !t.IsZero() {
					consider(t.Add(decidedRequestTTL))
				}
			}
		case "Denied", "Failed":
			if t := parse(cond.LastUpdateTime); !t.IsZero() {
				consider(t.Add(decidedRequestTTL))
			}
		}
	}
	if len(r.Status.Conditions) == 0 {
		if t := parse(r.Metadata.CreationTimestamp); !t.IsZero() {
			consider(t.Add(pendingRequestTTL))
		}
	}
	if approved && issued {
		if block, _ := pem.Decode(r.Status.Certificate); block != nil {
			if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
				consider(cert.NotAfter)
			}
		}
	}
	return at
}

// observe sets the timer of the request of ev, or clears it.
func (c *CSRCleaning) observe(ev bolt.Event) {
	r, name, err := signingRequestEvent(ev)
	switch {
	case err != nil:
		c.Log.Warn("certificate signing request cleaning", "err", err)
	case r == nil && name != "":
		c.timers.cancel(name)
	case r != nil:
		c.timers.scheduleAt(name, cleanupAt(r))
	}
}

// sync deletes the request called name if its time has come.
func (c *CSRCleaning) sync(ctx context.Context, name string) error {
	r, err := readSigningRequest(c.Objects, c.Requests, name)
	if err != nil || r == nil {
		return err
	}
	at := cleanupAt(r)
	if at.IsZero() {
		return nil
	}
	if time.Until(at) > 0 {
		// Timestamps have whole seconds: the timer may fire early.
		c.timers.scheduleAt(name, at)
		return nil
	}
	_, err = c.Objects.Delete(ctx, c.Requests, "", name, registry.DeleteOptions{PreconditionUID: r.Metadata.UID})
	switch apierr.ReasonOf(err) {
	case apierr.ReasonNotFound, apierr.ReasonConflict:
		return nil
	}
	if err == nil {
		c.Log.Debug("certificate signing request cleaned up", "name", name)
	}
	return err
}

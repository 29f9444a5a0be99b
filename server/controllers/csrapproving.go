package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"platd/bolt"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// CSRApproving approves kubelets' requests for client certificates whose
// requester may have them, as upstream's controller manager does for a
// kubelet's TLS bootstrap: a request to the kubelet client signer that
// follows that signer's rules (security.KubeletClientRequest), neither
// approved nor denied nor issued yet, is approved with reason
// AutoApproved when its requester may create
// certificatesigningrequests/selfnodeclient (asking for its own name) or
// certificatesigningrequests/nodeclient in the certificates group. The
// default policy binds neither: a cluster grants them (kubeadm binds
// nodeclient to the bootstrap token group, selfnodeclient to nodes). A
// request not allowed stays pending for a person to decide, and is asked
// about again with upstream's back-off (approvalRetryFirst, doubling up
// to approvalRetryMax), so that a permission granted later takes effect.
type CSRApproving struct {
	Source     Source
	Objects    Objects
	Requests   *registry.Descriptor
	Authorizer security.Authorizer
	// Signer is the kubelet client signer's name.
	Signer string
	Log    *slog.Logger

	queue   *queue
	retries *expiryTimers

	mu       sync.Mutex
	attempts map[string]int // refused approvals per pending request
}

// Upstream's controller requeues a request whose requester was refused
// with its per-item exponential back-off.
const (
	approvalRetryFirst = 200 * time.Millisecond
	approvalRetryMax   = 1000 * time.Second
)

// approvalRetryDelay is the wait after the n-th refusal (n ≥ 1).
func approvalRetryDelay(n int) time.Duration {
	d := approvalRetryFirst
	for i := 1; i < n && d < approvalRetryMax; i++ {
		d *= 2
	}
	return min(d, approvalRetryMax)
}

// Run works until ctx ends and returns once its goroutines have stopped.
func (c *CSRApproving) Run(ctx context.Context) {
	c.queue = newQueue()
	c.retries = newExpiryTimers(c.queue.add)
	c.attempts = map[string]int{}
	defer c.retries.stopAll()
	c.queue.workWhile(ctx, c.Log, csrSigningRetryDelay, c.sync, func() {
		follow(ctx, c.Source, c.Requests.Prefix(""), c.Log, asPuts(c.observe), c.observe)
	})
}

// undecided reports whether r is for the kubelet client signer, has no
// certificate, and is neither approved nor denied.
func (c *CSRApproving) undecided(r *signingRequest) bool {
	if r.Spec.SignerName != c.Signer || len(r.Status.Certificate) > 0 {
		return false
	}
	for _, cond := range r.Status.Conditions {
		if cond.Type == "Approved" || cond.Type == "Denied" {
			return false
		}
	}
	return true
}

func (c *CSRApproving) observe(ev bolt.Event) {
	r, name, err := signingRequestEvent(ev)
	switch {
	case err != nil:
		c.Log.Warn("certificate approving", "err", err)
	case r == nil && name != "":
		c.settled(name)
	case r != nil && c.undecided(r):
		c.queue.add(name)
	}
}

// settled forgets the refusals of the request called name: it was
// decided, approved here, or deleted.
func (c *CSRApproving) settled(name string) {
	c.retries.cancel(name)
	c.mu.Lock()
	delete(c.attempts, name)
	c.mu.Unlock()
}

// refused schedules the next look at the request called name, whose
// requester may not have it yet.
func (c *CSRApproving) refused(name string) {
	c.mu.Lock()
	c.attempts[name]++
	n := c.attempts[name]
	c.mu.Unlock()
	c.retries.schedule(name, approvalRetryDelay(n))
}

// sync approves the request called name when it is a kubelet's its
// requester may have.
func (c *CSRApproving) sync(ctx context.Context, name string) error {
	r, err := readSigningRequest(c.Objects, c.Requests, name)
	if err != nil {
		return err
	}
	if r == nil || !c.undecided(r) {
		c.settled(name)
		return nil
	}
	req, err := r.x509Request()
	if err != nil {
		c.settled(name)
		return err
	}
	if security.KubeletClientRequest(req, r.Spec.Usages) != nil {
		c.settled(name)
		return nil
	}
	// Upstream's recognizers, in order: a kubelet renewing its own
	// certificate, then any node client request.
	type recognizer struct {
		subresource, message string
		applies              bool
	}
	for _, rec := range []recognizer{
		{"selfnodeclient", "Auto approving self kubelet client certificate after SubjectAccessReview.", r.Spec.Username == req.Subject.CommonName},
		{"nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview.", true},
	} {
		if !rec.applies {
			continue
		}
		user := &security.User{Name: r.Spec.Username, UID: r.Spec.UID, Groups: r.Spec.Groups, Extra: r.Spec.Extra}
		d, _, err := c.Authorizer.Authorize(ctx, security.Attributes{User: user, Verb: "create", APIGroup: c.Requests.Group, APIVersion: "*",
			Resource: c.Requests.Resource, Subresource: rec.subresource, ResourceRequest: true})
		if err != nil {
			return fmt.Errorf("CertificateSigningRequest %s: asking whether its requester may have it: %w", name, err)
		}
		if d != security.DecisionAllow {
			continue
		}
		_, err = c.Objects.Update(ctx, c.Requests, "", name, "approval", func(cur registry.Object) registry.Object {
			if r, err := decodeSigningRequest(cur); err != nil || !c.undecided(r) {
				return nil
			}
			status := child(cur, "status")
			conds, _ := status["conditions"].([]any)
			status["conditions"] = append(conds, map[string]any{"type": "Approved", "status": "True", "reason": "AutoApproved", "message": rec.message})
			return cur
		})
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
			return fmt.Errorf("error updating approval for csr: %w", err)
		}
		c.settled(name)
		return nil
	}
	c.Log.Debug("certificate approving: the requester may not have the kubelet client certificate it asks for; asking again later", "csr", name, "user", r.Spec.Username)
	c.refused(name)
	return nil
}

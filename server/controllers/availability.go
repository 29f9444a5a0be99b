package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// availabilityRetryDelay is how long a failed status write waits before
// the next attempt; failures are rare (storage errors), so a fixed delay
// will do.
const availabilityRetryDelay = time.Second

// availabilityResync is how often every APIService that names a service
// is checked again without a change, upstream's resync period: an
// extension server that stops answering is noticed within it.
const availabilityResync = 30 * time.Second

// An APIService whose extension server fails the discovery check is
// checked again after a delay that starts at availabilityBackoffBase and
// doubles with each failure in a row up to availabilityBackoffMax,
// upstream's rate limits: what makes a server reachable again (its
// network) is not seen by any watch, so it is asked soon, yet a server
// that stays down is not asked in a hot loop.
const (
	availabilityBackoffBase = 5 * time.Millisecond
	availabilityBackoffMax  = 30 * time.Second
)

// APIServiceAvailability keeps the Available condition of every
// APIService that names a service, with upstream's checks in upstream's
// order, reasons and messages: the service exists; a ClusterIP service
// listens on the port; its endpoints have an address with that port's
// name; the extension server answers its group-version's discovery
// document (CheckDiscovery). An APIService without a service is marked
// Available by its own write (builtin.apiServices).
//
// The checks run again whenever the APIService, its service or its
// endpoints change, and every availabilityResync.
type APIServiceAvailability struct {
	Source                           Source
	Objects                          Objects
	APIServices, Services, Endpoints *registry.Descriptor
	// CheckDiscovery is the last check: a discovery request to the
	// extension server of the APIService called name, with spec. Its
	// error's text is the condition's message.
	CheckDiscovery func(ctx context.Context, name string, spec map[string]any) error
	// Forget, when set, is told of an APIService that is gone or no
	// longer names a service.
	Forget func(name string)
	Log    *slog.Logger
	// Now is the clock of the conditions' transition times (nil:
	// time.Now).
	Now func() time.Time

	mu sync.Mutex
	// backing maps each APIService that names a service to the service's
	// "namespace/name".
	backing map[string]string
	// failures counts the discovery checks in a row each APIService
	// failed, for its next check's delay.
	failures map[string]int
	queue    *queue
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *APIServiceAvailability) Run(ctx context.Context) {
	c.backing = map[string]string{}
	c.failures = map[string]int{}
	c.queue = newQueue()
	c.queue.workWhile(ctx, c.Log, availabilityRetryDelay, c.sync, func() {
		var wg sync.WaitGroup
		for _, d := range []*registry.Descriptor{c.Services, c.Endpoints} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				followChanges(ctx, c.Source, d.Prefix(""), c.Log, c.restarted, func(ev bolt.Event) { c.backendChanged(d, ev) })
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.resync(ctx)
		}()
		follow(ctx, c.Source, c.APIServices.Prefix(""), c.Log, c.relisted, c.observe)
		wg.Wait()
	})
}

// resync queues every APIService that names a service each
// availabilityResync until ctx ends.
func (c *APIServiceAvailability) resync(ctx context.Context) {
	t := time.NewTicker(availabilityResync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.restarted(false)
		}
	}
}

// storedAPIService is the part of a stored APIService read here.
type storedAPIService struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Service *struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"service"`
	} `json:"spec"`
}

// relisted replaces what is known of every APIService and queues each
// that names a service.
func (c *APIServiceAvailability) relisted(kvs []bolt.KV) {
	backing := map[string]string{}
	for _, kv := range kvs {
		if s, ok := c.decode(kv); ok && s.Spec.Service != nil {
			backing[s.Metadata.Name] = s.Spec.Service.Namespace + "/" + s.Spec.Service.Name
		}
	}
	c.mu.Lock()
	old := c.backing
	c.backing = backing
	for name := range c.failures {
		if _, ok := backing[name]; !ok {
			delete(c.failures, name)
		}
	}
	c.mu.Unlock()
	for name := range old {
		if _, ok := backing[name]; !ok && c.Forget != nil {
			c.Forget(name)
		}
	}
	c.restarted(false)
}

// restarted queues every APIService that names a service: a watch that
// starts over may have missed changes.
func (c *APIServiceAvailability) restarted(bool) {
	c.mu.Lock()
	names := make([]string, 0, len(c.backing))
	for name := range c.backing {
		names = append(names, name)
	}
	c.mu.Unlock()
	slices.Sort(names)
	for _, n := range names {
		c.queue.add(n)
	}
}

// observe keeps what is known of the APIService of ev and queues it.
func (c *APIServiceAvailability) observe(ev bolt.Event) {
	kv := ev.KV
	if ev.Type != bolt.Put && ev.Prev != nil {
		kv = *ev.Prev
	}
	s, ok := c.decode(kv)
	if !ok {
		return
	}
	name := s.Metadata.Name
	c.mu.Lock()
	if ev.Type == bolt.Put && s.Spec.Service != nil {
		c.backing[name] = s.Spec.Service.Namespace + "/" + s.Spec.Service.Name
	} else {
		delete(c.backing, name)
		delete(c.failures, name)
	}
	_, queue := c.backing[name]
	c.mu.Unlock()
	if queue {
		c.queue.add(name)
	} else if c.Forget != nil {
		c.Forget(name)
	}
}

// backendChanged queues the APIServices backed by the service or the
// endpoints of ev (descriptor d).
func (c *APIServiceAvailability) backendChanged(d *registry.Descriptor, ev bolt.Event) {
	ns, name, ok := d.SplitKey(ev.KV.Key)
	if !ok {
		return
	}
	key := ns + "/" + name
	c.mu.Lock()
	var names []string
	for as, backend := range c.backing {
		if backend == key {
			names = append(names, as)
		}
	}
	c.mu.Unlock()
	slices.Sort(names)
	for _, n := range names {
		c.queue.add(n)
	}
}

func (c *APIServiceAvailability) decode(kv bolt.KV) (storedAPIService, bool) {
	var s storedAPIService
	if err := json.Unmarshal(kv.Value, &s); err != nil {
		c.Log.Warn("availability: unreadable APIService", "key", kv.Key, "err", err)
		return s, false
	}
	return s, true
}

// condition is an Available condition without its transition time.
type condition struct{ status, reason, message string }

// sync writes the Available condition of the APIService called name when
// it differs from what the checks find.
func (c *APIServiceAvailability) sync(ctx context.Context, name string) error {
	as, err := c.Objects.Get(c.APIServices, "", name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	spec := child(as, "spec")
	if _, ok := spec["service"].(map[string]any); !ok {
		return nil
	}
	want := c.check(ctx, name, spec)
	c.retryFailedCheck(ctx, name, want.reason == reasonFailedDiscovery)
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	_, err = c.Objects.Update(ctx, c.APIServices, "", name, "status", func(cur registry.Object) registry.Object {
		if _, remote := child(cur, "spec")["service"].(map[string]any); !remote || !setAvailable(cur, want, now()) {
			return nil
		}
		return cur
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("APIService %s: writing its availability: %w", name, err)
	}
	return nil
}

// reasonFailedDiscovery is the reason of an APIService whose extension
// server did not answer the discovery check.
const reasonFailedDiscovery = "FailedDiscoveryCheck"

// retryFailedCheck queues the APIService called name again after its
// backoff when its discovery check failed, and forgets its failures when
// it did not.
func (c *APIServiceAvailability) retryFailedCheck(ctx context.Context, name string, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !failed {
		delete(c.failures, name)
		return
	}
	delay := availabilityBackoff(c.failures[name])
	c.failures[name]++
	time.AfterFunc(delay, func() {
		if ctx.Err() == nil {
			c.queue.add(name)
		}
	})
}

// availabilityBackoff is the delay before the next check of an
// APIService whose discovery check failed n times in a row before this
// failure.
func availabilityBackoff(n int) time.Duration {
	if n >= 30 {
		return availabilityBackoffMax
	}
	return min(availabilityBackoffBase<<n, availabilityBackoffMax)
}

// check runs upstream's checks of the service spec.service names.
func (c *APIServiceAvailability) check(ctx context.Context, name string, spec map[string]any) condition {
	ref := child(spec, "service")
	ns, svcName := str(ref, "namespace"), str(ref, "name")
	port, _ := ref["port"].(int64) // decoded objects hold integers as int64
	svc, err := c.Objects.Get(c.Services, ns, svcName)
	switch {
	case apierr.ReasonOf(err) == apierr.ReasonNotFound:
		return condition{"False", "ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", svcName, ns)}
	case err != nil:
		return condition{"Unknown", "ServiceAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", svcName, ns, err)}
	}
	svcSpec := child(svc, "spec")
	if t := str(svcSpec, "type"); t == "" || t == "ClusterIP" {
		portName, found := servicePort(svcSpec, port)
		if !found {
			return condition{"False", "ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", svcName, ns, port)}
		}
		ep, err := c.Objects.Get(c.Endpoints, ns, svcName)
		switch {
		case apierr.ReasonOf(err) == apierr.ReasonNotFound:
			return condition{"False", "EndpointsNotFound", fmt.Sprintf("cannot find endpoints for service/%s in %q", svcName, ns)}
		case err != nil:
			return condition{"Unknown", "EndpointsAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", svcName, ns, err)}
		}
		if !hasEndpoint(ep, portName) {
			return condition{"False", "MissingEndpoints", fmt.Sprintf("endpoints for service/%s in %q have no addresses with port name %q", svcName, ns, portName)}
		}
	}
	if err := c.CheckDiscovery(ctx, name, spec); err != nil {
		return condition{"False", reasonFailedDiscovery, err.Error()}
	}
	return condition{"True", "Passed", "all checks passed"}
}

// servicePort returns the name of the service port numbered port, and
// whether the service has one.
func servicePort(svcSpec map[string]any, port int64) (string, bool) {
	for _, p := range list(svcSpec["ports"]) {
		pm, _ := p.(map[string]any)
		if n, _ := pm["port"].(int64); n == port {
			return str(pm, "name"), true
		}
	}
	return "", false
}

// hasEndpoint reports whether a subset of ep has an address and a port
// called portName.
func hasEndpoint(ep registry.Object, portName string) bool {
	for _, s := range list(ep["subsets"]) {
		sm, _ := s.(map[string]any)
		if len(list(sm["addresses"])) == 0 {
			continue
		}
		for _, p := range list(sm["ports"]) {
			if pm, _ := p.(map[string]any); str(pm, "name") == portName {
				return true
			}
		}
	}
	return false
}

// setAvailable sets the Available condition of an APIService to c, as
// upstream sets a condition: the transition time changes with the
// status only. It reports whether anything changed.
func setAvailable(obj registry.Object, c condition, now time.Time) bool {
	status := child(obj, "status")
	conds := list(status["conditions"])
	for _, v := range conds {
		cond, _ := v.(map[string]any)
		if str(cond, "type") != "Available" {
			continue
		}
		if str(cond, "status") == c.status && str(cond, "reason") == c.reason && str(cond, "message") == c.message {
			return false
		}
		if str(cond, "status") != c.status {
			cond["lastTransitionTime"] = now.UTC().Format(time.RFC3339)
		}
		cond["status"], cond["reason"], cond["message"] = c.status, c.reason, c.message
		return true
	}
	status["conditions"] = append(conds, map[string]any{
		"type": "Available", "status": c.status, "lastTransitionTime": now.UTC().Format(time.RFC3339),
		"reason": c.reason, "message": c.message,
	})
	return true
}

package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/rbacpolicy"
	"platd/server/registry"
	"platd/server/rest"
	"platd/server/selector"
)

// AggregationManager is the field manager of the aggregation controller's
// writes, upstream's name.
const AggregationManager = "clusterrole-aggregation-controller"

// aggregationRetryDelay is how long a failed write waits before the next
// attempt; failures are rare (storage errors), so a fixed delay will do.
const aggregationRetryDelay = time.Second

// ClusterRoleAggregation fills the rules of every cluster role that has an
// aggregationRule with the rules of the cluster roles its selectors match:
// per selector in order, the matching roles sorted by name, itself
// skipped, each rule once. Any change of any cluster role re-examines
// every aggregated one, as upstream does; a role whose rules already are
// the union is not written.
type ClusterRoleAggregation struct {
	Source       Source
	Objects      Objects
	ClusterRoles *registry.Descriptor
	Log          *slog.Logger

	mu    sync.Mutex
	roles map[string]*aggregationRole // by name
	queue *queue
}

// aggregationRole is what the controller keeps of a cluster role.
type aggregationRole struct {
	labels map[string]string
	// selectors are nil for a role without aggregationRule.
	selectors   []selector.Labels
	badSelector error
	rules       []any
}

// storedClusterRole is the part of a stored cluster role read here.
type storedClusterRole struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	AggregationRule *struct {
		ClusterRoleSelectors []map[string]any `json:"clusterRoleSelectors"`
	} `json:"aggregationRule"`
	Rules []any `json:"rules"`
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *ClusterRoleAggregation) Run(ctx context.Context) {
	c.roles = map[string]*aggregationRole{}
	c.queue = newQueue()
	ctx = rest.WithManager(ctx, AggregationManager)
	c.queue.workWhile(ctx, c.Log, aggregationRetryDelay, c.sync, func() {
		follow(ctx, c.Source, c.ClusterRoles.Prefix(""), c.Log, c.relisted, c.observe)
	})
}

// relisted replaces every role at once, so that no sync sees half a list,
// and queues every aggregated role.
func (c *ClusterRoleAggregation) relisted(kvs []bolt.KV) {
	roles := make(map[string]*aggregationRole, len(kvs))
	for _, kv := range kvs {
		if s, ok := c.decode(kv); ok {
			roles[s.Metadata.Name] = parseAggregationRole(s)
		}
	}
	c.mu.Lock()
	c.roles = roles
	c.mu.Unlock()
	c.enqueueAggregated()
}

// observe keeps the role of ev current and queues every aggregated role.
func (c *ClusterRoleAggregation) observe(ev bolt.Event) {
	kv := ev.KV
	if ev.Type != bolt.Put && ev.Prev != nil {
		kv = *ev.Prev
	}
	s, ok := c.decode(kv)
	if !ok {
		return
	}
	c.mu.Lock()
	if ev.Type == bolt.Put {
		c.roles[s.Metadata.Name] = parseAggregationRole(s)
	} else {
		delete(c.roles, s.Metadata.Name)
	}
	c.mu.Unlock()
	c.enqueueAggregated()
}

func (c *ClusterRoleAggregation) decode(kv bolt.KV) (storedClusterRole, bool) {
	var s storedClusterRole
	if err := json.Unmarshal(kv.Value, &s); err != nil {
		c.Log.Warn("aggregation: unreadable cluster role", "key", kv.Key, "err", err)
		return s, false
	}
	return s, true
}

func parseAggregationRole(s storedClusterRole) *aggregationRole {
	r := &aggregationRole{labels: s.Metadata.Labels, rules: s.Rules}
	if s.AggregationRule == nil {
		return r
	}
	r.selectors = []selector.Labels{}
	for _, sel := range s.AggregationRule.ClusterRoleSelectors {
		l, err := selector.FromLabelSelector(sel)
		if err != nil {
			r.badSelector = err
			continue
		}
		r.selectors = append(r.selectors, l)
	}
	return r
}

func (c *ClusterRoleAggregation) enqueueAggregated() {
	c.mu.Lock()
	var names []string
	for name, r := range c.roles {
		if r.selectors != nil {
			names = append(names, name)
		}
	}
	c.mu.Unlock()
	slices.Sort(names)
	for _, n := range names {
		c.queue.add(n)
	}
}

// aggregate returns the union of rules for the named role, and whether it
// is an aggregated role at all.
func (c *ClusterRoleAggregation) aggregate(name string) ([]any, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.roles[name]
	if r == nil || r.selectors == nil {
		return nil, false, nil
	}
	if r.badSelector != nil {
		return nil, true, fmt.Errorf("cluster role %s: %w", name, r.badSelector)
	}
	names := slices.Sorted(maps.Keys(c.roles))
	out := []any{}
	var seen []rbacpolicy.Rule
	for _, sel := range r.selectors {
		for _, n := range names {
			o := c.roles[n]
			if n == name || !sel.Matches(o.labels) {
				continue
			}
			for _, v := range o.rules {
				m, _ := v.(map[string]any)
				rule := rbacpolicy.RuleOf(m)
				if slices.ContainsFunc(seen, func(s rbacpolicy.Rule) bool { return reflect.DeepEqual(s, rule) }) {
					continue
				}
				seen = append(seen, rule)
				out = append(out, copyValue(v))
			}
		}
	}
	return out, true, nil
}

// sync writes the union of rules into one aggregated role when its rules
// differ.
func (c *ClusterRoleAggregation) sync(ctx context.Context, name string) error {
	rules, ok, err := c.aggregate(name)
	if !ok || err != nil {
		return err
	}
	_, err = c.Objects.Update(ctx, c.ClusterRoles, "", name, "", func(cur registry.Object) registry.Object {
		if cur["aggregationRule"] == nil || sameRules(cur["rules"], rules) {
			return nil
		}
		cur["rules"] = rules
		return cur
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("aggregating cluster role %s: %w", name, err)
	}
	return nil
}

// sameRules compares rule lists by meaning: an absent list is an empty
// one, and a rule's absent list an empty one.
func sameRules(have any, want []any) bool {
	h, _ := have.([]any)
	if len(h) != len(want) {
		return false
	}
	for i := range h {
		a, _ := h[i].(map[string]any)
		b, _ := want[i].(map[string]any)
		if !reflect.DeepEqual(rbacpolicy.RuleOf(a), rbacpolicy.RuleOf(b)) {
			return false
		}
	}
	return true
}

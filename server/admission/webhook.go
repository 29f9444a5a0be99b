package admission

import (
	"sort"
	"sync"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/cel"
	"platd/server/registry"
	"platd/server/selector"
	"platd/server/webhookclient"
)

// The side-effect classes and reinvocation policies, as upstream names
// them.
const (
	sideEffectsNone         = "None"
	sideEffectsNoneOnDryRun = "NoneOnDryRun"
	reinvocationIfNeeded    = "IfNeeded"
)

// Webhook defaults of admissionregistration v1.
const (
	// defaultWebhookTimeout is a webhook's timeoutSeconds when unset.
	defaultWebhookTimeout = 10 * time.Second
)

// The admission phases a webhook configuration serves.
const (
	phaseValidating = 0
	phaseMutating   = 1
)

// Webhooks holds the validating and mutating admission webhooks of the
// stored webhook configurations, parsed (once per configuration change,
// never per request) with an HTTP client each, and calls them: Validate
// as upstream's ValidatingAdmissionWebhook plugin, Mutate as its
// MutatingAdmissionWebhook. All methods are safe for concurrent use.
type Webhooks struct {
	reg    *registry.Registry
	lookup registry.Lookup
	authz  security.Authorizer
	brand  config.Brand
	equiv  equivalences

	mu sync.RWMutex
	// configs are the configurations of each phase by name.
	configs [2]map[string]*webhookConfig
	// sorted are the webhooks of each phase in calling order (the
	// configurations by name, the webhooks in their order); nil when
	// stale.
	sorted [2][]*webhook
}

// webhookConfig is one Validating- or MutatingWebhookConfiguration.
type webhookConfig struct {
	name  string
	hooks []*webhook
}

// webhook is one webhook of a configuration, parsed. Immutable once
// built.
type webhook struct {
	name string
	// config is the configuration's name.
	config string
	match  *matchResources
	// conditions are the webhook's match conditions with its failure
	// policy; nil without.
	conditions *policy
	// failOpen is failurePolicy Ignore.
	failOpen    bool
	sideEffects string
	timeout     time.Duration
	versions    []string
	reinvoke    bool
	client      *webhookclient.Client
}

// NewWebhooks returns an empty set of webhooks. reg lists the
// equivalent resources; lookup reads namespaces; authz backs the match
// conditions' authorizer (nil: every check errs).
func NewWebhooks(reg *registry.Registry, lookup registry.Lookup, authz security.Authorizer, brand config.Brand) *Webhooks {
	return &Webhooks{reg: reg, lookup: lookup, authz: authz, brand: brand, equiv: equivalences{reg: reg},
		configs: [2]map[string]*webhookConfig{{}, {}}}
}

// SetConfig adds or replaces a webhook configuration (mutating or
// validating), given in its decoded form.
func (w *Webhooks) SetConfig(mutating bool, obj registry.Object) {
	c := parseWebhookConfig(obj)
	ph := phaseOf(mutating)
	w.mu.Lock()
	old := w.configs[ph][c.name]
	w.configs[ph][c.name] = c
	w.sorted[ph] = nil
	w.mu.Unlock()
	old.close()
}

// CloseIdle releases the idle connections of every webhook's client, so
// that a stopped server leaves no connection behind; a later call opens
// new ones.
func (w *Webhooks) CloseIdle() {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, configs := range w.configs {
		for _, c := range configs {
			c.close()
		}
	}
}

// DeleteConfig removes a webhook configuration.
func (w *Webhooks) DeleteConfig(mutating bool, name string) {
	ph := phaseOf(mutating)
	w.mu.Lock()
	old := w.configs[ph][name]
	delete(w.configs[ph], name)
	w.sorted[ph] = nil
	w.mu.Unlock()
	old.close()
}

// ReplaceConfigs makes objs the only configurations of the phase.
func (w *Webhooks) ReplaceConfigs(mutating bool, objs []registry.Object) {
	next := make(map[string]*webhookConfig, len(objs))
	for _, o := range objs {
		c := parseWebhookConfig(o)
		next[c.name] = c
	}
	ph := phaseOf(mutating)
	w.mu.Lock()
	old := w.configs[ph]
	w.configs[ph] = next
	w.sorted[ph] = nil
	w.mu.Unlock()
	for _, c := range old {
		c.close()
	}
}

// ValidatingEmpty reports whether no validating webhook is configured:
// Validate then admits every request.
func (w *Webhooks) ValidatingEmpty() bool { return len(w.hooks(phaseValidating)) == 0 }

// MutatingEmpty reports whether no mutating webhook is configured:
// Mutate then changes nothing.
func (w *Webhooks) MutatingEmpty() bool { return len(w.hooks(phaseMutating)) == 0 }

// MayChange reports whether Mutate may change an object: whether a
// mutating webhook is configured.
func (w *Webhooks) MayChange() bool { return !w.MutatingEmpty() }

// hooks returns the webhooks of a phase in calling order.
func (w *Webhooks) hooks(ph int) []*webhook {
	w.mu.RLock()
	hooks := w.sorted[ph]
	w.mu.RUnlock()
	if hooks != nil {
		return hooks
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sorted[ph] != nil {
		return w.sorted[ph]
	}
	names := make([]string, 0, len(w.configs[ph]))
	for name := range w.configs[ph] {
		names = append(names, name)
	}
	sort.Strings(names)
	hooks = []*webhook{}
	for _, name := range names {
		hooks = append(hooks, w.configs[ph][name].hooks...)
	}
	w.sorted[ph] = hooks
	return hooks
}

func phaseOf(mutating bool) int {
	if mutating {
		return phaseMutating
	}
	return phaseValidating
}

// close releases the idle connections of a replaced configuration's
// clients.
func (c *webhookConfig) close() {
	if c == nil {
		return
	}
	for _, h := range c.hooks {
		h.client.CloseIdle()
	}
}

// parseWebhookConfig reads a webhook configuration in its decoded form
// (defaulted as stored).
func parseWebhookConfig(obj registry.Object) *webhookConfig {
	c := &webhookConfig{name: str(mapAt(obj, "metadata"), "name")}
	for _, h := range mapsOf(obj["webhooks"]) {
		c.hooks = append(c.hooks, parseWebhook(c.name, h))
	}
	return c
}

func parseWebhook(config string, h map[string]any) *webhook {
	wh := &webhook{
		name: str(h, "name"), config: config,
		failOpen:    str(h, "failurePolicy") == failurePolicyIgnore,
		sideEffects: str(h, "sideEffects"),
		timeout:     defaultWebhookTimeout,
		versions:    stringsAt(h, "admissionReviewVersions"),
		reinvoke:    str(h, "reinvocationPolicy") == reinvocationIfNeeded,
	}
	if _, ok := h["timeoutSeconds"]; ok {
		wh.timeout = time.Duration(registry.Int64(h["timeoutSeconds"])) * time.Second
	}
	mr := &matchResources{exact: str(h, "matchPolicy") == matchPolicyExact, rules: parseRules(h, "rules")}
	if sel, ok := h["namespaceSelector"].(map[string]any); ok {
		mr.nsSelector, mr.nsErr = selector.FromLabelSelector(sel)
	}
	if sel, ok := h["objectSelector"].(map[string]any); ok {
		mr.objSelector, mr.objErr = selector.FromLabelSelector(sel)
	}
	wh.match = mr
	if conds := mapsOf(h["matchConditions"]); len(conds) > 0 {
		fp := failurePolicyFail
		if wh.failOpen {
			fp = failurePolicyIgnore
		}
		pol := &policy{name: wh.name, failurePolicy: fp}
		c := cel.NewAdmissionCompiler(false)
		decls := cel.AdmissionDecls{Authorizer: true}
		for _, mc := range conds {
			pol.conditions = append(pol.conditions, namedCondition{name: str(mc, "name"), prog: c.Program(str(mc, "expression"), cel.ResultBool, decls)})
		}
		wh.conditions = pol
	}
	wh.client = webhookclient.New(mapAt(h, "clientConfig"))
	return wh
}

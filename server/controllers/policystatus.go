package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/cel"
	"platd/server/jsonschema"
	"platd/server/openapi"
	"platd/server/registry"
	"platd/server/rest"
)

// PolicyStatusManager is the field manager of the type-checking results,
// upstream's.
const PolicyStatusManager = "validatingadmissionpolicy-status"

// maxTypesToCheck bounds the kinds one resource rule of a policy adds to
// its check, as upstream's checker does.
const maxTypesToCheck = 10

// policyStatusRetryDelay is how long a failed status write waits before
// the next attempt (storage errors, a conflict lost ten times).
const policyStatusRetryDelay = time.Second

// Applier writes an object as a server-side apply by the manager ctx
// names (rest.Handler).
type Applier interface {
	Apply(ctx context.Context, d *registry.Descriptor, ns, name, sub string, config registry.Object, force bool) (registry.Object, error)
}

// PolicyTypeChecking keeps the status of every ValidatingAdmissionPolicy
// as upstream's policy status controller does: once per generation it
// type-checks each validation's expression and messageExpression with
// object typed by the schema of each kind the policy's resource rules
// name exactly (no wildcards, no subresources; ten kinds a rule at
// most), and applies status.observedGeneration and status.typeChecking
// (the warnings, empty when none) as PolicyStatusManager. Rules that do
// not compile for a kind are reported, not refused: admission itself
// compiles them with object dyn.
type PolicyTypeChecking struct {
	Source   Source
	Objects  Objects
	Applier  Applier
	Policies *registry.Descriptor
	// Kind is the kind a served group, version and resource holds, ""
	// when none.
	Kind func(group, version, resource string) string
	// Schemas returns a resolver of the schemas of the kinds served now.
	Schemas func() openapi.KindSchemas
	Log     *slog.Logger

	queue *queue
}

// Run works until ctx ends and returns once its goroutines have stopped.
func (c *PolicyTypeChecking) Run(ctx context.Context) {
	ctx = rest.WithManager(ctx, PolicyStatusManager)
	c.queue = newQueue()
	c.queue.workWhile(ctx, c.Log, policyStatusRetryDelay, c.sync, func() {
		follow(ctx, c.Source, c.Policies.Prefix(""), c.Log, asPuts(c.observe), c.observe)
	})
}

// checkedPolicy is the part of a ValidatingAdmissionPolicy the check
// reads.
type checkedPolicy struct {
	Metadata struct {
		Name       string `json:"name"`
		Generation int64  `json:"generation"`
	} `json:"metadata"`
	Spec struct {
		ParamKind *struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		} `json:"paramKind"`
		MatchConstraints *struct {
			ResourceRules []struct {
				APIGroups   []string `json:"apiGroups"`
				APIVersions []string `json:"apiVersions"`
				Resources   []string `json:"resources"`
			} `json:"resourceRules"`
		} `json:"matchConstraints"`
		Variables []struct {
			Name       string `json:"name"`
			Expression string `json:"expression"`
		} `json:"variables"`
		Validations []struct {
			Expression        string `json:"expression"`
			MessageExpression string `json:"messageExpression"`
		} `json:"validations"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration int64 `json:"observedGeneration"`
	} `json:"status"`
}

// outdated reports whether the policy's status is of an older generation.
func (p *checkedPolicy) outdated() bool { return p.Metadata.Generation > p.Status.ObservedGeneration }

// observe queues a policy whose status is not of its generation.
func (c *PolicyTypeChecking) observe(ev bolt.Event) {
	if ev.Type != bolt.Put {
		return
	}
	var p checkedPolicy
	if err := json.Unmarshal(ev.KV.Value, &p); err != nil {
		c.Log.Warn("policy status: unreadable ValidatingAdmissionPolicy", "key", ev.KV.Key, "err", err)
		return
	}
	if p.outdated() {
		c.queue.add(p.Metadata.Name)
	}
}

// sync checks the policy called name and applies the result, unless its
// status is of its generation already or it is gone.
func (c *PolicyTypeChecking) sync(ctx context.Context, name string) error {
	obj, err := c.Objects.Get(c.Policies, "", name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy %s: %w", name, err)
	}
	var p checkedPolicy
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy %s: %w", name, err)
	}
	if !p.outdated() {
		return nil
	}
	typeChecking := map[string]any{}
	if warnings := c.check(&p); len(warnings) > 0 {
		typeChecking["expressionWarnings"] = warnings
	}
	config := registry.Object{
		"metadata": map[string]any{"name": name},
		"status":   map[string]any{"observedGeneration": p.Metadata.Generation, "typeChecking": typeChecking},
	}
	_, err = c.Applier.Apply(ctx, c.Policies, "", name, "status", config, true)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy %s: writing its type checking: %w", name, err)
	}
	return nil
}

// gvk is a group, version and kind.
type gvk struct{ group, version, kind string }

// String spells a kind as upstream's warnings do.
func (k gvk) String() string { return k.group + "/" + k.version + ", Kind=" + k.kind }

// checkedKind is a kind with its schema.
type checkedKind struct {
	gvk
	schema *jsonschema.Props
}

// check returns the policy's expression warnings, in upstream's order
// and words: per validation, its expression's then its
// messageExpression's, each listing the kinds it fails for with the
// compiler's issues.
func (c *PolicyTypeChecking) check(p *checkedPolicy) []any {
	schemas := c.Schemas()
	var kinds []checkedKind
	for _, k := range c.kindsToCheck(p) {
		s, err := schemas(k.group, k.version, k.kind)
		if err != nil {
			if !errors.Is(err, openapi.ErrSchemaNotFound) {
				c.Log.Warn("policy status: reading a schema", "policy", p.Metadata.Name, "kind", k.String(), "err", err)
			}
			continue
		}
		kinds = append(kinds, checkedKind{k, s})
	}
	if len(kinds) == 0 {
		return nil
	}
	var params *jsonschema.Props
	var paramKind string
	hasParams := false
	if pk := p.Spec.ParamKind; pk != nil {
		if group, version, ok := parseGroupVersion(pk.APIVersion); ok {
			hasParams, paramKind = true, pk.Kind
			params, _ = schemas(group, version, pk.Kind)
		}
	}

	// One checker per kind; each expression's results gather per kind.
	vals := p.Spec.Validations
	exprs, msgs := make([][]string, len(vals)), make([][]string, len(vals))
	for _, k := range kinds {
		tc, err := cel.NewPolicyTypeCheck(k.schema, k.kind, params, paramKind, hasParams)
		if err != nil {
			c.Log.Warn("policy status: type checking", "policy", p.Metadata.Name, "kind", k.String(), "err", err)
			continue
		}
		for _, v := range p.Spec.Variables {
			tc.Variable(v.Name, v.Expression)
		}
		for i, v := range vals {
			if iss := tc.Check(v.Expression); iss != "" {
				exprs[i] = append(exprs[i], k.String()+": "+iss+"\n")
			}
			if v.MessageExpression == "" {
				continue
			}
			if iss := tc.Check(v.MessageExpression); iss != "" {
				msgs[i] = append(msgs[i], k.String()+": "+iss+"\n")
			}
		}
	}
	var warnings []any
	warn := func(field string, results []string) {
		if len(results) > 0 {
			warnings = append(warnings, map[string]any{"fieldRef": field, "warning": strings.Join(results, "\n")})
		}
	}
	for i := range vals {
		warn(fmt.Sprintf("spec.validations[%d].expression", i), exprs[i])
		warn(fmt.Sprintf("spec.validations[%d].messageExpression", i), msgs[i])
	}
	return warnings
}

// kindsToCheck resolves the policy's resource rules to the kinds they
// name, sorted by group, version and kind, as upstream's checker does: a
// rule with a wildcard group or version is skipped, wildcard and
// subresource entries are left out, and one rule adds ten kinds at most
// (counting each resolution, repeated or not) before the search stops.
func (c *PolicyTypeChecking) kindsToCheck(p *checkedPolicy) []gvk {
	mc := p.Spec.MatchConstraints
	if mc == nil {
		return nil
	}
	seen := map[gvk]bool{}
	var out []gvk
	sorted := func() []gvk {
		slices.SortFunc(out, func(a, b gvk) int {
			if c := strings.Compare(a.group, b.group); c != 0 {
				return c
			}
			if c := strings.Compare(a.version, b.version); c != 0 {
				return c
			}
			return strings.Compare(a.kind, b.kind)
		})
		return out
	}
	for _, rule := range mc.ResourceRules {
		groups, versions := exactly(rule.APIGroups), exactly(rule.APIVersions)
		var resources []string
		for _, r := range rule.Resources {
			if !strings.ContainsAny(r, "*/") {
				resources = append(resources, r)
			}
		}
		if len(groups) == 0 || len(versions) == 0 || len(resources) == 0 {
			continue
		}
		slices.Sort(resources)
		count := 0
		for _, g := range groups {
			for _, v := range versions {
				for _, r := range resources {
					kind := c.Kind(g, v, r)
					if kind == "" {
						continue
					}
					k := gvk{g, v, kind}
					if !seen[k] {
						seen[k] = true
						out = append(out, k)
					}
					if count++; count == maxTypesToCheck {
						return sorted()
					}
				}
			}
		}
	}
	return sorted()
}

// exactly is a sorted copy of names, nil when any is a wildcard.
func exactly(names []string) []string {
	for _, n := range names {
		if strings.Contains(n, "*") {
			return nil
		}
	}
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// parseGroupVersion splits an apiVersion ("v1", "group/version"); ok is
// false for a malformed one.
func parseGroupVersion(apiVersion string) (group, version string, ok bool) {
	if apiVersion == "" {
		return "", "", false
	}
	switch parts := strings.Split(apiVersion, "/"); len(parts) {
	case 1:
		return "", parts[0], true
	case 2:
		return parts[0], parts[1], true
	}
	return "", "", false
}

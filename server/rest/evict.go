package rest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/selector"
)

// An eviction deletes a pod unless that would take more of its pods than
// the pod's disruption budget allows, as upstream's eviction subresource:
// a pod that is not running, or is going already, goes at once; else its
// budget (at most one may select it) must allow a disruption, which the
// eviction takes from the budget's status before the pod goes. An evicted
// pod is marked with the DisruptionTarget condition before it is deleted.

// Limits and texts of budgeted evictions, as upstream's.
const (
	// maxDisruptedPods is how many evictions a budget may record that its
	// controller has not confirmed yet: past it evictions are refused.
	maxDisruptedPods = 2000
	// budgetConflictRetry is the retry hint of an eviction that raced
	// its budget's controller.
	budgetConflictRetry = 10
	// budgetCause is the cause reason of a refusal by a budget.
	budgetCause       = "DisruptionBudget"
	budgetRefusal     = "Cannot evict pod as it would violate the pod's disruption budget."
	multipleBudgets   = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
	alwaysAllowPolicy = "AlwaysAllow"
)

// Pod facts an eviction reads.
const (
	podSucceeded = "Succeeded"
	podFailed    = "Failed"
	podPending   = "Pending"
)

// serveEvict serves pods/eviction: the pod is deleted with the eviction's
// delete options, within its disruption budget.
func (h *Handler) serveEvict(w http.ResponseWriter, r *http.Request, s *scope) {
	sr := s.d.Subresource(s.sub)
	out, wo, ev, err := h.beginAction(r, "policy/v1", "Eviction", sr.AlsoAccepts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if ev, err = h.mutateAction(r.Context(), w, s, ev, "policy/v1", "Eviction", wo); err != nil {
		h.writeError(w, r, err)
		return
	}
	if metaString(ev, "name") != s.name {
		h.writeError(w, r, apierr.BadRequest("name in URL does not match name in Eviction object"))
		return
	}
	o := &deleteOptions{}
	if do, ok := ev["deleteOptions"].(map[string]any); ok {
		if g, ok := do["gracePeriodSeconds"].(int64); ok {
			o.GracePeriodSeconds = &g
		}
		if pc, ok := do["preconditions"].(map[string]any); ok {
			o.Preconditions = &precond{}
			if uid, ok := pc["uid"].(string); ok {
				o.Preconditions.UID = &uid
			}
			if rv, ok := pc["resourceVersion"].(string); ok {
				o.Preconditions.ResourceVersion = &rv
			}
		}
		if p, ok := do["propagationPolicy"].(string); ok {
			o.PropagationPolicy = &p
		}
		o.DryRun = registry.Strings(do["dryRun"])
	}
	// The eviction's own dryRun counts as the request's, as upstream:
	// kubectl drain --dry-run=server sends only that.
	dryRun := wo.dryRun
	if len(o.DryRun) > 0 {
		if _, err := parseDryRun(url.Values{"dryRun": o.DryRun}); err != nil {
			h.writeError(w, r, h.optionsInvalid(kindDeleteOptions, err))
			return
		}
		dryRun = true
	}
	if err := h.admitAction(r.Context(), w, s, s.name, ev, "policy/v1", "Eviction", wo, dryRun); err != nil {
		h.writeError(w, r, err)
		return
	}
	// As upstream, the eviction deletes the pod without admitting the
	// deletion again.
	pods := &scope{d: s.d, info: s.info, ns: s.ns, admittedElsewhere: true}
	if err := h.evict(r.Context(), pods, sr.Budgets, s.name, o, dryRun); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeStatus(w, r, out, http.StatusCreated, successStatus(http.StatusCreated))
}

// evict evicts the pod called name within the budgets of budgets' resource
// (nil: none).
func (h *Handler) evict(ctx context.Context, pods *scope, budgets *registry.Descriptor, name string, o *deleteOptions, dryRun bool) error {
	d := pods.d
	pinned := o.Preconditions != nil && o.Preconditions.ResourceVersion != nil
	var pod Object
	var podRV string
	// A pod no budget guards goes at once; a race with another writer is
	// run again unless the caller named the version to delete.
	for attempt := 1; ; attempt++ {
		kv, err := h.store.Get(d.Key(pods.ns, name))
		if err != nil {
			return objectErr(pods, name, err)
		}
		if pod, err = decodeStored(d, kv.Value); err != nil {
			return apierr.InternalError(err)
		}
		podRV = strconv.FormatInt(kv.ModRevision, 10)
		phase := pathString(pod, "status.phase")
		deleting := metaString(pod, "deletionTimestamp") != ""
		if phase != podSucceeded && phase != podFailed && phase != podPending && !deleting {
			break
		}
		opts := o
		if phase == podPending && !deleting && !pinned {
			// The pod must not start running before it goes.
			opts = withResourceVersion(o, podRV)
		}
		err = h.disruptAndDelete(ctx, pods, name, opts, dryRun)
		if err == nil || pinned || attempt >= maxUpdateAttempts || apierr.ReasonOf(err) != apierr.ReasonConflict {
			return err
		}
	}
	var matched []Object
	if budgets != nil {
		var err error
		if matched, err = h.podBudgets(budgets, pods.ns, pod); err != nil {
			return err
		}
	}
	if len(matched) > 1 {
		return apierr.New(http.StatusInternalServerError, apierr.ReasonUnknown, multipleBudgets, nil)
	}
	// unready says the pod goes without taking a disruption: it does not
	// count as healthy, so its budget loses nothing, as long as the pod
	// is still the version read here.
	unready := false
	budget := ""
	if len(matched) == 1 {
		b := matched[0]
		budget = metaString(b, "name")
		if !podReady(pod) {
			unready = pathString(b, "spec.unhealthyPodEvictionPolicy") == alwaysAllowPolicy ||
				pathInt(b, "status.currentHealthy") >= pathInt(b, "status.desiredHealthy") && pathInt(b, "status.desiredHealthy") > 0
		}
		if !unready {
			if err := h.takeDisruption(ctx, budgets, pods.ns, budget, name, dryRun); err != nil {
				return err
			}
		}
	}
	opts := o
	if unready {
		opts = withResourceVersion(o, podRV)
	}
	err := h.disruptAndDelete(ctx, pods, name, opts, dryRun)
	if err != nil && unready && !pinned && apierr.ReasonOf(err) == apierr.ReasonConflict {
		// The pod changed since; the client is asked to try again.
		return budgetInProgress(budget)
	}
	return err
}

// pathString and pathInt read a string and an integer at a dotted path;
// anything else reads as "" and 0.
func pathString(obj Object, path string) string { s, _ := getPath(obj, path).(string); return s }
func pathInt(obj Object, path string) int64     { n, _ := getPath(obj, path).(int64); return n }

// withResourceVersion is o with its resourceVersion precondition set to rv.
func withResourceVersion(o *deleteOptions, rv string) *deleteOptions {
	c := *o
	p := precond{}
	if o.Preconditions != nil {
		p = *o.Preconditions
	}
	p.ResourceVersion = &rv
	c.Preconditions = &p
	return &c
}

// podReady reports whether a pod's Ready condition is True: what a budget
// counts as healthy.
func podReady(pod Object) bool {
	for _, c := range asList(getPath(pod, "status.conditions")) {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// podBudgets returns the budgets in namespace ns that select pod: a
// budget whose selector is missing or cannot be read selects none, an
// empty one every pod.
func (h *Handler) podBudgets(budgets *registry.Descriptor, ns string, pod Object) ([]Object, error) {
	s := &scope{d: budgets, ns: ns}
	res, err := h.store.List(s.prefix(), bolt.ListOptions{})
	if err != nil {
		return nil, h.toStatus(&storeFailure{s: s, op: opList, err: err})
	}
	labels := stringMap(meta(pod, false), "labels")
	var out []Object
	for _, kv := range res.Items {
		b, err := decodeStored(budgets, kv.Value)
		if err != nil {
			return nil, apierr.InternalError(err)
		}
		spec, _ := b["spec"].(map[string]any)
		sel, ok := spec["selector"].(map[string]any)
		if !ok {
			continue
		}
		ls, err := selector.FromLabelSelector(sel)
		if err != nil || !ls.MatchesAny(labels) {
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

// takeDisruption takes one disruption from the budget called name for the
// pod called pod: the budget's status then allows one fewer and records
// the pod as disrupted, written with the version read, again on a race.
// A budget that allows none refuses the eviction.
func (h *Handler) takeDisruption(ctx context.Context, budgets *registry.Descriptor, ns, name, pod string, dryRun bool) error {
	s := &scope{d: budgets, ns: ns, name: name, sub: "status", manager: h.inProcessManager(ctx)}
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(s.key())
		if err != nil {
			return objectErr(s, name, err)
		}
		old, err := decodeStored(budgets, kv.Value)
		if err != nil {
			return apierr.InternalError(err)
		}
		next := deepCopyObject(old)
		if err := h.disrupt(budgets, next, pod); err != nil || dryRun {
			return err
		}
		prepared, err := h.prepareUpdate(ctx, s, next, old)
		if err != nil {
			return err
		}
		if _, retry, err := h.commitUpdate(ctx, s, kv, prepared, false); !retry {
			return err
		}
	}
	return apierr.Timeout(fmt.Sprintf("couldn't update PodDisruptionBudget %q due to conflicts", name), budgetConflictRetry)
}

// disrupt takes one disruption for pod from the budget b, or says why
// the budget refuses it.
func (h *Handler) disrupt(budgets *registry.Descriptor, b Object, pod string) error {
	name := metaString(b, "name")
	status := childMap(b, "status")
	if pathInt(b, "status.observedGeneration") < pathInt(b, "metadata.generation") {
		return budgetInProgress(name)
	}
	forbidden := func(why string) error {
		return apierr.NewForbidden(budgets.Group, budgets.Singular, name,
			fmt.Sprintf("%s.%s %q is forbidden: %s", budgets.Singular, budgets.Group, name, why))
	}
	allowed := pathInt(b, "status.disruptionsAllowed")
	if allowed < 0 {
		return forbidden("pdb disruptions allowed is negative")
	}
	disrupted, _ := status["disruptedPods"].(map[string]any)
	if len(disrupted) > maxDisruptedPods {
		return forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller")
	}
	if allowed == 0 {
		return apierr.TooManyRequests(budgetRefusal, 0, apierr.Cause{Type: budgetCause, Message: fmt.Sprintf(
			"The disruption budget %s needs %d healthy pods and has %d currently", name,
			pathInt(b, "status.desiredHealthy"), pathInt(b, "status.currentHealthy"))})
	}
	allowed--
	status["disruptionsAllowed"] = allowed
	now := timestamp(h.now())
	if allowed == 0 {
		setStatusCondition(status, map[string]any{
			"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": "",
			"observedGeneration": pathInt(b, "status.observedGeneration"),
		}, now)
	}
	if disrupted == nil {
		disrupted = map[string]any{}
		status["disruptedPods"] = disrupted
	}
	disrupted[pod] = now
	return nil
}

// budgetInProgress refuses an eviction while the budget called name is
// not yet settled by its controller.
func budgetInProgress(name string) error {
	return apierr.TooManyRequests(budgetRefusal, budgetConflictRetry, apierr.Cause{Type: budgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", name)})
}

// setStatusCondition sets cond, a condition of the meta/v1 Condition
// shape, in status.conditions as upstream's SetStatusCondition: a new one
// is added with its transition time now; an existing one takes cond's
// status (moving its transition time to now when that changes), reason,
// message and observed generation.
func setStatusCondition(status, cond map[string]any, now string) {
	conds := asList(status["conditions"])
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m == nil || m["type"] != cond["type"] {
			continue
		}
		if m["status"] != cond["status"] {
			m["status"] = cond["status"]
			m["lastTransitionTime"] = now
		}
		for _, f := range []string{"reason", "message", "observedGeneration"} {
			m[f] = cond[f]
		}
		return
	}
	cond["lastTransitionTime"] = now
	status["conditions"] = append(conds, cond)
}

// disruptAndDelete marks the pod called name as a target of disruption
// (the DisruptionTarget condition) and deletes it with o, as upstream's
// eviction does; o's preconditions hold for the mark too, and a
// resourceVersion precondition moves on to the marked pod. A dry run
// marks nothing.
func (h *Handler) disruptAndDelete(ctx context.Context, pods *scope, name string, o *deleteOptions, dryRun bool) error {
	if !dryRun {
		rv, err := h.markDisruptionTarget(ctx, pods, name, o.Preconditions)
		if err != nil {
			return err
		}
		if o.Preconditions != nil && o.Preconditions.ResourceVersion != nil {
			o = withResourceVersion(o, rv)
		}
	}
	_, err := h.deleteObject(ctx, pods, pods.ns, name, o, dryRun)
	return err
}

// markDisruptionTarget sets the pod's DisruptionTarget condition, checking
// p as the deletion would, and returns the pod's resourceVersion after.
func (h *Handler) markDisruptionTarget(ctx context.Context, pods *scope, name string, p *precond) (string, error) {
	d := pods.d
	key := d.Key(pods.ns, name)
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(key)
		if err != nil {
			return "", objectErr(pods, name, err)
		}
		pod, err := decodeStored(d, kv.Value)
		if err != nil {
			return "", apierr.InternalError(err)
		}
		rv := strconv.FormatInt(kv.ModRevision, 10)
		if p != nil {
			if uid := metaString(pod, "uid"); p.UID != nil && *p.UID != "" && *p.UID != uid {
				return "", preconditionFailed(d, name, "UID", *p.UID, uid, "The object might have been deleted and then recreated")
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != rv {
				return "", preconditionFailed(d, name, "ResourceVersion", *p.ResourceVersion, rv, "The object might have been modified")
			}
		}
		updateCondition(childMap(pod, "status"), map[string]any{
			"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting",
		}, timestamp(h.now()))
		enc, err := encodeStored(d, pod)
		if err != nil {
			return "", err
		}
		if equalApartFromRV(enc, kv.Value) {
			return rv, nil
		}
		next, err := h.store.Update(ctx, key, kv.ModRevision, enc)
		if lostRace(err) {
			continue
		}
		if err != nil {
			return "", objectErr(pods, name, err)
		}
		return strconv.FormatInt(next.ModRevision, 10), nil
	}
	return "", apierr.ConflictModified(d.Group, d.Resource, name)
}

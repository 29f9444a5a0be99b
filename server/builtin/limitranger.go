package builtin

import (
	"context"
	"fmt"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// limitRanger is upstream's LimitRanger admission plugin: the containers
// of a new pod take the default requests and limits of the LimitRanges of
// its namespace, and a new pod, or a claim created or updated, must keep
// to their minimums, maximums and limit-to-request ratios. Pod updates
// are left alone: their containers' resources cannot change.
type limitRanger struct {
	// ranges is the LimitRange descriptor.
	ranges *registry.Descriptor
	// annotation is the pod annotation that records the defaults set.
	annotation string
}

func newLimitRanger(b config.Brand, ranges *registry.Descriptor) limitRanger {
	return limitRanger{ranges: ranges, annotation: b.Label("limit-ranger")}
}

// limitRangerNote begins the annotation of a pod given defaults.
const limitRangerNote = "LimitRanger plugin set: "

// rangesOf lists the LimitRanges of obj's namespace, in name order.
func (lr limitRanger) rangesOf(l registry.Lookup, obj registry.Object) ([]registry.Object, error) {
	list, _, err := l.List(lr.ranges, str(obj, "metadata", "namespace"))
	if err != nil {
		return nil, &registry.Denial{Reason: err.Error()}
	}
	return list, nil
}

// admitPod gives the containers and init containers of a new pod the
// default requests and limits of each LimitRange in turn, for the
// resources they do not name, and records what it set in the pod's
// annotation (the last LimitRange that set anything has the word). The
// pod's QoS class follows its new resources.
func (lr limitRanger) admitPod(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	ranges, err := lr.rangesOf(l, obj)
	if err != nil {
		return err
	}
	spec := mapOf(obj["spec"])
	changed := false
	for _, r := range ranges {
		requests, limits := containerDefaults(r)
		if len(requests) == 0 && len(limits) == 0 {
			continue
		}
		var notes []string
		for _, c := range mapsOf(spec["containers"]) {
			notes = append(notes, mergeContainerDefaults(c, "container", requests, limits)...)
		}
		for _, c := range mapsOf(spec["initContainers"]) {
			notes = append(notes, mergeContainerDefaults(c, "init container", requests, limits)...)
		}
		if len(notes) > 0 {
			child(child(obj, "metadata"), "annotations")[lr.annotation] = limitRangerNote + strings.Join(notes, "; ")
			changed = true
		}
	}
	if changed {
		child(obj, "status")["qosClass"] = podQOSClass(spec)
	}
	return nil
}

// containerDefaults returns the default requests and limits of a
// LimitRange's Container items.
func containerDefaults(r registry.Object) (requests, limits map[string]any) {
	requests, limits = map[string]any{}, map[string]any{}
	for _, item := range mapsOf(mapAt(r, "spec")["limits"]) {
		if strOf(item["type"]) != limitTypeContainer {
			continue
		}
		for k, v := range mapOf(item["defaultRequest"]) {
			requests[k] = v
		}
		for k, v := range mapOf(item["default"]) {
			limits[k] = v
		}
	}
	return requests, limits
}

// mergeContainerDefaults sets the requests and limits a container does not
// name, and returns the notes that say so: "cpu, memory request for
// container web", then "cpu limit for container web". kind is the kind of
// container the notes name.
func mergeContainerDefaults(c map[string]any, kind string, requests, limits map[string]any) []string {
	var notes []string
	name := strOf(c["name"])
	for _, set := range []struct {
		member, word string
		from         map[string]any
	}{{"requests", "request", requests}, {"limits", "limit", limits}} {
		var added []string
		for _, k := range sortedKeys(set.from) {
			if _, ok := mapAt(c, "resources", set.member)[k]; ok {
				continue
			}
			child(child(c, "resources"), set.member)[k] = set.from[k]
			added = append(added, k)
		}
		if len(added) > 0 {
			notes = append(notes, fmt.Sprintf("%s %s for %s %s", strings.Join(added, ", "), set.word, kind, name))
		}
	}
	return notes
}

// validatePod refuses a new pod that breaks the bounds of a LimitRange:
// each container's and init container's against the Container items, the
// pod's total against the Pod items. The first LimitRange broken answers,
// with every bound of it the pod breaks.
func (lr limitRanger) validatePod(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	ranges, err := lr.rangesOf(l, obj)
	if err != nil {
		return err
	}
	spec := mapOf(obj["spec"])
	for _, r := range ranges {
		var msgs []string
		for _, item := range mapsOf(mapAt(r, "spec")["limits"]) {
			kind := strOf(item["type"])
			switch kind {
			case limitTypeContainer:
				for _, list := range []string{"containers", "initContainers"} {
					for _, c := range mapsOf(spec[list]) {
						msgs = append(msgs, checkBounds(kind, item, amountsAt(c, "resources", "requests"), amountsAt(c, "resources", "limits"))...)
					}
				}
			case limitTypePod:
				msgs = append(msgs, checkBounds(kind, item, podAmounts(spec, "requests"), podAmounts(spec, "limits"))...)
			}
		}
		if len(msgs) > 0 {
			return &registry.Denial{Reason: apierr.Aggregate(msgs)}
		}
	}
	return nil
}

// validateClaim refuses a claim, created or updated, whose storage
// requests break the bounds of a LimitRange's PersistentVolumeClaim items:
// a claim asks for its requests and is given no limit. A claim being
// deleted is left alone.
func (lr limitRanger) validateClaim(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil && str(old, "metadata", "deletionTimestamp") != "" {
		return nil
	}
	ranges, err := lr.rangesOf(l, obj)
	if err != nil {
		return err
	}
	requests := amountsAt(obj, "spec", "resources", "requests")
	for _, r := range ranges {
		var msgs []string
		for _, item := range mapsOf(mapAt(r, "spec")["limits"]) {
			kind := strOf(item["type"])
			if kind != limitTypePVC {
				continue
			}
			for name, bound := range boundsOf(item, "min") {
				msgs = append(msgs, minBound(kind, name, bound, requests, nil)...)
			}
			for name, bound := range boundsOf(item, "max") {
				msgs = append(msgs, maxRequestBound(kind, name, bound, requests)...)
			}
		}
		if len(msgs) > 0 {
			return &registry.Denial{Reason: apierr.Aggregate(msgs)}
		}
	}
	return nil
}

// checkBounds checks requests and limits against an item's min, max and
// maxLimitRequestRatio, in that order, resource by resource in name order.
func checkBounds(kind string, item map[string]any, requests, limits amounts) []string {
	var msgs []string
	for name, bound := range boundsOf(item, "min") {
		msgs = append(msgs, minBound(kind, name, bound, requests, limits)...)
	}
	for name, bound := range boundsOf(item, "max") {
		msgs = append(msgs, maxBound(kind, name, bound, requests, limits)...)
	}
	for name, bound := range boundsOf(item, "maxLimitRequestRatio") {
		msgs = append(msgs, ratioBound(kind, name, bound, requests, limits)...)
	}
	return msgs
}

// amounts are the quantities of a resource list by resource name.
type amounts map[string]schema.Amount

// amountsAt parses the resource list at a path of obj; amounts that do
// not parse are left out.
func amountsAt(obj map[string]any, path ...string) amounts {
	m := mapAt(obj, path...)
	out := make(amounts, len(m))
	for k, v := range m {
		if q, ok := schema.AmountOf(v); ok {
			out[k] = q
		}
	}
	return out
}

// get returns the amount of name, zero when there is none, and whether
// there is one.
func (a amounts) get(name string) (schema.Amount, bool) {
	q, ok := a[name]
	if !ok {
		return schema.Amount{}, false
	}
	return q, true
}

// add adds each amount of o to a, as upstream sums resource lists: a
// resource a lacks takes o's amount.
func (a amounts) add(o amounts) {
	for k, q := range o {
		if have, ok := a[k]; ok {
			a[k] = have.Add(q)
		} else {
			a[k] = q
		}
	}
}

// raise sets each amount of a to o's where o's is greater.
func (a amounts) raise(o amounts) {
	for k, q := range o {
		if have, ok := a[k]; !ok || q.Cmp(have) > 0 {
			a[k] = q
		}
	}
}

// podAmounts is what a pod asks for in one member ("requests" or "limits")
// of its containers' resources, as upstream's LimitRanger totals it: its
// containers and sidecars (init containers that restart always) summed,
// or, where more, the most any other init container asks for together
// with the sidecars started before it.
func podAmounts(spec map[string]any, member string) amounts {
	total := amounts{}
	for _, c := range mapsOf(spec["containers"]) {
		total.add(amountsAt(c, "resources", member))
	}
	sidecars, inits := amounts{}, amounts{}
	for _, c := range mapsOf(spec["initContainers"]) {
		own := amountsAt(c, "resources", member)
		if strOf(c["restartPolicy"]) == restartAlways {
			total.add(own)
			sidecars.add(own)
			inits.raise(sidecars)
			continue
		}
		running := amounts{}
		running.add(own)
		running.add(sidecars)
		inits.raise(running)
	}
	total.raise(inits)
	return total
}

// boundsOf iterates over the amounts of an item's member in name order.
func boundsOf(item map[string]any, member string) func(yield func(string, schema.Amount) bool) {
	m := mapOf(item[member])
	return func(yield func(string, schema.Amount) bool) {
		for _, k := range sortedKeys(m) {
			q, ok := schema.AmountOf(m[k])
			if ok && !yield(k, q) {
				return
			}
		}
	}
}

// onePrecision returns a request, a limit and a bound as upstream compares
// them: in thousandths when no whole value passes maxMilliValue, else in
// whole units.
func onePrecision(req, lim, bound schema.Amount) (r, l, b int64) {
	r, l, b = req.Value(), lim.Value(), bound.Value()
	if r <= maxMilliValue && l <= maxMilliValue && b <= maxMilliValue {
		r, l, b = req.MilliValue(), lim.MilliValue(), bound.MilliValue()
	}
	return r, l, b
}

// minBound checks a minimum: the resource must be requested, and neither
// the request nor any limit may be below it.
func minBound(kind, name string, bound schema.Amount, requests, limits amounts) []string {
	req, hasReq := requests.get(name)
	lim, hasLim := limits.get(name)
	r, l, b := onePrecision(req, lim, bound)
	switch {
	case !hasReq:
		return []string{fmt.Sprintf("minimum %s usage per %s is %s.  No request is specified", name, kind, bound.String())}
	case r < b:
		return []string{fmt.Sprintf("minimum %s usage per %s is %s, but request is %s", name, kind, bound.String(), req.String())}
	case hasLim && l < b:
		return []string{fmt.Sprintf("minimum %s usage per %s is %s, but limit is %s", name, kind, bound.String(), lim.String())}
	}
	return nil
}

// maxBound checks a maximum: the resource must be limited, and neither
// the limit nor any request may be above it.
func maxBound(kind, name string, bound schema.Amount, requests, limits amounts) []string {
	req, hasReq := requests.get(name)
	lim, hasLim := limits.get(name)
	r, l, b := onePrecision(req, lim, bound)
	switch {
	case !hasLim:
		return []string{fmt.Sprintf("maximum %s usage per %s is %s.  No limit is specified", name, kind, bound.String())}
	case l > b:
		return []string{fmt.Sprintf("maximum %s usage per %s is %s, but limit is %s", name, kind, bound.String(), lim.String())}
	case hasReq && r > b:
		return []string{fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", name, kind, bound.String(), req.String())}
	}
	return nil
}

// maxRequestBound checks a maximum of what knows no limits (a claim): the
// resource must be requested, at most the maximum.
func maxRequestBound(kind, name string, bound schema.Amount, requests amounts) []string {
	req, hasReq := requests.get(name)
	r, _, b := onePrecision(req, schema.Amount{}, bound)
	switch {
	case !hasReq:
		return []string{fmt.Sprintf("maximum %s usage per %s is %s.  No request is specified", name, kind, bound.String())}
	case r > b:
		return []string{fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", name, kind, bound.String(), req.String())}
	}
	return nil
}

// ratioBound checks a maximum limit-to-request ratio: the resource must
// be requested and limited, both above zero, and the limit at most the
// ratio times the request. The ratio is compared in thousandths when the
// bound allows, and shown with six decimals, as upstream.
func ratioBound(kind, name string, bound schema.Amount, requests, limits amounts) []string {
	req, hasReq := requests.get(name)
	lim, hasLim := limits.get(name)
	r, l, _ := onePrecision(req, lim, bound)
	if !hasReq || r == 0 {
		return []string{fmt.Sprintf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, kind, bound.String())}
	}
	if !hasLim || l == 0 {
		return []string{fmt.Sprintf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, kind, bound.String())}
	}
	ratio := float64(l) / float64(r)
	observed, allowed := ratio, float64(bound.Value())
	if bound.Value() <= maxMilliValue {
		observed, allowed = ratio*1000, float64(bound.MilliValue())
	}
	if observed > allowed {
		return []string{fmt.Sprintf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, kind, bound.String(), ratio)}
	}
	return nil
}

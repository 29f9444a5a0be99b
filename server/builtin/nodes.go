package builtin

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

// Messages of the node rules.
const (
	msgPodCIDRChange    = `node updates may not change podCIDR except from "" to valid`
	msgProviderIDChange = `node updates may not change providerID except from "" to valid`
	msgUniqueTaints     = "taints must be unique by key and effect pair"
)

// nodeRules holds the quantity rules nodes share with pods.
type nodeRules struct{ pods podRules }

func nodes(b config.Brand) *registry.Descriptor {
	d := core("nodes", "node", "Node", false, "no")
	r := nodeRules{pods: newPodRules(b)}
	d.Subresources = []registry.Subresource{
		proxySubresource("NodeProxyOptions"),
		{Name: "status", Verbs: statusVerbs, Keep: keepSpec, Validate: r.validateUpdate},
	}
	// Nodes register themselves with their status.
	d.KeepStatusOnCreate = true
	d.Strategy.Default = defaultNode
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		// Dynamic kubelet configuration is gone; node features belong to
		// a feature that is off by default.
		delete(child(obj, "spec"), "configSource")
		st := child(obj, "status")
		delete(st, "config")
		delete(st, "features")
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub == "status" {
			st, oldSt := child(obj, "status"), mapOf(old["status"])
			for _, f := range []string{"config", "features"} {
				if !present(oldSt, f) {
					delete(st, f)
				}
			}
			return
		}
		if !present(mapOf(old["spec"]), "configSource") {
			delete(child(obj, "spec"), "configSource")
		}
	}
	d.Strategy.AdmissionSteps = append(d.Strategy.AdmissionSteps,
		registry.AdmissionStep{Plugin: config.PluginTaintNodesByCondition, Admit: r.taintNotReady})
	d.Strategy.Validate = r.validate
	// Upstream checks the new node on its own and then the change; the
	// message lists each problem once.
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(r.validate(obj), r.validateUpdate(obj, old)...)
	}
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.FieldSelectors = map[string]registry.FieldSelector{
		"spec.unschedulable": {
			Get:   func(o registry.Object) string { return strconv.FormatBool(boolOf(mapOf(o["spec"])["unschedulable"])) },
			Reads: [][]string{{"spec", "unschedulable"}},
		},
	}
	return d
}

// defaultNode applies what upstream's decoding does to a node: podCIDR
// and podCIDRs agree (podCIDR wins, for older clients), allocatable
// starts as the capacity, and amounts are rounded.
func defaultNode(obj registry.Object) {
	spec := child(obj, "spec")
	cidrs := listOf(spec["podCIDRs"])
	if one := strOf(spec["podCIDR"]); one != "" && (len(cidrs) == 0 || strOf(cidrs[0]) != one) {
		cidrs = []any{one}
		spec["podCIDRs"] = cidrs
	}
	if len(cidrs) > 0 {
		spec["podCIDR"] = cidrs[0]
	} else {
		delete(spec, "podCIDR")
	}
	st := mapOf(obj["status"])
	if st == nil {
		return
	}
	if capacity := mapOf(st["capacity"]); capacity != nil && !present(st, "allocatable") {
		alloc := make(map[string]any, len(capacity))
		for k, v := range capacity {
			alloc[k] = v
		}
		st["allocatable"] = alloc
	}
	roundResourceList(mapOf(st["capacity"]))
	roundResourceList(mapOf(st["allocatable"]))
}

// taintNotReady marks a node being created as not ready to take pods,
// NoSchedule under the not-ready key, unless it already carries a taint of
// that key and effect, as upstream's TaintNodesByCondition admission: the
// node's lifecycle controller lifts it once the node reports ready.
func (r nodeRules) taintNotReady(_ context.Context, _ registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	spec := child(obj, "spec")
	for _, t := range mapsOf(spec["taints"]) {
		if strOf(t["key"]) == r.pods.notReadyTaint && strOf(t["effect"]) == taintNoSchedule {
			return nil
		}
	}
	spec["taints"] = append(listOf(spec["taints"]), map[string]any{"key": r.pods.notReadyTaint, "effect": taintNoSchedule})
	return nil
}

// validate applies the rules of a node on its own: taints (reported under
// metadata, as upstream does), status amounts and pod CIDRs.
func (r nodeRules) validate(obj registry.Object) apierr.FieldErrors {
	spec := mapOf(obj["spec"])
	errs := validateNodeTaints(listOf(spec["taints"]), pathOf("metadata.taints"))
	errs = append(errs, r.validateResources(obj)...)
	cidrs := stringList(listOf(spec["podCIDRs"]))
	if len(cidrs) == 0 {
		return errs
	}
	p := pathOf("spec.podCIDRs")
	// Upstream shows the whole list as the bad value of each entry.
	all := goStrings("string", listOf(spec["podCIDRs"]))
	for i, c := range cidrs {
		if _, ok := parseCIDRSloppy(c); !ok {
			errs = append(errs, apierr.Invalid(p.index(i).String(), all, "must be valid CIDR"))
		}
	}
	if len(cidrs) > 1 {
		v4, v6 := false, false
		var bad string
		for _, c := range cidrs {
			n, ok := parseCIDRSloppy(c)
			switch {
			case !ok:
				if bad == "" {
					bad = c
				}
			case n.IP.To4() != nil:
				v4 = true
			default:
				v6 = true
			}
		}
		if bad != "" {
			errs = append(errs, &apierr.FieldError{Type: apierr.FieldInternal, Field: p.String(),
				Detail: fmt.Sprintf("invalid PodCIDRs. failed to check with dual stack with error:failed to parse cidr value:%q with error:invalid CIDR address: %s", bad, bad)})
			v4, v6 = false, false
		}
		if !(v4 && v6) || len(cidrs) > 2 {
			errs = append(errs, apierr.Invalid(p.String(), all, "may specify no more than one CIDR for each IP family"))
		}
		seen := map[string]bool{}
		for i, c := range cidrs {
			if seen[c] {
				errs = append(errs, apierr.Duplicate(p.index(i).String(), c))
			}
			seen[c] = true
		}
	}
	return errs
}

// validateResources checks the amounts of a node's capacity and
// allocatable: not negative, whole for resources counted in units.
func (r nodeRules) validateResources(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	st := mapOf(obj["status"])
	for _, list := range []string{"capacity", "allocatable"} {
		m := mapOf(st[list])
		for _, k := range sortedKeys(m) {
			if q, ok := schema.AmountOf(m[k]); ok {
				errs = append(errs, r.pods.validateQuantityValue(k, q, pathOf("status").child(list, k))...)
			}
		}
	}
	return errs
}

// validateNodeTaints checks taints: key, value, effect, and one taint per
// key and effect.
func validateNodeTaints(taints []any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]map[string]bool{}
	for i, t := range taints {
		taint := mapOf(t)
		ip := p.index(i)
		key, value, effect := strOf(taint["key"]), strOf(taint["value"]), strOf(taint["effect"])
		errs = append(errs, validateLabelName(key, ip.child("key").String())...)
		if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
			errs = append(errs, apierr.Invalid(ip.child("value").String(), value, strings.Join(msgs, ";")))
		}
		switch {
		case effect == "":
			errs = append(errs, apierr.Required(ip.child("effect").String(), ""))
		case !contains(validation.TaintEffects, effect):
			errs = append(errs, notSupported(ip.child("effect"), effect, validation.TaintEffects...))
		}
		if seen[effect][key] {
			errs = append(errs, &apierr.FieldError{Type: apierr.FieldDuplicate, Field: ip.String(), Value: taintSyntax(taint), Detail: msgUniqueTaints})
			continue
		}
		if seen[effect] == nil {
			seen[effect] = map[string]bool{}
		}
		seen[effect][key] = true
	}
	return errs
}

// taintSyntax prints a taint as upstream's duplicate error shows it.
func taintSyntax(t map[string]any) goSyntax {
	added := "(*v1.Time)(nil)"
	if ts := strOf(t["timeAdded"]); ts != "" {
		added = strconv.Quote(ts)
	}
	return goSyntax(fmt.Sprintf("core.Taint{Key:%q, Value:%q, Effect:%q, TimeAdded:%s}", strOf(t["key"]), strOf(t["value"]), strOf(t["effect"]), added))
}

// validateUpdate applies the rules of a node change, also to status
// writes: status amounts, unique addresses, and pod CIDRs, provider ID and
// external ID fixed once set.
func (r nodeRules) validateUpdate(obj, old registry.Object) apierr.FieldErrors {
	errs := r.validateResources(obj)
	type address struct{ typ, addr string }
	seen := map[address]bool{}
	for i, a := range mapsOf(mapOf(obj["status"])["addresses"]) {
		k := address{strOf(a["type"]), strOf(a["address"])}
		if seen[k] {
			errs = append(errs, apierr.Duplicate(index("status.addresses", i), goSyntax(fmt.Sprintf("core.NodeAddress{Type:%q, Address:%q}", k.typ, k.addr))))
		}
		seen[k] = true
	}
	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	if prev := stringList(listOf(oldSpec["podCIDRs"])); len(prev) > 0 {
		cur := stringList(listOf(spec["podCIDRs"]))
		if len(cur) != len(prev) {
			errs = append(errs, apierr.Forbidden("spec.podCIDRs", msgPodCIDRChange))
		} else {
			for i := range prev {
				if prev[i] != cur[i] {
					errs = append(errs, apierr.Forbidden("spec.podCIDRs", msgPodCIDRChange))
				}
			}
		}
	}
	if prev := strOf(oldSpec["providerID"]); prev != "" && prev != strOf(spec["providerID"]) {
		errs = append(errs, apierr.Forbidden("spec.providerID", msgProviderIDChange))
	}
	errs = append(errs, validateNodeTaints(listOf(spec["taints"]), pathOf("metadata.taints"))...)
	if strOf(spec["externalID"]) != strOf(oldSpec["externalID"]) {
		errs = append(errs, apierr.Forbidden("spec.externalID", "may not be updated"))
	}
	return errs
}

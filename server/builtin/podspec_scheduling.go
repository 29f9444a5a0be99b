package builtin

import (
	"fmt"
	"strings"

	"platd/server/apierr"
	"platd/server/validation"
)

// Scheduling values with closed sets.
var (
	scheduleActions       = []string{"DoNotSchedule", "ScheduleAnyway"}
	nodeInclusionPolicies = []string{"Honor", "Ignore"}
)

// Limits of a pod's DNS configuration, from libc's resolver.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

// maxAffinityWeight bounds a preferred scheduling term's weight.
const maxAffinityWeight = 100

// validateTolerations checks tolerations with the rules of
// validation.TolerationProblems.
func validateTolerations(list any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, t := range mapsOf(list) {
		ip := p.index(i)
		problems := validation.TolerationProblems(validation.Toleration{Key: strOf(t["key"]), Operator: strOf(t["operator"]),
			Value: strOf(t["value"]), Effect: strOf(t["effect"]), HasSeconds: has(t, "tolerationSeconds")})
		for _, pr := range problems {
			field := ip.child(pr.Member)
			switch {
			case pr.Supported != nil:
				errs = append(errs, notSupported(field, pr.Value, pr.Supported...))
			case pr.Whole:
				errs = append(errs, apierr.Invalid(field.String(), tolerationValue(t), pr.Message))
			default:
				errs = append(errs, apierr.Invalid(field.String(), pr.Value, pr.Message))
			}
		}
	}
	return errs
}

func validateAffinity(aff map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if na := mapOf(aff["nodeAffinity"]); has(aff, "nodeAffinity") {
		np := p.child("nodeAffinity")
		if has(na, "requiredDuringSchedulingIgnoredDuringExecution") {
			errs = append(errs, validateNodeSelector(mapOf(na["requiredDuringSchedulingIgnoredDuringExecution"]), np.child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		pp := np.child("preferredDuringSchedulingIgnoredDuringExecution")
		for i, term := range mapsOf(na["preferredDuringSchedulingIgnoredDuringExecution"]) {
			if w := intAt(term, "weight"); w <= 0 || w > maxAffinityWeight {
				errs = append(errs, apierr.Invalid(pp.index(i).child("weight").String(), w, "must be in the range 1-100"))
			}
			errs = append(errs, validateNodeSelectorTerm(mapOf(term["preference"]), pp.index(i).child("preference"))...)
		}
	}
	for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
		if !has(aff, kind) {
			continue
		}
		pa, kp := mapOf(aff[kind]), p.child(kind)
		rp := kp.child("requiredDuringSchedulingIgnoredDuringExecution")
		for i, term := range mapsOf(pa["requiredDuringSchedulingIgnoredDuringExecution"]) {
			errs = append(errs, validatePodAffinityTerm(term, rp.index(i))...)
		}
		pp := kp.child("preferredDuringSchedulingIgnoredDuringExecution")
		for i, wt := range mapsOf(pa["preferredDuringSchedulingIgnoredDuringExecution"]) {
			if w := intAt(wt, "weight"); w <= 0 || w > maxAffinityWeight {
				errs = append(errs, apierr.Invalid(pp.index(i).child("weight").String(), w, "must be in the range 1-100"))
			}
			errs = append(errs, validatePodAffinityTerm(mapOf(wt["podAffinityTerm"]), pp.index(i).child("podAffinityTerm"))...)
		}
	}
	return errs
}

func validateNodeSelector(ns map[string]any, p fieldPath) apierr.FieldErrors {
	terms := mapsOf(ns["nodeSelectorTerms"])
	tp := p.child("nodeSelectorTerms")
	if len(terms) == 0 {
		return apierr.FieldErrors{apierr.Required(tp.String(), "must have at least one node selector term")}
	}
	var errs apierr.FieldErrors
	for i, term := range terms {
		errs = append(errs, validateNodeSelectorTerm(term, tp.index(i))...)
	}
	return errs
}

func validateNodeSelectorTerm(term map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for j, rq := range mapsOf(term["matchExpressions"]) {
		rp := p.child("matchExpressions").index(j)
		values := listOf(rq["values"])
		switch op := strOf(rq["operator"]); op {
		case "In", "NotIn":
			if len(values) == 0 {
				errs = append(errs, apierr.Required(rp.child("values").String(), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case "Exists", "DoesNotExist":
			if len(values) > 0 {
				errs = append(errs, apierr.Forbidden(rp.child("values").String(), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case "Gt", "Lt":
			if len(values) != 1 {
				errs = append(errs, apierr.Required(rp.child("values").String(), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, apierr.Invalid(rp.child("operator").String(), op, "not a valid selector operator"))
		}
		errs = append(errs, qualifiedName(strOf(rq["key"]), rp.child("key"))...)
	}
	for j, rq := range mapsOf(term["matchFields"]) {
		rp := p.child("matchFields").index(j)
		switch op := strOf(rq["operator"]); op {
		case "In", "NotIn":
			if len(listOf(rq["values"])) != 1 {
				errs = append(errs, apierr.Required(rp.child("values").String(), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			errs = append(errs, apierr.Invalid(rp.child("operator").String(), op, "not a valid selector operator"))
		}
		if key := strOf(rq["key"]); key != "metadata.name" {
			errs = append(errs, apierr.Invalid(rp.child("key").String(), key, "not a valid field selector key"))
		} else {
			for k, v := range listOf(rq["values"]) {
				errs = append(errs, dnsSubdomain(strOf(v), rp.child("values").index(k))...)
			}
		}
	}
	return errs
}

func validatePodAffinityTerm(term map[string]any, p fieldPath) apierr.FieldErrors {
	// A selector that is absent is valid: its path is not built.
	var errs apierr.FieldErrors
	for _, f := range []string{"labelSelector", "namespaceSelector"} {
		if sel := mapOf(term[f]); sel != nil {
			errs = append(errs, validateLabelSelector(sel, false, p.child(f).String())...)
		}
	}
	for _, ns := range listOf(term["namespaces"]) {
		// Upstream names the member in the singular here.
		errs = append(errs, dnsLabel(strOf(ns), p.child("namespace"))...)
	}
	topologyKey := strOf(term["topologyKey"])
	if topologyKey == "" {
		errs = append(errs, apierr.Required(p.child("topologyKey").String(), "can not be empty"))
	}
	return append(errs, qualifiedName(topologyKey, p.child("topologyKey"))...)
}

func validateTopologySpread(list any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	constraints := mapsOf(list)
	for i, tc := range constraints {
		ip := p.index(i)
		if skew := intAt(tc, "maxSkew"); skew <= 0 {
			errs = append(errs, apierr.Invalid(ip.child("maxSkew").String(), skew, msgNotPositive))
		}
		key, action := strOf(tc["topologyKey"]), strOf(tc["whenUnsatisfiable"])
		if key == "" {
			errs = append(errs, apierr.Required(ip.child("topologyKey").String(), "can not be empty"))
		}
		if !contains(scheduleActions, action) {
			errs = append(errs, notSupported(ip.child("whenUnsatisfiable"), action, scheduleActions...))
		}
		for _, rest := range constraints[i+1:] {
			if strOf(rest["topologyKey"]) == key && strOf(rest["whenUnsatisfiable"]) == action {
				errs = append(errs, apierr.Duplicate(ip.child("{topologyKey, whenUnsatisfiable}").String(), fmt.Sprintf("{%v, %v}", key, action)))
				break
			}
		}
		if has(tc, "minDomains") {
			md := intAt(tc, "minDomains")
			if md <= 0 {
				errs = append(errs, apierr.Invalid(ip.child("minDomains").String(), md, msgNotPositive))
			}
			if action != "DoNotSchedule" {
				errs = append(errs, apierr.Invalid(ip.child("minDomains").String(), md, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=DoNotSchedule, not %s", action)))
			}
		}
		for _, f := range []string{"nodeAffinityPolicy", "nodeTaintsPolicy"} {
			if v, ok := tc[f].(string); ok && !contains(nodeInclusionPolicies, v) {
				errs = append(errs, notSupported(ip.child(f), v, nodeInclusionPolicies...))
			}
		}
		if sel := mapOf(tc["labelSelector"]); sel != nil {
			errs = append(errs, validateLabelSelector(sel, false, ip.child("labelSelector").String())...)
		}
	}
	return errs
}

func validateDNSConfig(spec map[string]any, p fieldPath) apierr.FieldErrors {
	cfg := mapOf(spec["dnsConfig"])
	if strOf(spec["dnsPolicy"]) == "None" {
		if !has(spec, "dnsConfig") {
			return apierr.FieldErrors{apierr.Required(p.String(), "must provide `dnsConfig` when `dnsPolicy` is None")}
		}
		if len(listOf(cfg["nameservers"])) == 0 {
			return apierr.FieldErrors{apierr.Required(p.child("nameservers").String(), "must provide at least one DNS nameserver when `dnsPolicy` is None")}
		}
	}
	if !has(spec, "dnsConfig") {
		return nil
	}
	var errs apierr.FieldErrors
	servers := listOf(cfg["nameservers"])
	if len(servers) > maxDNSNameservers {
		errs = append(errs, apierr.Invalid(p.child("nameservers").String(), stringList(servers), fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range servers {
		errs = append(errs, validateIP(strOf(ns), p.child("nameservers").index(i))...)
	}
	searches := listOf(cfg["searches"])
	names := stringList(searches)
	if len(searches) > maxDNSSearchPaths {
		errs = append(errs, apierr.Invalid(p.child("searches").String(), names, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(names, " ")) > maxDNSSearchListChars {
		errs = append(errs, apierr.Invalid(p.child("searches").String(), names, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, s := range names {
		errs = append(errs, dnsSubdomain(strings.TrimSuffix(s, "."), p.child("searches").index(i))...)
	}
	for i, opt := range mapsOf(cfg["options"]) {
		if strOf(opt["name"]) == "" {
			errs = append(errs, apierr.Required(p.child("options").index(i).String(), "must not be empty"))
		}
	}
	return errs
}

// stringList reads a decoded list of strings as a []string, which field
// errors print as upstream prints a Go string slice.
func stringList(l []any) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = strOf(v)
	}
	return out
}

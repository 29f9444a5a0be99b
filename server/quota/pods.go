package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// Resource name prefixes of pod usage.
const (
	requestsPrefix         = "requests."
	hugePagesPrefix        = "hugepages-"
	requestsHugePagesPrefx = requestsPrefix + hugePagesPrefix
)

// Pod scopes, as a quota's spec.scopes and scopeSelector name them.
const (
	ScopeTerminating               = "Terminating"
	ScopeNotTerminating            = "NotTerminating"
	ScopeBestEffort                = "BestEffort"
	ScopeNotBestEffort             = "NotBestEffort"
	ScopePriorityClass             = "PriorityClass"
	ScopeCrossNamespacePodAffinity = "CrossNamespacePodAffinity"
)

// podResources are the names a pod's usage carries besides huge pages and
// extended resources.
var podResources = []string{
	CountName("", "pods"),
	"cpu", "memory", "ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage",
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"pods",
}

// mustSpecify are the resources every container must request or limit
// explicitly when a quota limits them: upstream keeps that requirement
// for cpu and memory alone, for compatibility.
var mustSpecify = []string{"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}

// pods measures pods: their count, and while they run their compute
// requests and limits, as upstream's pod evaluator.
type pods struct {
	// nativeDomain marks the names of native resources with a domain
	// (<LongDomain>/...): those are no extended resources.
	nativeDomain string
}

// Pods returns the evaluator of pods.
func Pods(b config.Brand) registry.QuotaEvaluator {
	return pods{nativeDomain: b.LongDomain + "/"}
}

// native reports whether a resource name is one of the platform's own.
func (p pods) native(name string) bool {
	return !strings.Contains(name, "/") || strings.Contains(name, p.nativeDomain)
}

// extended reports whether a container's resource name is an extended
// resource (a vendor's device), which quota limits as requests.<name>.
// Pod validation has checked that the name is a qualified name.
func (p pods) extended(name string) bool {
	return !p.native(name) && !strings.HasPrefix(name, requestsPrefix)
}

func (p pods) MatchingResources(names []string) []string {
	out := intersect(names, podResources)
	for _, n := range names {
		if strings.HasPrefix(n, hugePagesPrefix) || strings.HasPrefix(n, requestsHugePagesPrefx) ||
			(!p.native(n) && strings.HasPrefix(n, requestsPrefix)) {
			out = append(out, n)
		}
	}
	return out
}

func (p pods) ChargesUpdates() bool { return false }

func (p pods) Usage(obj registry.Object, now time.Time) map[string]string {
	// Every stored pod counts as an object; only a pod that may still run
	// is charged its compute resources and the "pods" resource.
	out := List{CountName("", "pods"): one}
	if !podCharged(obj, now) {
		return out.Strings()
	}
	spec := at(obj, "spec")
	return out.Add(p.computeUsage(podRequests(spec), podLimits(spec))).Strings()
}

var one, _ = schema.AmountOf("1")

// computeUsage turns requests and limits (a container's or a pod's) into
// quota usage.
func (p pods) computeUsage(requests, limits List) List {
	out := List{"pods": one}
	for _, r := range []string{"cpu", "memory", "ephemeral-storage"} {
		if q, ok := requests[r]; ok {
			out[r] = q
			out[requestsPrefix+r] = q
		}
		if q, ok := limits[r]; ok {
			out["limits."+r] = q
		}
	}
	for name, q := range requests {
		if strings.HasPrefix(name, hugePagesPrefix) {
			out[name] = q
			out[requestsPrefix+name] = q
		}
		if p.extended(name) {
			out[requestsPrefix+name] = q
		}
	}
	return out
}

// podCharged reports whether a pod is charged its compute resources: not
// once it has finished (Succeeded or Failed), nor once its deletion grace
// has run out (a pod stuck terminating on a lost node).
func podCharged(obj registry.Object, now time.Time) bool {
	switch str(at(obj, "status"), "phase") {
	case "Succeeded", "Failed":
		return false
	}
	m := at(obj, "metadata")
	ts := str(m, "deletionTimestamp")
	grace, ok := number(m, "deletionGracePeriodSeconds")
	if ts == "" || !ok {
		return true
	}
	deleted, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return true
	}
	return !now.After(deleted.Add(time.Duration(grace) * time.Second))
}

// containerList returns a container's requests or limits.
func containerList(c map[string]any, which string) List {
	return ListOf(at(c, "resources", which))
}

// podRequests is what a pod requests: the sum of its containers and
// sidecars (restartable init containers), or the most an init container
// needs while it runs beside the sidecars started before it if that is
// more, plus the pod's overhead.
func podRequests(spec map[string]any) List {
	sum := List{}
	for _, c := range mapsOf(spec["containers"]) {
		sum = sum.Add(containerList(c, "requests"))
	}
	sum = addInitContainers(sum, spec, "requests")
	if overhead := at(spec, "overhead"); overhead != nil {
		sum = sum.Add(ListOf(overhead))
	}
	return sum
}

// podLimits is podRequests for limits, except that the overhead is added
// only to what is limited already.
func podLimits(spec map[string]any) List {
	sum := List{}
	for _, c := range mapsOf(spec["containers"]) {
		sum = sum.Add(containerList(c, "limits"))
	}
	sum = addInitContainers(sum, spec, "limits")
	for name, q := range ListOf(at(spec, "overhead")) {
		if have, ok := sum[name]; ok {
			sum[name] = have.Add(q)
		}
	}
	return sum
}

// addInitContainers adds the init containers' requests or limits to sum,
// the regular containers' total: a sidecar's add to the total, and the
// total is at least what any init container needs with the sidecars
// started before it.
func addInitContainers(sum List, spec map[string]any, which string) List {
	sidecars, most := List{}, List{}
	for _, c := range mapsOf(spec["initContainers"]) {
		own := containerList(c, which)
		var needs List
		if str(c, "restartPolicy") == "Always" {
			sum = sum.Add(own)
			sidecars = sidecars.Add(own)
			needs = sidecars
		} else {
			needs = own.Add(sidecars)
		}
		most = maxList(most, needs)
	}
	return maxList(sum, most)
}

// maxList returns a with each amount raised to b's where b's is larger.
func maxList(a, b List) List {
	out := a.Add(nil)
	for k, q := range b {
		if have, ok := out[k]; !ok || q.Cmp(have) > 0 {
			out[k] = q
		}
	}
	return out
}

func (p pods) Constraints(required []string, obj registry.Object) string {
	var need []string
	for _, r := range required {
		if slices.Contains(mustSpecify, r) && !slices.Contains(need, r) {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return ""
	}
	missing := map[string][]string{}
	spec := at(obj, "spec")
	for _, c := range append(mapsOf(spec["containers"]), mapsOf(spec["initContainers"])...) {
		has := p.computeUsage(containerList(c, "requests"), containerList(c, "limits"))
		for _, r := range need {
			if _, ok := has[r]; !ok {
				if name := str(c, "name"); !slices.Contains(missing[r], name) {
					missing[r] = append(missing[r], name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return ""
	}
	resources := make([]string, 0, len(missing))
	for r := range missing {
		resources = append(resources, r)
	}
	slices.Sort(resources)
	parts := make([]string, 0, len(resources))
	for _, r := range resources {
		names := missing[r]
		slices.Sort(names)
		parts = append(parts, fmt.Sprintf("%s for: %s", r, strings.Join(names, ",")))
	}
	return "must specify " + strings.Join(parts, "; ")
}

func (p pods) MatchesScope(req registry.ScopeRequirement, obj registry.Object) bool {
	spec := at(obj, "spec")
	switch req.ScopeName {
	case ScopeTerminating:
		return terminating(spec)
	case ScopeNotTerminating:
		return !terminating(spec)
	case ScopeBestEffort:
		return bestEffort(obj)
	case ScopeNotBestEffort:
		return !bestEffort(obj)
	case ScopePriorityClass:
		return priorityClassMatches(req, str(spec, "priorityClassName"))
	case ScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(at(spec, "affinity"))
	}
	return false
}

// terminating reports whether a pod has an active deadline.
func terminating(spec map[string]any) bool {
	d, ok := number(spec, "activeDeadlineSeconds")
	return ok && d >= 0
}

// bestEffort reports whether a pod's QoS class is BestEffort: the class
// its status records, else computed as upstream does (no container
// requests or limits any cpu or memory).
func bestEffort(obj registry.Object) bool {
	if class := str(at(obj, "status"), "qosClass"); class != "" {
		return class == "BestEffort"
	}
	spec := at(obj, "spec")
	for _, c := range append(mapsOf(spec["containers"]), mapsOf(spec["initContainers"])...) {
		for _, which := range []string{"requests", "limits"} {
			l := containerList(c, which)
			for _, r := range []string{"cpu", "memory"} {
				if q, ok := l[r]; ok && q.Sign() > 0 {
					return false
				}
			}
		}
	}
	return true
}

// priorityClassMatches applies a PriorityClass scope requirement to a
// pod's priority class, as a label selector on the key PriorityClass
// that a pod without a class does not carry.
func priorityClassMatches(req registry.ScopeRequirement, class string) bool {
	switch req.Operator {
	case "Exists":
		return class != ""
	case "DoesNotExist":
		return class == ""
	case "In":
		return class != "" && slices.Contains(req.Values, class)
	case "NotIn":
		return class == "" || !slices.Contains(req.Values, class)
	}
	return false
}

// crossNamespaceAffinity reports whether a pod's affinity or
// anti-affinity has a term that selects pods of other namespaces.
func crossNamespaceAffinity(affinity map[string]any) bool {
	for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
		a := at(affinity, kind)
		for _, t := range mapsOf(a["requiredDuringSchedulingIgnoredDuringExecution"]) {
			if crossNamespaceTerm(t) {
				return true
			}
		}
		for _, w := range mapsOf(a["preferredDuringSchedulingIgnoredDuringExecution"]) {
			if crossNamespaceTerm(at(w, "podAffinityTerm")) {
				return true
			}
		}
	}
	return false
}

func crossNamespaceTerm(t map[string]any) bool {
	if t == nil {
		return false
	}
	if len(stringsOf(t["namespaces"])) > 0 {
		return true
	}
	sel, ok := t["namespaceSelector"]
	return ok && sel != nil
}

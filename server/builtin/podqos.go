package builtin

import "math/big"

// Quality-of-service classes of a pod.
const (
	qosGuaranteed = "Guaranteed"
	qosBurstable  = "Burstable"
	qosBestEffort = "BestEffort"
)

// podQOSClass computes a pod's quality-of-service class from its
// containers and init containers (ephemeral ones have no resources):
// BestEffort without any cpu or memory request or limit; Guaranteed when
// every container limits both and requests equal limits; else Burstable.
// Only positive amounts count.
func podQOSClass(spec map[string]any) string {
	requests, limits := map[string]*big.Int{}, map[string]*big.Int{}
	guaranteed := true
	for _, kind := range []string{"containers", "initContainers"} {
		for _, c := range mapsOf(spec[kind]) {
			res := mapOf(c["resources"])
			addQOSAmounts(requests, mapOf(res["requests"]))
			found := addQOSAmounts(limits, mapOf(res["limits"]))
			if !found["cpu"] || !found["memory"] {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return qosBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return qosGuaranteed
	}
	return qosBurstable
}

// addQOSAmounts adds the positive cpu and memory amounts of list to sums
// and reports which it found.
func addQOSAmounts(sums map[string]*big.Int, list map[string]any) map[string]bool {
	found := map[string]bool{}
	for _, name := range qosResources {
		q, ok := parseQuantity(list[name])
		if !ok || q.nanos.Sign() <= 0 {
			continue
		}
		found[name] = true
		if sums[name] == nil {
			sums[name] = new(big.Int)
		}
		sums[name].Add(sums[name], q.nanos)
	}
	return found
}

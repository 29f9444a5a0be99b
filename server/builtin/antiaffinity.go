package builtin

import (
	"context"
	"fmt"

	"platd/config"
	"platd/server/registry"
)

// hardAntiAffinityLimit is LimitPodHardAntiAffinityTopology's step: the
// terms of a pod's required anti-affinity may keep it only off nodes
// (hostname, the brand's hostname label, as topology key), never off a
// whole zone or any wider domain, which one pod could otherwise empty of
// every pod it repels.
type hardAntiAffinityLimit struct{ hostname string }

func newHardAntiAffinityLimit(b config.Brand) hardAntiAffinityLimit {
	return hardAntiAffinityLimit{hostname: b.Label("hostname")}
}

// validatePod refuses a pod written whose required anti-affinity has a
// term of another topology key, naming the first such key. Preferred
// terms are not limited.
func (a hardAntiAffinityLimit) validatePod(_ context.Context, _ registry.Lookup, obj, _ registry.Object) error {
	anti := mapOf(mapOf(mapOf(obj["spec"])["affinity"])["podAntiAffinity"])
	for _, term := range mapsOf(anti["requiredDuringSchedulingIgnoredDuringExecution"]) {
		if key := strOf(term["topologyKey"]); key != a.hostname {
			return &registry.Denial{Reason: fmt.Sprintf(
				"affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey %s but only key %s is allowed", key, a.hostname)}
		}
	}
	return nil
}

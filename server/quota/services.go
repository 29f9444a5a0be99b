package quota

import (
	"strconv"
	"time"

	"platd/server/registry"
)

// serviceResources are the names a service's usage carries.
var serviceResources = []string{CountName("", "services"), "services", "services.nodeports", "services.loadbalancers"}

// services measures services: their count, load balancers, and the node
// ports they ask for, as upstream's service evaluator. Updates are charged
// too: a service may become a load balancer.
type services struct{}

// Services returns the evaluator of services.
func Services() registry.QuotaEvaluator { return services{} }

func (services) MatchingResources(names []string) []string                    { return intersect(names, serviceResources) }
func (services) MatchesScope(registry.ScopeRequirement, registry.Object) bool { return false }
func (services) Constraints([]string, registry.Object) string                 { return "" }
func (services) ChargesUpdates() bool                                         { return true }

func (services) Usage(obj registry.Object, _ time.Time) map[string]string {
	spec := at(obj, "spec")
	ports := mapsOf(spec["ports"])
	out := map[string]string{
		CountName("", "services"): "1",
		"services":                "1",
		"services.loadbalancers":  "0",
		"services.nodeports":      "0",
	}
	switch str(spec, "type") {
	case "NodePort":
		out["services.nodeports"] = strconv.Itoa(len(ports))
	case "LoadBalancer":
		out["services.loadbalancers"] = "1"
		// Node ports are not allocated yet: count what the service asks
		// for, only the ports that name one when it asks for none.
		if alloc, ok := spec["allocateLoadBalancerNodePorts"].(bool); ok && !alloc {
			n := 0
			for _, p := range ports {
				if v, ok := number(p, "nodePort"); ok && v != 0 {
					n++
				}
			}
			out["services.nodeports"] = strconv.Itoa(n)
		} else {
			out["services.nodeports"] = strconv.Itoa(len(ports))
		}
	}
	return out
}

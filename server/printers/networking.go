package printers

import (
	"fmt"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addNetworking(p *Printers, b config.Brand) {
	g := b.Group("networking")
	p.add(g, "v1", "ingresses", columns(
		nameColumn(),
		col("Class", "string", "Ingress class that handles the ingress.", textSet(none, "spec", "ingressClassName")),
		col("Hosts", "string", "Hosts the rules match, the first few.", func(o registry.Object, _ time.Time) any {
			return ingressHosts(list(o, "spec", "rules"))
		}),
		col("Address", "string", "Addresses of the load balancer serving the ingress.", func(o registry.Object, _ time.Time) any {
			return strings.Join(loadBalancerAddresses(list(o, "status", "loadBalancer", "ingress")), ",")
		}),
		col("Ports", "string", "Ports the ingress serves: 80, and 443 with TLS.", func(o registry.Object, _ time.Time) any {
			if len(list(o, "spec", "tls")) != 0 {
				return "80, 443"
			}
			return "80"
		}),
		ageColumn(),
	))
	p.add(g, "v1", "ingressclasses", columns(
		nameColumn(),
		col("Controller", "string", "Controller that implements the class.", text("spec", "controller")),
		col("Parameters", "string", "Object holding the class's parameters, as kind.group/name.", func(o registry.Object, _ time.Time) any {
			params := object(o, "spec", "parameters")
			if params == nil {
				return none
			}
			s := str(params, "kind")
			if group, ok := strOK(params, "apiGroup"); ok {
				s += "." + group
			}
			return s + "/" + str(params, "name")
		}),
		ageColumn(),
	))
	p.add(g, "v1", "networkpolicies", columns(
		nameColumn(),
		col("Pod-Selector", "string", "Pods the policy applies to.", func(o registry.Object, _ time.Time) any {
			return formatSelector(object(o, "spec", "podSelector"))
		}),
		ageColumn(),
	))
}

// ingressHosts lists the rules' hosts, the first few, "*" when no rule
// names one. Any rule past the last one shown counts towards "+ N more...",
// which counts rules, not hosts.
func ingressHosts(rules []any) string {
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == listMax {
			more = true
			break
		}
		if h := str(r, "host"); h != "" {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	out := strings.Join(hosts, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", out, len(rules)-listMax)
	}
	return out
}

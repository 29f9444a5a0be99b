package builtin

import (
	"fmt"
	"net/netip"

	"platd/config"
	"platd/server/registry"
)

// serviceWarnings returns upstream's warnings about a written service:
// the deprecated topology annotation, addresses not in their canonical
// form, and fields its type ignores.
func serviceWarnings(b config.Brand) func(obj, old registry.Object) []string {
	hints := "service." + b.LongDomain + "/topology-aware-hints"
	mode := "service." + b.LongDomain + "/topology-mode"
	return func(obj, _ registry.Object) []string {
		var out []string
		if _, ok := mapAt(obj, "metadata", "annotations")[hints]; ok {
			out = append(out, fmt.Sprintf("annotation %s is deprecated, please use %s instead", hints, mode))
		}
		spec := mapOf(obj["spec"])
		if ip := str(spec, "clusterIP"); ip != "" && ip != clusterIPNone {
			for i, ip := range clusterIPs(spec) {
				out = append(out, ipWarnings(index("spec.clusterIPs", i), ip)...)
			}
		}
		for i, ip := range registry.Strings(spec["externalIPs"]) {
			out = append(out, ipWarnings(index("spec.externalIPs", i), ip)...)
		}
		if ip := str(spec, "loadBalancerIP"); ip != "" {
			out = append(out, ipWarnings("spec.loadBalancerIP", ip)...)
		}
		typ := str(spec, "type")
		if typ == serviceExternalName && len(listOf(spec["externalIPs"])) > 0 {
			out = append(out, fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", serviceExternalName))
		}
		if typ != serviceExternalName && str(spec, "externalName") != "" {
			out = append(out, fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", serviceExternalName))
		}
		return out
	}
}

// ipWarnings warns of an address the strict parser refuses (IPv4 octets
// with leading zeros) and of IPv6 not in its canonical form.
func ipWarnings(path, addr string) []string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return []string{fmt.Sprintf("%s: IP address was accepted, but will be invalid in a future Kubernetes release: %v", path, err)}
	}
	if ip.Is6() && ip.String() != addr {
		return []string{fmt.Sprintf("%s: IPv6 address %q is not in RFC 5952 canonical format (%q), which may cause controller apply-loops", path, addr, ip.String())}
	}
	return nil
}

package builtin

import (
	"net/netip"
	"reflect"

	"platd/config"
	"platd/server/pool"
	"platd/server/quota"
	"platd/server/registry"
)

// Service types, and the other closed sets of a service's fields.
const (
	serviceClusterIP    = "ClusterIP"
	serviceNodePort     = "NodePort"
	serviceLoadBalancer = "LoadBalancer"
	serviceExternalName = "ExternalName"

	affinityNone     = "None"
	affinityClientIP = "ClientIP"

	trafficCluster = "Cluster"
	trafficLocal   = "Local"

	familyIPv4 = "IPv4"
	familyIPv6 = "IPv6"

	policySingleStack      = "SingleStack"
	policyPreferDualStack  = "PreferDualStack"
	policyRequireDualStack = "RequireDualStack"

	// clusterIPNone marks a headless service.
	clusterIPNone = "None"
	// defaultAffinityTimeout is the ClientIP affinity timeout a service
	// gets (3 hours), maxAffinityTimeout the longest accepted (a day).
	defaultAffinityTimeout = 10800
	maxAffinityTimeout     = 86400
	// ipModeVIP is the ipMode a load balancer ingress with an IP gets.
	ipModeVIP = "VIP"
)

// Claim pools of services.
const (
	poolServiceIPs       = "serviceips"
	poolServiceNodePorts = "servicenodeports"
)

// ServiceRanges are what services are allocated from.
type ServiceRanges struct {
	ClusterIPs *pool.IPRange
	NodePorts  pool.PortRange
}

// DefaultServiceRanges are upstream's default ranges.
func DefaultServiceRanges() ServiceRanges {
	p, err := config.ParseServiceCIDR(config.DefaultServiceClusterIPRange)
	if err != nil {
		panic(err)
	}
	pr, err := config.ParsePortRange(config.DefaultServiceNodePortRange)
	if err != nil {
		panic(err)
	}
	return RangesFrom(p, pr)
}

// RangesFrom turns validated options into ServiceRanges.
func RangesFrom(cidr netip.Prefix, ports config.PortRange) ServiceRanges {
	ips, err := pool.NewIPRange(cidr)
	if err != nil {
		// config.ParseServiceCIDR accepts only ranges NewIPRange takes.
		panic(err)
	}
	return ServiceRanges{ClusterIPs: ips, NodePorts: pool.PortRange{Base: ports.Base, Size: ports.Size}}
}

// family is the IP family of the cluster IP range.
func (r ServiceRanges) family() string {
	if r.ClusterIPs.Is6() {
		return familyIPv6
	}
	return familyIPv4
}

// services: ep is the Endpoints resource, whose object of a service's name
// goes with the service, as upstream.
func services(b config.Brand, r ServiceRanges, ep *registry.Descriptor) *registry.Descriptor {
	d := core("services", "service", "Service", true, "svc")
	d.Quota = quota.Services()
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	d.SameNameDependents = []*registry.Descriptor{ep}
	d.Categories = []string{"all"}
	d.NameRule = registry.NameDNS1035
	d.UpdateCreates = true
	d.Subresources = []registry.Subresource{
		proxySubresource("ServiceProxyOptions"),
		{Name: "status", Verbs: statusVerbs, Keep: keepSpec, Validate: validateServiceStatusUpdate},
	}
	// kube-proxy watches only services with a cluster IP through
	// spec.clusterIP!=None.
	d.FieldSelectors = map[string]registry.FieldSelector{
		"spec.clusterIP": fieldGetter("spec", "clusterIP"),
		"spec.type":      fieldGetter("spec", "type"),
	}
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.Strategy.Default = defaultService
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		obj["status"] = map[string]any{"loadBalancer": map[string]any{}}
		normalizeClusterIPs(mapOf(obj["spec"]), nil)
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub != "" {
			return
		}
		spec, oldSpec := child(obj, "spec"), mapOf(old["spec"])
		patchAllocatedValues(spec, oldSpec)
		normalizeClusterIPs(spec, oldSpec)
		dropTypeDependentFields(obj, spec, oldSpec)
	}
	d.Strategy.Warnings = serviceWarnings(b)
	d.Strategy.Validate = validateService
	d.Strategy.ValidateUpdate = validateServiceUpdate
	d.Strategy.AdmissionSteps = []registry.AdmissionStep{{Plugin: config.PluginDenyServiceExternalIPs, Validate: denyNewExternalIPs}}
	a := serviceAllocator{r}
	d.Strategy.Claims = serviceClaims
	d.Strategy.Allocate = a.allocate
	return d
}

// externallyAccessible: NodePort and LoadBalancer services, and ClusterIP
// ones with external IPs.
func externallyAccessible(spec map[string]any) bool {
	switch str(spec, "type") {
	case serviceNodePort, serviceLoadBalancer:
		return true
	case serviceClusterIP:
		return len(listOf(spec["externalIPs"])) > 0
	}
	return false
}

// defaultService sets upstream's defaults of a written service, in
// upstream's order.
func defaultService(obj registry.Object) {
	spec := child(obj, "spec")
	if str(spec, "sessionAffinity") == "" {
		spec["sessionAffinity"] = affinityNone
	}
	switch str(spec, "sessionAffinity") {
	case affinityNone:
		delete(spec, "sessionAffinityConfig")
	case affinityClientIP:
		if !present(mapAt(spec, "sessionAffinityConfig", "clientIP"), "timeoutSeconds") {
			spec["sessionAffinityConfig"] = map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(defaultAffinityTimeout)}}
		}
	}
	if str(spec, "type") == "" {
		spec["type"] = serviceClusterIP
	}
	for _, p := range mapsOf(spec["ports"]) {
		if str(p, "protocol") == "" {
			p["protocol"] = protocolTCP
		}
		if tp, isInt := intOf(p["targetPort"]); (isInt && tp == 0) || p["targetPort"] == nil || p["targetPort"] == "" {
			p["targetPort"] = intAt(p, "port")
		}
	}
	typ := str(spec, "type")
	if externallyAccessible(spec) && str(spec, "externalTrafficPolicy") == "" {
		spec["externalTrafficPolicy"] = trafficCluster
	}
	if !present(spec, "internalTrafficPolicy") && (typ == serviceNodePort || typ == serviceLoadBalancer || typ == serviceClusterIP) {
		spec["internalTrafficPolicy"] = trafficCluster
	}
	if typ == serviceLoadBalancer {
		if !present(spec, "allocateLoadBalancerNodePorts") {
			spec["allocateLoadBalancerNodePorts"] = true
		}
		for _, ing := range mapsOf(valueAt(obj, "status", "loadBalancer", "ingress")) {
			if str(ing, "ip") != "" && !present(ing, "ipMode") {
				ing["ipMode"] = ipModeVIP
			}
		}
	}
}

// clusterIPs returns spec.clusterIPs as strings.
func clusterIPs(spec map[string]any) []string { return registry.Strings(spec["clusterIPs"]) }

// isHeadless: a service whose cluster IP is "None".
func isHeadless(spec map[string]any) bool { return str(spec, "clusterIP") == clusterIPNone }

// normalizeClusterIPs keeps clusterIP and clusterIPs in step for clients
// that write only the first (old is nil on create), as upstream.
func normalizeClusterIPs(spec, oldSpec map[string]any) {
	ip := str(spec, "clusterIP")
	if oldSpec == nil {
		if ip != "" && len(clusterIPs(spec)) == 0 {
			spec["clusterIPs"] = []any{ip}
		}
		return
	}
	oldIP := str(oldSpec, "clusterIP")
	// A client that knows only clusterIP and kept it keeps clusterIPs.
	if len(clusterIPs(oldSpec)) > 0 && len(clusterIPs(spec)) == 0 && oldIP == ip {
		spec["clusterIPs"] = oldSpec["clusterIPs"]
	}
	if oldIP != ip {
		same := reflect.DeepEqual(clusterIPs(spec), clusterIPs(oldSpec))
		if oldIP != "" && ip == "" && same {
			delete(spec, "clusterIPs")
		}
		if ip != "" && same {
			spec["clusterIPs"] = []any{ip}
		}
	}
}

func needsClusterIP(spec map[string]any) bool { return str(spec, "type") != serviceExternalName }

func needsNodePorts(spec map[string]any) bool {
	t := str(spec, "type")
	return t == serviceNodePort || t == serviceLoadBalancer
}

func needsHealthCheckPort(spec map[string]any) bool {
	return str(spec, "type") == serviceLoadBalancer && str(spec, "externalTrafficPolicy") == trafficLocal
}

// patchAllocatedValues carries allocated values an update leaves out into
// it, so writing back an older form of the object keeps them.
func patchAllocatedValues(spec, oldSpec map[string]any) {
	if needsClusterIP(oldSpec) && needsClusterIP(spec) {
		if str(spec, "clusterIP") == "" {
			if ip := str(oldSpec, "clusterIP"); ip != "" {
				spec["clusterIP"] = ip
			}
		}
		if len(clusterIPs(spec)) == 0 && len(clusterIPs(oldSpec)) > 0 {
			spec["clusterIPs"] = oldSpec["clusterIPs"]
		}
	}
	if needsNodePorts(oldSpec) && needsNodePorts(spec) {
		used := map[int64]bool{}
		inNew := map[int64]bool{}
		for _, p := range mapsOf(spec["ports"]) {
			inNew[intAt(p, "nodePort")] = true
		}
		byName := map[string]int64{}
		for _, p := range mapsOf(oldSpec["ports"]) {
			np := intAt(p, "nodePort")
			if inNew[np] {
				used[np] = true
			}
			byName[str(p, "name")] = np
		}
		for _, p := range mapsOf(spec["ports"]) {
			if intAt(p, "nodePort") == 0 {
				if np := byName[str(p, "name")]; np != 0 && !used[np] {
					p["nodePort"] = np
				}
			}
		}
	}
	if needsHealthCheckPort(oldSpec) && needsHealthCheckPort(spec) && intAt(spec, "healthCheckNodePort") == 0 {
		if hc := intAt(oldSpec, "healthCheckNodePort"); hc != 0 {
			spec["healthCheckNodePort"] = hc
		}
	}
}

// dropTypeDependentFields clears, on a type change, the values the old
// type needed and the new one does not, unless the update changed them.
func dropTypeDependentFields(obj registry.Object, spec, oldSpec map[string]any) {
	same := func(k string) bool { return semanticEqual(spec[k], oldSpec[k]) }
	if needsClusterIP(oldSpec) && !needsClusterIP(spec) {
		if same("clusterIPs") {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		if same("ipFamilies") {
			delete(spec, "ipFamilies")
		}
		if same("ipFamilyPolicy") {
			delete(spec, "ipFamilyPolicy")
		}
	}
	if needsNodePorts(oldSpec) && !needsNodePorts(spec) && sameNodePorts(spec, oldSpec) {
		for _, p := range mapsOf(spec["ports"]) {
			delete(p, "nodePort")
		}
	}
	if needsHealthCheckPort(oldSpec) && !needsHealthCheckPort(spec) && same("healthCheckNodePort") {
		delete(spec, "healthCheckNodePort")
	}
	if str(oldSpec, "type") == serviceLoadBalancer && str(spec, "type") != serviceLoadBalancer {
		if present(spec, "allocateLoadBalancerNodePorts") && present(oldSpec, "allocateLoadBalancerNodePorts") && same("allocateLoadBalancerNodePorts") {
			delete(spec, "allocateLoadBalancerNodePorts")
		}
		if same("loadBalancerClass") {
			delete(spec, "loadBalancerClass")
		}
	}
	if externallyAccessible(oldSpec) && !externallyAccessible(spec) && same("externalTrafficPolicy") {
		delete(spec, "externalTrafficPolicy")
	}
	if str(spec, "type") != serviceLoadBalancer {
		child(obj, "status")["loadBalancer"] = map[string]any{}
	}
}

// sameNodePorts reports whether both specs list the same node ports in
// the same order.
func sameNodePorts(spec, oldSpec map[string]any) bool {
	a, b := mapsOf(spec["ports"]), mapsOf(oldSpec["ports"])
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if intAt(a[i], "nodePort") != intAt(b[i], "nodePort") {
			return false
		}
	}
	return true
}

package builtin

import (
	"fmt"
	"net/netip"
	"strings"

	"platd/server/apierr"
	"platd/server/registry"
)

// Closed value sets of a service, sorted as upstream lists them.
var (
	serviceTypes       = []string{serviceClusterIP, serviceExternalName, serviceLoadBalancer, serviceNodePort}
	sessionAffinities  = []string{affinityClientIP, affinityNone}
	trafficPolicies    = []string{trafficCluster, trafficLocal}
	ipFamilies         = []string{familyIPv4, familyIPv6}
	ipFamilyPolicies   = []string{policyPreferDualStack, policyRequireDualStack, policySingleStack}
	loadBalancerIPMode = []string{"Proxy", ipModeVIP}
)

// trafficPreferClose is the one traffic distribution v1.32 knows.
const trafficPreferClose = "PreferClose"

// kubeletPort may not be exposed by a load balancer: clouds open firewalls
// for what load balancers expose.
const kubeletPort = 10250

// validateService checks a service as upstream's ValidateService, in its
// order.
func validateService(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	add := func(e ...*apierr.FieldError) { errs = append(errs, e...) }
	spec := mapOf(obj["spec"])
	typ := str(spec, "type")
	headless := isHeadless(spec)
	ports := mapsOf(spec["ports"])
	ips := clusterIPs(spec)
	if len(ports) == 0 && !headless && typ != serviceExternalName {
		add(apierr.Required("spec.ports", ""))
	}
	switch typ {
	case serviceLoadBalancer:
		if headless {
			add(apierr.Invalid("spec.clusterIPs[0]", firstOr(ips), "may not be set to 'None' for LoadBalancer services"))
		}
		for i, p := range ports {
			if intAt(p, "port") == kubeletPort {
				add(apierr.Invalid(index("spec.ports", i), intAt(p, "port"), fmt.Sprintf("may not expose port %d externally since it is used by kubelet", kubeletPort)))
			}
		}
		if headless {
			add(apierr.Invalid("spec.clusterIP", str(spec, "clusterIP"), "may not be set to 'None' for LoadBalancer services"))
		}
	case serviceNodePort:
		if headless {
			add(apierr.Invalid("spec.clusterIPs[0]", firstOr(ips), "may not be set to 'None' for NodePort services"))
		}
	case serviceExternalName:
		if len(ips) > 0 {
			add(apierr.Forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
		}
		if len(listOf(spec["ipFamilies"])) > 0 {
			add(apierr.Forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
		}
		if present(spec, "ipFamilyPolicy") {
			add(apierr.Forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
		}
		// A trailing dot marks the name fully qualified.
		if cname := strings.TrimSuffix(str(spec, "externalName"), "."); cname != "" {
			add(dnsSubdomain(cname, pathOf("spec.externalName"))...)
		} else {
			add(apierr.Required("spec.externalName", ""))
		}
	}
	names := map[string]bool{}
	for i, p := range ports {
		add(validateServicePort(p, len(ports) > 1, names, pathOf(index("spec.ports", i)))...)
	}
	if sel := mapOf(spec["selector"]); sel != nil {
		add(validateLabels(sel, "spec.selector")...)
	}
	switch aff := str(spec, "sessionAffinity"); aff {
	case "":
		add(apierr.Required("spec.sessionAffinity", ""))
	case affinityClientIP:
		add(validateClientIPAffinity(spec)...)
	case affinityNone:
		if present(spec, "sessionAffinityConfig") {
			add(apierr.Forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
		}
	default:
		add(apierr.NotSupported("spec.sessionAffinity", aff, sessionAffinities))
	}
	add(validateClusterIPFields(spec)...)
	for i, ip := range registry.Strings(spec["externalIPs"]) {
		p := index("spec.externalIPs", i)
		if e := validateIP(ip, pathOf(p)); len(e) > 0 {
			add(e...)
		} else {
			add(validateEndpointIP(p, ip)...)
		}
	}
	switch {
	case typ == "":
		add(apierr.Required("spec.type", ""))
	case !contains(serviceTypes, typ):
		add(apierr.NotSupported("spec.type", typ, serviceTypes))
	}
	if typ == serviceClusterIP {
		for i, p := range ports {
			if intAt(p, "nodePort") != 0 {
				add(apierr.Forbidden(index("spec.ports", i)+".nodePort", "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	// Node ports and ports are unique per protocol.
	type protoPort struct {
		proto string
		port  int64
	}
	seenNode, seenPort := map[protoPort]bool{}, map[protoPort]bool{}
	for i, p := range ports {
		if np := intAt(p, "nodePort"); np != 0 {
			k := protoPort{str(p, "protocol"), np}
			if seenNode[k] {
				add(apierr.Duplicate(index("spec.ports", i)+".nodePort", np))
			}
			seenNode[k] = true
		}
	}
	for i, p := range ports {
		k := protoPort{str(p, "protocol"), intAt(p, "port")}
		if seenPort[k] {
			add(apierr.Duplicate(index("spec.ports", i), goSyntax(fmt.Sprintf("core.ServicePort{Name:\"\", Protocol:%q, AppProtocol:(*string)(nil), Port:%d, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}", k.proto, k.port))))
		}
		seenPort[k] = true
	}
	if ranges := registry.Strings(spec["loadBalancerSourceRanges"]); len(ranges) > 0 {
		const p = "spec.LoadBalancerSourceRanges"
		if typ != serviceLoadBalancer {
			add(apierr.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, v := range ranges {
			v = strings.TrimSpace(v)
			if _, ok := parseCIDRSloppy(v); !ok {
				add(apierr.Invalid(index(p, i), v, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
			}
		}
	}
	if present(spec, "allocateLoadBalancerNodePorts") && typ != serviceLoadBalancer {
		add(apierr.Forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"))
	}
	if typ == serviceLoadBalancer && !present(spec, "allocateLoadBalancerNodePorts") {
		// Upstream names this path without its "spec." prefix.
		add(apierr.Required("allocateLoadBalancerNodePorts", ""))
	}
	if present(spec, "loadBalancerClass") {
		class := str(spec, "loadBalancerClass")
		if typ != serviceLoadBalancer {
			add(apierr.Forbidden("spec.loadBalancerClass", "may only be used when `type` is 'LoadBalancer'"))
		} else {
			add(qualifiedName(class, pathOf("spec.loadBalancerClass"))...)
		}
	}
	add(validateTrafficPolicies(spec)...)
	return errs
}

// portAndProtocol checks the port number and protocol of a service or
// endpoints port: 1 to 65535, and one of the port protocols.
func portAndProtocol(p map[string]any, path fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if port := intAt(p, "port"); port < 1 || port > maxPortNumber {
		errs = append(errs, apierr.Invalid(path.child("port").String(), port, inclusiveRange(1, maxPortNumber)))
	}
	switch proto := str(p, "protocol"); {
	case proto == "":
		errs = append(errs, apierr.Required(path.child("protocol").String(), ""))
	case !contains(portProtocols, proto):
		errs = append(errs, apierr.NotSupported(path.child("protocol").String(), proto, portProtocols))
	}
	return errs
}

// validateServicePort checks one port; names must be unique, and present
// when the service has more than one port.
func validateServicePort(p map[string]any, requireName bool, names map[string]bool, path fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	name := str(p, "name")
	switch {
	case requireName && name == "":
		errs = append(errs, apierr.Required(path.child("name").String(), ""))
	case name != "":
		errs = append(errs, dnsLabel(name, path.child("name"))...)
		if names[name] {
			errs = append(errs, apierr.Duplicate(path.child("name").String(), name))
		}
		names[name] = true
	}
	errs = append(errs, portAndProtocol(p, path)...)
	errs = append(errs, validatePortNumOrName(p["targetPort"], path.child("targetPort"))...)
	if present(p, "appProtocol") {
		errs = append(errs, qualifiedName(str(p, "appProtocol"), path.child("appProtocol"))...)
	}
	return errs
}

func validateClientIPAffinity(spec map[string]any) apierr.FieldErrors {
	const p = "spec.sessionAffinityConfig"
	const msg = "when session affinity type is ClientIP"
	cfg := mapOf(spec["sessionAffinityConfig"])
	switch {
	case cfg == nil:
		return apierr.FieldErrors{apierr.Required(p, msg)}
	case mapOf(cfg["clientIP"]) == nil:
		return apierr.FieldErrors{apierr.Required(p+".clientIP", msg)}
	case !present(mapOf(cfg["clientIP"]), "timeoutSeconds"):
		return apierr.FieldErrors{apierr.Required(p+".clientIP.timeoutSeconds", msg)}
	}
	if t := intAt(cfg, "clientIP", "timeoutSeconds"); t <= 0 || t > maxAffinityTimeout {
		return apierr.FieldErrors{apierr.Invalid(p+".clientIP.timeoutSeconds", t, fmt.Sprintf("must be greater than 0 and less than %d", maxAffinityTimeout))}
	}
	return nil
}

// validateClusterIPFields checks clusterIP, clusterIPs, ipFamilies and
// ipFamilyPolicy together, as upstream's ValidateServiceClusterIPsRelatedFields.
func validateClusterIPFields(spec map[string]any) apierr.FieldErrors {
	if str(spec, "type") == serviceExternalName {
		return nil
	}
	var errs apierr.FieldErrors
	const ipsPath = "spec.clusterIPs"
	ips := clusterIPs(spec)
	ipsValue := goStrings("string", listOf(spec["clusterIPs"]))
	if ip := str(spec, "clusterIP"); ip != "" {
		if len(ips) == 0 {
			errs = append(errs, apierr.Required(ipsPath, ""))
		} else if ips[0] != ip {
			errs = append(errs, apierr.Invalid(ipsPath, ipsValue, "first value must match `clusterIP`"))
		}
	} else if len(ips) != 0 {
		errs = append(errs, apierr.Invalid(ipsPath, ipsValue, "must be empty when `clusterIP` is not specified"))
	}
	families := registry.Strings(spec["ipFamilies"])
	seen := map[string]bool{}
	for i, f := range families {
		if !contains(ipFamilies, f) {
			errs = append(errs, apierr.NotSupported(index("spec.ipFamilies", i), f, ipFamilies))
		}
		if seen[f] {
			errs = append(errs, apierr.Duplicate(index("spec.ipFamilies", i), f))
		}
		seen[f] = true
	}
	if present(spec, "ipFamilyPolicy") {
		if pol := str(spec, "ipFamilyPolicy"); !contains(ipFamilyPolicies, pol) {
			errs = append(errs, apierr.NotSupported("spec.ipFamilyPolicy", pol, ipFamilyPolicies))
		}
	}
	badIPs := false
	for i, ip := range ips {
		if i == 0 && ip == clusterIPNone {
			if len(ips) > 1 {
				badIPs = true
				errs = append(errs, apierr.Invalid(ipsPath, ipsValue, "'None' must be the first and only value"))
			}
			continue
		}
		if e := validateIP(ip, pathOf(index(ipsPath, i))); len(e) > 0 {
			badIPs = true
			errs = append(errs, e...)
		}
	}
	if len(ips) > 2 {
		errs = append(errs, apierr.Invalid(ipsPath, ipsValue, "may only hold up to 2 values"))
	}
	if badIPs {
		return errs
	}
	if len(ips) > 1 && is6(ips[0]) == is6(ips[1]) {
		errs = append(errs, apierr.Invalid(ipsPath, ipsValue, "may specify no more than one IP for each IP family"))
	}
	if !isHeadless(spec) {
		for i, ip := range ips {
			if i >= len(families) {
				break
			}
			if families[i] == familyIPv4 && is6(ip) {
				errs = append(errs, apierr.Invalid(index(ipsPath, i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%d]`", i)))
			}
			if families[i] == familyIPv6 && !is6(ip) {
				errs = append(errs, apierr.Invalid(index(ipsPath, i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%d]`", i)))
			}
		}
	}
	return errs
}

// validateTrafficPolicies checks the external and internal traffic
// policies, the health check node port and the traffic distribution.
func validateTrafficPolicies(spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	etp := str(spec, "externalTrafficPolicy")
	if !externallyAccessible(spec) {
		if etp != "" {
			errs = append(errs, apierr.Invalid("spec.externalTrafficPolicy", etp, "may only be set for externally-accessible services"))
		}
	} else if etp == "" {
		errs = append(errs, apierr.Required("spec.externalTrafficPolicy", ""))
	} else if !contains(trafficPolicies, etp) {
		errs = append(errs, apierr.NotSupported("spec.externalTrafficPolicy", etp, trafficPolicies))
	}
	hc := intAt(spec, "healthCheckNodePort")
	if !needsHealthCheckPort(spec) {
		if hc != 0 {
			errs = append(errs, apierr.Invalid("spec.healthCheckNodePort", hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if hc == 0 {
		errs = append(errs, apierr.Required("spec.healthCheckNodePort", ""))
	} else if hc < 1 || hc > maxPortNumber {
		errs = append(errs, apierr.Invalid("spec.healthCheckNodePort", hc, inclusiveRange(1, maxPortNumber)))
	}
	typ := str(spec, "type")
	if !present(spec, "internalTrafficPolicy") {
		if typ == serviceNodePort || typ == serviceLoadBalancer || typ == serviceClusterIP {
			errs = append(errs, apierr.Required("spec.internalTrafficPolicy", "must be specified when type is one of ClusterIP, NodePort, LoadBalancer"))
		}
	} else if itp := str(spec, "internalTrafficPolicy"); !contains(trafficPolicies, itp) {
		errs = append(errs, apierr.NotSupported("spec.internalTrafficPolicy", itp, trafficPolicies))
	}
	if present(spec, "trafficDistribution") {
		if td := str(spec, "trafficDistribution"); td != trafficPreferClose {
			errs = append(errs, apierr.NotSupported("spec.trafficDistribution", td, []string{trafficPreferClose}))
		}
	}
	return errs
}

// validateServiceUpdate: cluster IPs may not change while the service
// keeps any, a set load balancer class stays, so does the health check
// port while one is needed, and the service stays valid.
func validateServiceUpdate(obj, old registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	if str(spec, "type") != serviceExternalName && str(oldSpec, "type") != serviceExternalName && !(isHeadless(spec) && isHeadless(oldSpec)) {
		ips, oldIPs := clusterIPs(spec), clusterIPs(oldSpec)
		value := goStrings("string", listOf(spec["clusterIPs"]))
		const msg = "may not change once set"
		switch {
		case len(ips) == len(oldIPs):
			for i := range oldIPs {
				if ips[i] != oldIPs[i] {
					errs = append(errs, apierr.Invalid(index("spec.clusterIPs", i), value, msg))
				}
			}
		case len(oldIPs) > len(ips):
			if len(ips) == 0 {
				errs = append(errs, apierr.Invalid("spec.clusterIPs[0]", value, "primary clusterIP can not be unset"))
			} else if ips[0] != oldIPs[0] {
				errs = append(errs, apierr.Invalid("spec.clusterIPs[0]", value, msg))
			}
			if len(ips) == 1 && str(spec, "ipFamilyPolicy") != policySingleStack {
				errs = append(errs, apierr.Invalid("spec.clusterIPs[0]", value, "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary clusterIP"))
			}
		default:
			if len(oldIPs) > 0 && ips[0] != oldIPs[0] {
				errs = append(errs, apierr.Invalid("spec.clusterIPs[0]", value, msg))
			}
		}
		fams, oldFams := registry.Strings(spec["ipFamilies"]), registry.Strings(oldSpec["ipFamilies"])
		if len(fams) > 0 && len(oldFams) > 0 && fams[0] != oldFams[0] {
			errs = append(errs, apierr.Invalid("spec.ipFamilies[0]", fams[0], "may not change once set"))
		}
	}
	if str(oldSpec, "type") == serviceLoadBalancer && str(spec, "type") == serviceLoadBalancer &&
		present(oldSpec, "loadBalancerClass") && !semanticEqual(spec["loadBalancerClass"], oldSpec["loadBalancerClass"]) {
		errs = append(errs, apierr.Invalid("spec.loadBalancerClass", spec["loadBalancerClass"], "may not change once set"))
	}
	if needsHealthCheckPort(oldSpec) && needsHealthCheckPort(spec) && intAt(spec, "healthCheckNodePort") != intAt(oldSpec, "healthCheckNodePort") {
		errs = append(errs, apierr.Forbidden("spec.healthCheckNodePort", "field is immutable"))
	}
	return append(errs, validateService(obj)...)
}

// validateServiceStatusUpdate checks the load balancer status and the
// conditions a status write sets.
func validateServiceStatusUpdate(obj, _ registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	const p = "status.loadBalancer.ingress"
	ingress := mapsOf(valueAt(obj, "status", "loadBalancer", "ingress"))
	conditions := validateConditions(listAt(obj, "status", "conditions"), "status.conditions")
	if str(obj, "spec", "type") != serviceLoadBalancer && len(ingress) > 0 {
		return append(apierr.FieldErrors{apierr.Forbidden(p, "may only be used when `spec.type` is 'LoadBalancer'")}, conditions...)
	}
	for i, ing := range ingress {
		ip := str(ing, "ip")
		ip0 := pathOf(index(p, i))
		if ip != "" {
			errs = append(errs, validateIP(ip, ip0.child("ip"))...)
		}
		switch {
		case !present(ing, "ipMode"):
			if ip != "" {
				errs = append(errs, apierr.Required(ip0.child("ipMode").String(), "must be specified when `ip` is set"))
			}
		case ip == "":
			errs = append(errs, apierr.Forbidden(ip0.child("ipMode").String(), "may not be specified when `ip` is not set"))
		case !contains(loadBalancerIPMode, str(ing, "ipMode")):
			errs = append(errs, apierr.NotSupported(ip0.child("ipMode").String(), str(ing, "ipMode"), loadBalancerIPMode))
		}
		if h := str(ing, "hostname"); h != "" {
			errs = append(errs, dnsSubdomain(h, ip0.child("hostname"))...)
			if parseIPSloppy(h) != nil {
				errs = append(errs, apierr.Invalid(ip0.child("hostname").String(), h, "must be a DNS name, not an IP address"))
			}
		}
	}
	return append(errs, conditions...)
}

// is6 reports whether ip is an IPv6 address.
func is6(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.Is6() && !a.Is4In6()
}

// firstOr returns the first element, or "".
func firstOr(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return l[0]
}

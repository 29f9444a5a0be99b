package builtin

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"platd/server/apierr"
	"platd/server/pool"
	"platd/server/registry"
)

// serviceAllocator hands out cluster IPs and node ports from the
// configured ranges; who holds what is the store's claim records.
type serviceAllocator struct{ r ServiceRanges }

func ipClaim(ip string) registry.Claim {
	return registry.Claim{Pool: poolServiceIPs, Value: canonicalIP(ip)}
}

func portClaim(port int64) registry.Claim {
	return registry.Claim{Pool: poolServiceNodePorts, Value: strconv.FormatInt(port, 10)}
}

// canonicalIP is the one spelling of an address a claim is recorded
// under, so "010.0.0.1" and "10.0.0.1" are the same claim.
func canonicalIP(ip string) string {
	if a, err := netip.ParseAddr(ip); err == nil {
		return a.Unmap().String()
	}
	if parsed := parseIPSloppy(ip); parsed != nil {
		if a, ok := netip.AddrFromSlice(parsed); ok {
			return a.Unmap().String()
		}
	}
	return ip
}

// serviceClaims are the cluster IPs, node ports and health check node port
// a service's type uses.
func serviceClaims(obj registry.Object) []registry.Claim {
	spec := mapOf(obj["spec"])
	var out []registry.Claim
	add := func(c registry.Claim) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if needsClusterIP(spec) {
		for _, ip := range clusterIPs(spec) {
			if ip != "" && ip != clusterIPNone {
				add(ipClaim(ip))
			}
		}
	}
	// Node ports count only for the types that use them, as upstream
	// allocates them: others keep what they are sent.
	if needsNodePorts(spec) {
		for _, p := range mapsOf(spec["ports"]) {
			if np := intAt(p, "nodePort"); np != 0 {
				add(portClaim(np))
			}
		}
	}
	if hc := intAt(spec, "healthCheckNodePort"); hc != 0 && needsHealthCheckPort(spec) {
		add(portClaim(hc))
	}
	return out
}

// allocate fills in the IP families, cluster IPs and node ports a service
// needs and checks those it asks for, as upstream's allocators (old is nil
// on create).
func (a serviceAllocator) allocate(obj, old registry.Object, free func(registry.Claim) bool) (apierr.FieldErrors, error) {
	spec := child(obj, "spec")
	var oldSpec map[string]any
	if old != nil {
		oldSpec = mapOf(old["spec"])
	}
	if errs := a.initFamilies(spec, oldSpec); len(errs) > 0 {
		return errs, nil
	}
	// Values this request takes are not free for its other fields.
	mine := map[registry.Claim]bool{}
	isFree := func(c registry.Claim) bool { return !mine[c] && free(c) }
	if needsClusterIP(spec) && !isHeadless(spec) && (oldSpec == nil || !needsClusterIP(oldSpec)) {
		if errs, err := a.allocClusterIPs(spec, isFree, mine); len(errs) > 0 || err != nil {
			return errs, err
		}
	}
	// On update the old object's ports count as free (they are its own
	// claims), but upstream's allocator holds them while the update runs:
	// none is picked for a new use, and one asked for in another role (a
	// node port as the health check port, or the reverse) is taken.
	var held heldPorts
	if oldSpec != nil {
		held = heldPortsOf(oldSpec)
	}
	pickFree := func(c registry.Claim) bool { return isFree(c) && !held.has(c) }
	if needsNodePorts(spec) {
		if errs, err := a.allocNodePorts(spec, held, isFree, pickFree, mine); len(errs) > 0 || err != nil {
			return errs, err
		}
	}
	if needsHealthCheckPort(spec) {
		return nil, a.allocHealthCheckPort(spec, held, isFree, pickFree, mine)
	}
	return nil, nil
}

// heldPorts are the ports an old service holds: its node ports and its
// health check port.
type heldPorts struct {
	nodePorts   map[int64]bool
	healthCheck int64
}

func heldPortsOf(spec map[string]any) heldPorts {
	h := heldPorts{nodePorts: map[int64]bool{}}
	if needsNodePorts(spec) {
		for _, p := range mapsOf(spec["ports"]) {
			if np := intAt(p, "nodePort"); np != 0 {
				h.nodePorts[np] = true
			}
		}
	}
	if needsHealthCheckPort(spec) {
		h.healthCheck = intAt(spec, "healthCheckNodePort")
	}
	return h
}

func (h heldPorts) has(c registry.Claim) bool {
	for np := range h.nodePorts {
		if portClaim(np) == c {
			return true
		}
	}
	return h.healthCheck != 0 && portClaim(h.healthCheck) == c
}

// initFamilies defaults ipFamilyPolicy and ipFamilies from the cluster's
// one family and checks what the service asks for against it.
func (a serviceAllocator) initFamilies(spec, oldSpec map[string]any) apierr.FieldErrors {
	if str(spec, "type") == serviceExternalName {
		return nil
	}
	headlessNoSelector := isHeadless(spec) && len(mapOf(spec["selector"])) == 0
	if !present(spec, "ipFamilyPolicy") {
		switch {
		case oldSpec != nil && present(oldSpec, "ipFamilyPolicy"):
			spec["ipFamilyPolicy"] = oldSpec["ipFamilyPolicy"]
		case headlessNoSelector:
			spec["ipFamilyPolicy"] = policyRequireDualStack
		default:
			spec["ipFamilyPolicy"] = policySingleStack
		}
	}
	if errs := validateClusterIPFields(spec); len(errs) > 0 {
		return errs
	}
	policy := str(spec, "ipFamilyPolicy")
	if oldSpec != nil && policy == policySingleStack {
		// Single-stack keeps only the primary IP and family.
		if l := listOf(spec["clusterIPs"]); len(l) > 1 && semanticEqual(spec["clusterIPs"], oldSpec["clusterIPs"]) {
			spec["clusterIPs"] = l[:1]
		}
		if l := listOf(spec["ipFamilies"]); len(l) > 1 && semanticEqual(spec["ipFamilies"], oldSpec["ipFamilies"]) {
			spec["ipFamilies"] = l[:1]
		}
	}
	var errs apierr.FieldErrors
	if policy == policySingleStack {
		if len(clusterIPs(spec)) == 2 {
			errs = append(errs, apierr.Invalid("spec.ipFamilyPolicy", policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(listOf(spec["ipFamilies"])) == 2 {
			errs = append(errs, apierr.Invalid("spec.ipFamilyPolicy", policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	families := registry.Strings(spec["ipFamilies"])
	ipsValue := goStrings("string", listOf(spec["clusterIPs"]))
	for i, ip := range clusterIPs(spec) {
		if ip == clusterIPNone {
			break
		}
		fam := familyIPv4
		if is6(ip) {
			fam = familyIPv6
		}
		if i >= len(families) {
			if fam != a.r.family() {
				errs = append(errs, apierr.Invalid(index("spec.clusterIPs", i), ipsValue, fam+" is not configured on this cluster"))
			} else {
				families = append(families, fam)
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	setFamilies := func() {
		l := make([]any, len(families))
		for i, f := range families {
			l[i] = f
		}
		spec["ipFamilies"] = l
	}
	if headlessNoSelector {
		if len(families) == 0 {
			families = []string{a.r.family()}
		}
		// A headless service without selector may name both families
		// even on a single-stack cluster.
		if len(families) < 2 && policy != policySingleStack {
			other := familyIPv6
			if families[0] == familyIPv6 {
				other = familyIPv4
			}
			families = append(families, other)
		}
		setFamilies()
		return nil
	}
	if policy == policyRequireDualStack {
		errs = append(errs, apierr.Invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range families {
		if f != a.r.family() {
			errs = append(errs, apierr.Invalid(index("spec.ipFamilies", i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if len(families) == 0 {
		families = []string{a.r.family()}
	}
	setFamilies()
	return nil
}

// allocClusterIPs picks or checks the service's cluster IP.
func (a serviceAllocator) allocClusterIPs(spec map[string]any, isFree func(registry.Claim) bool, mine map[registry.Claim]bool) (apierr.FieldErrors, error) {
	ips := listOf(spec["clusterIPs"])
	ip := ""
	if len(ips) > 0 {
		ip = strOf(ips[0])
	}
	r := a.r.ClusterIPs
	if ip == "" {
		off, err := pool.Pick(r.Size(), func(o uint64) bool { return !isFree(ipClaim(r.At(o).String())) })
		if err != nil {
			return nil, apierr.InternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
		}
		ip = r.At(off).String()
	} else {
		fail := func(why string) apierr.FieldErrors {
			return apierr.FieldErrors{apierr.Invalid("spec.clusterIPs", goStrings("string", ips), fmt.Sprintf("failed to allocate IP %s: %s", ip, why))}
		}
		addr, err := netip.ParseAddr(canonicalIP(ip))
		if _, in := r.Offset(addr); err != nil || !in {
			return fail("provided IP is not in the valid range. The range of valid IPs is " + r.String()), nil
		}
		if !isFree(ipClaim(ip)) {
			return fail("provided IP is already allocated"), nil
		}
	}
	mine[ipClaim(ip)] = true
	if len(ips) == 0 {
		ips = []any{ip}
	} else {
		ips[0] = ip
	}
	spec["clusterIPs"] = ips
	spec["clusterIP"] = ip
	return nil, nil
}

// allocNodePorts checks the node ports a NodePort or LoadBalancer service
// asks for and picks the missing ones; ports with the same number share a
// node port, as upstream.
func (a serviceAllocator) allocNodePorts(spec map[string]any, held heldPorts, isFree, pickFree func(registry.Claim) bool, mine map[registry.Claim]bool) (apierr.FieldErrors, error) {
	r := a.r.NodePorts
	ports := mapsOf(spec["ports"])
	byPort := map[int64]int64{}
	for i, p := range ports {
		np := intAt(p, "nodePort")
		if np == 0 {
			continue
		}
		if _, seen := byPort[intAt(p, "port")]; !seen {
			byPort[intAt(p, "port")] = np
		}
		if held.nodePorts[np] || mine[portClaim(np)] {
			continue
		}
		path := index("spec.ports", i) + ".nodePort"
		if !r.Contains(np) {
			return apierr.FieldErrors{apierr.Invalid(path, np, "provided port is not in the valid range. The range of valid ports is "+r.String())}, nil
		}
		if !isFree(portClaim(np)) || np == held.healthCheck {
			return apierr.FieldErrors{apierr.Invalid(path, np, "provided port is already allocated")}, nil
		}
		mine[portClaim(np)] = true
	}
	if str(spec, "type") == serviceLoadBalancer && !boolOf(spec["allocateLoadBalancerNodePorts"]) {
		// Ports asked for are honoured; none are picked.
		return nil, nil
	}
	for _, p := range ports {
		if intAt(p, "nodePort") != 0 {
			continue
		}
		if np := byPort[intAt(p, "port")]; np != 0 {
			p["nodePort"] = np
			continue
		}
		np, err := a.pickPort(pickFree)
		if err != nil {
			return nil, apierr.InternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
		}
		mine[portClaim(np)] = true
		p["nodePort"] = np
		byPort[intAt(p, "port")] = np
	}
	return nil, nil
}

// allocHealthCheckPort gives a LoadBalancer service with the Local
// external traffic policy its health check node port.
func (a serviceAllocator) allocHealthCheckPort(spec map[string]any, held heldPorts, isFree, pickFree func(registry.Claim) bool, mine map[registry.Claim]bool) error {
	hc := intAt(spec, "healthCheckNodePort")
	if hc == 0 {
		np, err := a.pickPort(pickFree)
		if err != nil {
			return fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %w", 0, err)
		}
		mine[portClaim(np)] = true
		spec["healthCheckNodePort"] = np
		return nil
	}
	if held.healthCheck == hc {
		return nil
	}
	switch {
	case !a.r.NodePorts.Contains(hc):
		return fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: provided port is not in the valid range. The range of valid ports is %s", hc, a.r.NodePorts)
	case !isFree(portClaim(hc)) || held.nodePorts[hc]:
		return fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: provided port is already allocated", hc)
	}
	mine[portClaim(hc)] = true
	return nil
}

// pickPort picks a free node port.
func (a serviceAllocator) pickPort(isFree func(registry.Claim) bool) (int64, error) {
	r := a.r.NodePorts
	off, err := pool.Pick(uint64(r.Size), func(o uint64) bool { return !isFree(portClaim(int64(r.Base) + int64(o))) })
	if err != nil {
		return 0, err
	}
	return int64(r.Base) + int64(off), nil
}

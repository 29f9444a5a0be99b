package builtin

import (
	"fmt"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

func networkingV1(b config.Brand) []*registry.Descriptor {
	g := b.Group("networking")
	classes, ing := ingressClasses(g), ingresses(g, b)
	ing.Strategy.AdmissionSteps = append(ing.Strategy.AdmissionSteps,
		registry.AdmissionStep{Plugin: config.PluginDefaultIngressClass, Admit: defaultIngressClass(b, classes).admit})
	return []*registry.Descriptor{classes, ing, networkPolicies(g)}
}

// defaultIngressClass gives a new Ingress naming no class, by field or
// legacy annotation, the IngressClass annotated as the default.
func defaultIngressClass(b config.Brand, classes *registry.Descriptor) defaultClass {
	return defaultClass{
		classes:   classes,
		isDefault: annotatedTrue("ingressclass." + b.LongDomain + "/is-default-class"),
		named:     classNamed("ingressClassName", b.Label("ingress.class")),
		field:     "ingressClassName",
	}
}

// ingressClassControllerMax bounds an IngressClass controller name.
const ingressClassControllerMax = 250

// Scopes of an IngressClass's parameters.
const (
	parametersScopeCluster   = "Cluster"
	parametersScopeNamespace = "Namespace"
)

// parametersScopes are the accepted scopes, sorted.
var parametersScopes = []string{parametersScopeCluster, parametersScopeNamespace}

func ingressClasses(group string) *registry.Descriptor {
	d := groupType(group, "ingressclasses", "ingressclass", "IngressClass", false)
	d.Strategy.Default = func(obj registry.Object) {
		// Parameters without a scope name a cluster-scoped object.
		if p := mapAt(obj, "spec", "parameters"); p != nil && !present(p, "scope") {
			p["scope"] = parametersScopeCluster
		}
	}
	d.Strategy.PrepareForCreate = startGeneration
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = validateIngressClass
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		var errs apierr.FieldErrors
		if c := str(obj, "spec", "controller"); c != str(old, "spec", "controller") {
			errs = append(errs, apierr.Invalid("spec.controller", c, fieldImmutable))
		}
		return append(errs, validateIngressClass(obj)...)
	}
	return d
}

func validateIngressClass(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	controller := str(obj, "spec", "controller")
	if len(controller) > ingressClassControllerMax {
		errs = append(errs, apierr.TooLong("spec.controller", ingressClassControllerMax))
	}
	errs = append(errs, isDomainPrefixedPath("spec.controller", controller)...)
	params := mapAt(obj, "spec", "parameters")
	if params == nil {
		return errs
	}
	const path = "spec.parameters"
	errs = append(errs, validateTypedLocalRef(params, path)...)
	if !present(params, "scope") {
		return append(errs, apierr.Required(path+".scope", ""))
	}
	switch scope := str(params, "scope"); scope {
	case parametersScopeNamespace:
		if !present(params, "namespace") {
			errs = append(errs, apierr.Required(path+".namespace", "`parameters.scope` is set to 'Namespace'"))
			break
		}
		ns := str(params, "namespace")
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, apierr.Invalid(path+".namespace", ns, msg))
		}
	case parametersScopeCluster:
		if present(params, "namespace") {
			errs = append(errs, apierr.Forbidden(path+".namespace", "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		errs = append(errs, apierr.NotSupported(path+".scope", scope, parametersScopes))
	}
	return errs
}

// validateTypedLocalRef checks an apiGroup, kind and name reference.
func validateTypedLocalRef(ref map[string]any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if present(ref, "apiGroup") {
		g := str(ref, "apiGroup")
		for _, msg := range validation.IsDNS1123Subdomain(g) {
			errs = append(errs, apierr.Invalid(path+".apiGroup", g, msg))
		}
	}
	for _, f := range []string{"kind", "name"} {
		v := str(ref, f)
		if v == "" {
			errs = append(errs, apierr.Required(path+"."+f, f+" is required"))
			continue
		}
		for _, msg := range validation.IsPathSegment(v) {
			errs = append(errs, apierr.Invalid(path+"."+f, v, msg))
		}
	}
	return errs
}

// Ingress path types.
const (
	pathTypeExact                  = "Exact"
	pathTypePrefix                 = "Prefix"
	pathTypeImplementationSpecific = "ImplementationSpecific"
)

// pathTypes are the accepted path types, sorted.
var pathTypes = []string{pathTypeExact, pathTypeImplementationSpecific, pathTypePrefix}

var (
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// ingressRules holds the Ingress rules that depend on the brand, and the
// leniency an update of an object stored under older rules gets.
type ingressRules struct {
	// classAnnotation is the legacy annotation naming the class.
	classAnnotation string
	// allowBadSecretName and allowBadWildcardRule keep an update valid
	// when the stored object already breaks those rules.
	allowBadSecretName, allowBadWildcardRule bool
}

func ingresses(group string, b config.Brand) *registry.Descriptor {
	d := groupType(group, "ingresses", "ingress", "Ingress", true, "ing")
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: keepSpec}}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		startGeneration(obj)
	}
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	r := ingressRules{classAnnotation: b.Label("ingress.class")}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		spec := mapAt(obj, "spec")
		errs := r.validateSpec(spec)
		// Only a new Ingress must agree with its legacy class annotation.
		ann := mapAt(obj, "metadata", "annotations")
		if v, ok := ann[r.classAnnotation].(string); ok && present(spec, "ingressClassName") && v != str(spec, "ingressClassName") {
			errs = append(errs, apierr.Invalid("annotations."+r.classAnnotation, v, "must match `ingressClassName` when both are specified"))
		}
		return errs
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		u := r
		u.allowBadSecretName = hasBadSecretName(mapAt(old, "spec"))
		u.allowBadWildcardRule = hasBadWildcardRule(mapAt(old, "spec"))
		errs := u.validateSpec(mapAt(obj, "spec"))
		return append(errs, validateIngressStatus(mapAt(obj, "status", "loadBalancer"))...)
	}
	return d
}

func (r ingressRules) validateSpec(spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	rules := listAt(spec, "rules")
	if len(rules) == 0 && !present(spec, "defaultBackend") {
		v := goSyntax("[]networking.IngressRule(nil)")
		if _, ok := spec["rules"].([]any); ok {
			v = "[]networking.IngressRule{}"
		}
		errs = append(errs, apierr.Invalid("spec", v, "either `defaultBackend` or `rules` must be specified"))
	}
	if present(spec, "defaultBackend") {
		errs = append(errs, validateIngressBackend(mapAt(spec, "defaultBackend"), "spec.defaultBackend")...)
	}
	for i, x := range rules {
		rule, _ := x.(map[string]any)
		path := index("spec.rules", i)
		wildcard := false
		if host := str(rule, "host"); host != "" {
			if parseIPSloppy(host) != nil {
				errs = append(errs, apierr.Invalid(path+".host", host, "must be a DNS name, not an IP address"))
			}
			hostErrs := validation.IsDNS1123Subdomain
			if strings.Contains(host, "*") {
				hostErrs, wildcard = isWildcardDNS1123Subdomain, true
			}
			for _, msg := range hostErrs(host) {
				errs = append(errs, apierr.Invalid(path+".host", host, msg))
			}
		}
		if !wildcard || !r.allowBadWildcardRule {
			errs = append(errs, validateIngressRuleValue(rule, path)...)
		}
	}
	for i, x := range listAt(spec, "tls") {
		tls, _ := x.(map[string]any)
		path := index("spec.tls", i)
		for j, h := range listAt(tls, "hosts") {
			host, _ := h.(string)
			hostErrs := validation.IsDNS1123Subdomain
			if strings.Contains(host, "*") {
				hostErrs = isWildcardDNS1123Subdomain
			}
			for _, msg := range hostErrs(host) {
				errs = append(errs, apierr.Invalid(index(path+".hosts", j), host, msg))
			}
		}
		if !r.allowBadSecretName {
			name := str(tls, "secretName")
			for _, msg := range secretNameErrors(name) {
				errs = append(errs, apierr.Invalid(path+".secretName", name, msg))
			}
		}
	}
	if present(spec, "ingressClassName") {
		name := str(spec, "ingressClassName")
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, apierr.Invalid("spec.ingressClassName", name, msg))
		}
	}
	return errs
}

// secretNameErrors checks a TLS secret name; none is fine.
func secretNameErrors(name string) []string {
	if name == "" {
		return nil
	}
	return validation.IsDNS1123Subdomain(name)
}

// hasBadSecretName reports whether a stored spec names an invalid secret.
func hasBadSecretName(spec map[string]any) bool {
	for _, x := range listAt(spec, "tls") {
		tls, _ := x.(map[string]any)
		if len(secretNameErrors(str(tls, "secretName"))) > 0 {
			return true
		}
	}
	return false
}

// hasBadWildcardRule reports whether a stored spec has an invalid rule
// under a wildcard host.
func hasBadWildcardRule(spec map[string]any) bool {
	for _, x := range listAt(spec, "rules") {
		rule, _ := x.(map[string]any)
		if strings.Contains(str(rule, "host"), "*") && len(validateIngressRuleValue(rule, "")) > 0 {
			return true
		}
	}
	return false
}

func validateIngressRuleValue(rule map[string]any, path string) apierr.FieldErrors {
	http := mapAt(rule, "http")
	if http == nil {
		return nil
	}
	var errs apierr.FieldErrors
	paths := listAt(http, "paths")
	if len(paths) == 0 {
		errs = append(errs, apierr.Required(path+".http.paths", ""))
	}
	for i, x := range paths {
		p, _ := x.(map[string]any)
		errs = append(errs, validateHTTPIngressPath(p, index(path+".http.paths", i))...)
	}
	return errs
}

func validateHTTPIngressPath(p map[string]any, path string) apierr.FieldErrors {
	if !present(p, "pathType") {
		return apierr.FieldErrors{apierr.Required(path+".pathType", "pathType must be specified")}
	}
	var errs apierr.FieldErrors
	v := str(p, "path")
	notAbsolute := func() { errs = append(errs, apierr.Invalid(path+".path", v, "must be an absolute path")) }
	switch pt := str(p, "pathType"); pt {
	case pathTypeExact, pathTypePrefix:
		if !strings.HasPrefix(v, "/") {
			notAbsolute()
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(v, seq) {
				errs = append(errs, apierr.Invalid(path+".path", v, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suffix := range invalidPathSuffixes {
			if strings.HasSuffix(v, suffix) {
				errs = append(errs, apierr.Invalid(path+".path", v, fmt.Sprintf("cannot end with '%s'", suffix)))
			}
		}
	case pathTypeImplementationSpecific:
		if v != "" && !strings.HasPrefix(v, "/") {
			notAbsolute()
		}
	default:
		errs = append(errs, apierr.NotSupported(path+".pathType", pt, pathTypes))
	}
	return append(errs, validateIngressBackend(mapAt(p, "backend"), path+".backend")...)
}

// validateIngressBackend checks a backend: a service by name and port
// name or number, or a typed resource, not both.
func validateIngressBackend(backend map[string]any, path string) apierr.FieldErrors {
	resource, service := mapAt(backend, "resource"), mapAt(backend, "service")
	switch {
	case resource != nil && service != nil:
		return apierr.FieldErrors{apierr.Invalid(path, "", "cannot set both resource and service backends")}
	case resource != nil:
		return validateTypedLocalRef(resource, path+".resource")
	case service == nil:
		return apierr.FieldErrors{apierr.Invalid(path, "", "resource or service backend is required")}
	}
	var errs apierr.FieldErrors
	if name := str(service, "name"); name == "" {
		errs = append(errs, apierr.Required(path+".service.name", ""))
	} else {
		for _, msg := range isDNS1035Label(name) {
			errs = append(errs, apierr.Invalid(path+".service.name", name, msg))
		}
	}
	portName := str(service, "port", "name")
	portNumber := intAt(service, "port", "number")
	switch {
	case portName != "" && portNumber != 0:
		errs = append(errs, apierr.Invalid(path, "", "cannot set both port name & port number"))
	case portName != "":
		for _, msg := range isValidPortName(portName) {
			errs = append(errs, apierr.Invalid(path+".service.port.name", portName, msg))
		}
	case portNumber != 0:
		for _, msg := range isValidPortNum(portNumber) {
			errs = append(errs, apierr.Invalid(path+".service.port.number", portNumber, msg))
		}
	default:
		errs = append(errs, apierr.Required(path, "port name or number is required"))
	}
	return errs
}

// validateIngressStatus checks the load-balancer addresses a controller
// reports.
func validateIngressStatus(lb map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, x := range listAt(lb, "ingress") {
		in, _ := x.(map[string]any)
		path := index("status.loadBalancer.ingress", i)
		if ip := str(in, "ip"); ip != "" && parseIPSloppy(ip) == nil {
			errs = append(errs, apierr.Invalid(path+".ip", ip, "must be a valid IP address"))
		}
		if host := str(in, "hostname"); host != "" {
			for _, msg := range validation.IsDNS1123Subdomain(host) {
				errs = append(errs, apierr.Invalid(path+".hostname", host, msg))
			}
			if parseIPSloppy(host) != nil {
				errs = append(errs, apierr.Invalid(path+".hostname", host, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}

// Network policy types and protocols.
const (
	policyTypeIngress = "Ingress"
	policyTypeEgress  = "Egress"
	protocolTCP       = "TCP"
)

// networkPolicyProtocols are the protocols a policy port may name.
var networkPolicyProtocols = []string{protocolTCP, "UDP", "SCTP"}

func networkPolicies(group string) *registry.Descriptor {
	d := groupType(group, "networkpolicies", "networkpolicy", "NetworkPolicy", true, "netpol")
	d.Strategy.Default = defaultNetworkPolicy
	d.Strategy.PrepareForCreate = startGeneration
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateNetworkPolicySpec(mapAt(obj, "spec"), false)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		// One invalid value in the stored pod selector relaxes every
		// selector of the update, as upstream.
		allow := len(validateLabelSelector(mapAt(old, "spec", "podSelector"), false, "")) > 0
		return validateNetworkPolicySpec(mapAt(obj, "spec"), allow)
	}
	return d
}

// defaultNetworkPolicy sets each port's protocol to TCP and the policy
// types a policy without them implies: Ingress, and Egress when it has
// egress rules.
func defaultNetworkPolicy(obj registry.Object) {
	spec := mapAt(obj, "spec")
	if spec == nil {
		return
	}
	for _, dir := range []string{"ingress", "egress"} {
		for _, x := range listAt(spec, dir) {
			rule, _ := x.(map[string]any)
			for _, p := range listAt(rule, "ports") {
				if port, ok := p.(map[string]any); ok && !present(port, "protocol") {
					port["protocol"] = protocolTCP
				}
			}
		}
	}
	if len(listAt(spec, "policyTypes")) == 0 {
		types := []any{policyTypeIngress}
		if len(listAt(spec, "egress")) > 0 {
			types = append(types, policyTypeEgress)
		}
		spec["policyTypes"] = types
	}
}

func validateNetworkPolicySpec(spec map[string]any, allowBadSelectorValues bool) apierr.FieldErrors {
	errs := validateLabelSelector(mapAtOrEmpty(spec, "podSelector"), allowBadSelectorValues, "spec.podSelector")
	for _, dir := range []struct{ rules, peers string }{{"ingress", "from"}, {"egress", "to"}} {
		for i, x := range listAt(spec, dir.rules) {
			rule, _ := x.(map[string]any)
			path := index("spec."+dir.rules, i)
			for j, p := range listAt(rule, "ports") {
				port, _ := p.(map[string]any)
				errs = append(errs, validateNetworkPolicyPort(port, index(path+".ports", j))...)
			}
			for j, p := range listAt(rule, dir.peers) {
				peer, _ := p.(map[string]any)
				errs = append(errs, validateNetworkPolicyPeer(peer, allowBadSelectorValues, index(path+"."+dir.peers, j))...)
			}
		}
	}
	types := listAt(spec, "policyTypes")
	if len(types) > 2 {
		return append(errs, apierr.Invalid("spec.policyTypes", goStrings("networking.PolicyType", types), "may not specify more than two policyTypes"))
	}
	for i, x := range types {
		if t, _ := x.(string); t != policyTypeIngress && t != policyTypeEgress {
			errs = append(errs, apierr.NotSupported(index("spec.policyTypes", i), t, []string{policyTypeIngress, policyTypeEgress}))
		}
	}
	return errs
}

// mapAtOrEmpty returns the map at key, an empty one when absent: a
// required selector that is missing selects everything.
func mapAtOrEmpty(obj map[string]any, key string) map[string]any {
	if m := mapAt(obj, key); m != nil {
		return m
	}
	return map[string]any{}
}

func validateNetworkPolicyPort(port map[string]any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if present(port, "protocol") {
		if p := str(port, "protocol"); p != protocolTCP && p != "UDP" && p != "SCTP" {
			errs = append(errs, apierr.NotSupported(path+".protocol", p, networkPolicyProtocols))
		}
	}
	endPort, hasEnd := intOf(port["endPort"])
	switch v := port["port"].(type) {
	case nil:
		if hasEnd {
			errs = append(errs, apierr.Invalid(path+".endPort", endPort, "may not be specified when `port` is not specified"))
		}
	case string:
		if hasEnd {
			errs = append(errs, apierr.Invalid(path+".endPort", endPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range isValidPortName(v) {
			errs = append(errs, apierr.Invalid(path+".port", v, msg))
		}
	default:
		n, _ := intOf(v)
		for _, msg := range isValidPortNum(n) {
			errs = append(errs, apierr.Invalid(path+".port", n, msg))
		}
		if hasEnd {
			if endPort < n {
				// The bad value is the port, as upstream reports it.
				errs = append(errs, apierr.Invalid(path+".endPort", n, "must be greater than or equal to `port`"))
			}
			for _, msg := range isValidPortNum(endPort) {
				errs = append(errs, apierr.Invalid(path+".endPort", endPort, msg))
			}
		}
	}
	return errs
}

func validateNetworkPolicyPeer(peer map[string]any, allowBadSelectorValues bool, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	n := 0
	for _, f := range []string{"podSelector", "namespaceSelector"} {
		if present(peer, f) {
			n++
			errs = append(errs, validateLabelSelector(mapAtOrEmpty(peer, f), allowBadSelectorValues, path+"."+f)...)
		}
	}
	if present(peer, "ipBlock") {
		n++
		errs = append(errs, validateIPBlock(mapAt(peer, "ipBlock"), path+".ipBlock")...)
	}
	switch {
	case n == 0:
		errs = append(errs, apierr.Required(path, "must specify a peer"))
	case n > 1 && present(peer, "ipBlock"):
		errs = append(errs, apierr.Forbidden(path, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock checks a CIDR and its exceptions, each strictly inside
// it.
func validateIPBlock(block map[string]any, path string) apierr.FieldErrors {
	cidr := str(block, "cidr")
	if cidr == "" {
		return apierr.FieldErrors{apierr.Required(path+".cidr", "")}
	}
	network, ok := parseCIDRSloppy(cidr)
	if !ok {
		return apierr.FieldErrors{apierr.Invalid(path+".cidr", cidr, "not a valid CIDR")}
	}
	var errs apierr.FieldErrors
	for i, x := range listAt(block, "except") {
		s, _ := x.(string)
		p := index(path+".except", i)
		except, ok := parseCIDRSloppy(s)
		if !ok {
			return append(errs, apierr.Invalid(p, s, "not a valid CIDR"))
		}
		outer, _ := network.Mask.Size()
		inner, _ := except.Mask.Size()
		if !network.Contains(except.IP) || outer >= inner {
			errs = append(errs, apierr.Invalid(p, s, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

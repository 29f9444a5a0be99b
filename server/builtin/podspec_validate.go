package builtin

import (
	"math"
	"strconv"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/validation"
)

// podRules holds the pod rules that depend on the brand: resource names
// under its domain, its well-known annotations and taints.
type podRules struct {
	res                resourceNames
	domain, longDomain string
	mirrorAnnotation   string
	deletionCostKey    string
	notReadyTaint      string
	unreachableTaint   string
	// notReadyToleration and unreachableToleration are the tolerations
	// of the two taints a pod gets by default (addDefaultTolerations):
	// each pod gets a copy. They are never written.
	notReadyToleration, unreachableToleration map[string]any
	// forbidPrivileged refuses privileged containers
	// (--allow-privileged=false).
	forbidPrivileged bool
}

// under is r with the pod policy of the server's options.
func (r podRules) under(sv Services) podRules {
	r.forbidPrivileged = sv.ForbidPrivileged
	return r
}

func newPodRules(b config.Brand) podRules {
	return podRules{
		res:              newResourceNames(b),
		domain:           b.Domain,
		longDomain:       b.LongDomain,
		mirrorAnnotation: b.Label("config.mirror"),
		deletionCostKey:  "controller." + b.Label("pod-deletion-cost"),
		notReadyTaint:    "node." + b.Label("not-ready"),
		unreachableTaint: "node." + b.Label("unreachable"),
		notReadyToleration: map[string]any{
			"key": "node." + b.Label("not-ready"), "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": defaultTolerationSeconds,
		},
		unreachableToleration: map[string]any{
			"key": "node." + b.Label("unreachable"), "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": defaultTolerationSeconds,
		},
	}
}

// podSpecOptions says where a PodSpec sits.
type podSpecOptions struct {
	// resourceIsPod is set for a pod's own spec, not a template's: a
	// host-network pod's host ports must then equal its container ports.
	resourceIsPod bool
	// podName is the pod's name, which names the claims of its generic
	// ephemeral volumes; empty for templates.
	podName string
}

// Values of the PodSpec with closed sets, in upstream's order.
var (
	restartPolicies    = []string{"Always", "OnFailure", "Never"}
	dnsPolicies        = []string{"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}
	preemptionPolicies = []string{"PreemptLowerPriority", "Never"}
	podOSNames         = []string{"linux", "windows"}
)

// specCheck gathers the errors of one PodSpec and what its rules share.
type specCheck struct {
	r           podRules
	opts        podSpecOptions
	spec        map[string]any
	vols        map[string]map[string]any
	gracePeriod *int64
	hostUsers   bool
	errs        apierr.FieldErrors
}

func (c *specCheck) add(errs ...*apierr.FieldError) { c.errs = append(c.errs, errs...) }

// validatePodSpec checks a PodSpec found at p ("spec" for a pod,
// "template.spec" for a PodTemplate, "spec.template.spec" for workloads),
// with upstream's rules, paths and texts, in upstream's order.
func (r podRules) validatePodSpec(spec map[string]any, p fieldPath, opts podSpecOptions) apierr.FieldErrors {
	if spec == nil {
		spec = map[string]any{}
	}
	c := &specCheck{r: r, opts: opts, spec: spec, hostUsers: true}
	if !has(spec, "terminationGracePeriodSeconds") {
		c.add(apierr.Required(p.child("terminationGracePeriodSeconds").String(), ""))
	} else {
		g := intAt(spec, "terminationGracePeriodSeconds")
		c.gracePeriod = &g
	}
	if hu, ok := spec["hostUsers"].(bool); ok {
		c.hostUsers = hu
	}
	c.vols = c.validateVolumes(p.child("volumes"))
	c.validateContainers(p.child("containers"))
	// Lists that are empty have nothing to check: their paths are not
	// built.
	if len(listOf(spec["initContainers"])) > 0 {
		c.validateInitContainers(p.child("initContainers"))
	}
	if len(listOf(spec["ephemeralContainers"])) > 0 {
		c.validateEphemeralContainers(p.child("ephemeralContainers"))
	}
	c.validateHostNetworkPorts(p)
	switch rp := strOf(spec["restartPolicy"]); {
	case contains(restartPolicies, rp):
	case rp == "":
		c.add(apierr.Required(p.child("restartPolicy").String(), ""))
	default:
		c.add(notSupported(p.child("restartPolicy"), rp, restartPolicies...))
	}
	switch dp := strOf(spec["dnsPolicy"]); {
	case contains(dnsPolicies, dp):
	case dp == "":
		c.add(apierr.Required(p.child("dnsPolicy").String(), ""))
	default:
		c.add(notSupported(p.child("dnsPolicy"), dp, dnsPolicies...))
	}
	c.add(validateLabels(mapOf(spec["nodeSelector"]), p.child("nodeSelector").String())...)
	c.validatePodSecurityContext(p.child("securityContext"))
	if has(spec, "affinity") {
		c.add(validateAffinity(mapOf(spec["affinity"]), p.child("affinity"))...)
	}
	c.add(validateDNSConfig(spec, p.child("dnsConfig"))...)
	for i, g := range mapsOf(spec["readinessGates"]) {
		c.add(qualifiedName(strOf(g["conditionType"]), p.child("readinessGates").index(i).child("conditionType"))...)
	}
	if len(listOf(spec["schedulingGates"])) > 0 {
		c.validateSchedulingGates(p.child("schedulingGates"))
	}
	c.add(validateTopologySpread(spec["topologySpreadConstraints"], p.child("topologySpreadConstraints"))...)
	c.validateHostUsers(p)
	for _, f := range []string{"serviceAccountName", "nodeName"} {
		if v := strOf(spec[f]); v != "" {
			c.add(dnsSubdomain(v, p.child(f))...)
		}
	}
	if has(spec, "activeDeadlineSeconds") {
		if v := intAt(spec, "activeDeadlineSeconds"); v < 1 || v > math.MaxInt32 {
			c.add(apierr.Invalid(p.child("activeDeadlineSeconds").String(), v, inclusiveRange(1, math.MaxInt32)))
		}
	}
	for _, f := range []string{"hostname", "subdomain"} {
		if v := strOf(spec[f]); v != "" {
			c.add(dnsLabel(v, p.child(f))...)
		}
	}
	c.add(validateTolerations(spec["tolerations"], p.child("tolerations"))...)
	for i, ha := range mapsOf(spec["hostAliases"]) {
		ip := p.child("hostAliases").index(i)
		c.add(validateIP(strOf(ha["ip"]), ip.child("ip"))...)
		for j, h := range listOf(ha["hostnames"]) {
			c.add(dnsSubdomain(strOf(h), ip.child("hostnames").index(j))...)
		}
	}
	if v := strOf(spec["priorityClassName"]); v != "" {
		c.add(dnsSubdomain(v, p.child("priorityClassName"))...)
	}
	if has(spec, "runtimeClassName") {
		c.add(dnsSubdomain(strOf(spec["runtimeClassName"]), p.child("runtimeClassName"))...)
	}
	if has(spec, "preemptionPolicy") {
		switch pp := strOf(spec["preemptionPolicy"]); {
		case contains(preemptionPolicies, pp):
		case pp == "":
			c.add(apierr.Required(p.child("preemptionPolicy").String(), ""))
		default:
			c.add(notSupported(p.child("preemptionPolicy"), pp, preemptionPolicies...))
		}
	}
	if has(spec, "overhead") {
		c.add(r.validateResources(map[string]any{"limits": spec["overhead"]}, p.child("overhead"))...)
	}
	c.validateOS(p)
	return c.errs
}

// validateHostNetworkPorts requires, on the host network, host ports equal
// to container ports; templates may leave them 0, to be defaulted when a
// pod is made.
func (c *specCheck) validateHostNetworkPorts(p fieldPath) {
	if !boolOf(c.spec["hostNetwork"]) {
		return
	}
	for i, ctr := range mapsOf(c.spec["containers"]) {
		for j, port := range mapsOf(ctr["ports"]) {
			hp, cp := intAt(port, "hostPort"), intAt(port, "containerPort")
			if (c.opts.resourceIsPod || hp != 0) && hp != cp {
				c.add(apierr.Invalid(p.child("containers").index(i).child("ports").index(j).child("hostPort").String(), hp, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
}

func (c *specCheck) validateSchedulingGates(p fieldPath) {
	seen := map[string]bool{}
	for i, g := range mapsOf(c.spec["schedulingGates"]) {
		name := strOf(g["name"])
		c.add(qualifiedName(name, p.index(i))...)
		if seen[name] {
			c.add(apierr.Duplicate(p.index(i).String(), name))
		}
		seen[name] = true
	}
}

// validateHostUsers forbids host namespaces in a pod with its own user
// namespace.
func (c *specCheck) validateHostUsers(p fieldPath) {
	if c.hostUsers {
		return
	}
	const msg = "when `pod.Spec.HostUsers` is false"
	if boolOf(c.spec["hostNetwork"]) {
		c.add(apierr.Forbidden(p.child("hostNetwork").String(), msg))
	}
	// Upstream spells these two paths with capitals.
	if boolOf(c.spec["hostPID"]) {
		c.add(apierr.Forbidden(p.child("HostPID").String(), msg))
	}
	if boolOf(c.spec["hostIPC"]) {
		c.add(apierr.Forbidden(p.child("HostIPC").String(), msg))
	}
}

// windowsForbiddenPod are the pod members a Windows pod may not set: in
// the spec itself (reported there) or in its securityContext; sysctls
// count only when non-empty, hostPID and hostIPC only when true.
var windowsForbiddenPod = []struct {
	name   string
	inSpec bool
}{
	{"appArmorProfile", false}, {"seLinuxOptions", false}, {"hostUsers", true}, {"hostPID", true},
	{"hostIPC", true}, {"seccompProfile", false}, {"fsGroup", false}, {"fsGroupChangePolicy", false},
	{"sysctls", false}, {"shareProcessNamespace", true}, {"runAsUser", false}, {"runAsGroup", false},
	{"supplementalGroups", false}, {"supplementalGroupsPolicy", false}, {"seLinuxChangePolicy", false},
}

// windowsForbiddenContainer are the container security members a Windows
// pod's containers may not set.
var windowsForbiddenContainer = []string{
	"appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities", "readOnlyRootFilesystem",
	"privileged", "allowPrivilegeEscalation", "procMount", "runAsUser", "runAsGroup",
}

// validateOS checks spec.os and the members the chosen OS cannot use.
func (c *specCheck) validateOS(p fieldPath) {
	if !has(c.spec, "os") {
		return
	}
	op := p.child("os")
	name := strOf(mapOf(c.spec["os"])["name"])
	if name == "" {
		c.add(apierr.Required(op.child("name").String(), "cannot be empty"))
		return
	}
	if !contains(podOSNames, name) {
		c.add(notSupported(op, name, podOSNames...))
		return
	}
	const windowsMsg = "cannot be set for a windows pod"
	const linuxMsg = "windows options cannot be set for a linux pod"
	sc := mapOf(c.spec["securityContext"])
	if name == "linux" && has(sc, "windowsOptions") {
		c.add(apierr.Forbidden(p.child("securityContext", "windowsOptions").String(), linuxMsg))
	}
	if name == "windows" {
		for _, f := range windowsForbiddenPod {
			owner, fp := sc, p.child("securityContext", f.name)
			if f.inSpec {
				owner, fp = c.spec, p.child(f.name)
			}
			set := has(owner, f.name)
			switch f.name {
			case "hostPID", "hostIPC":
				set = boolOf(owner[f.name])
			case "sysctls":
				set = len(listOf(owner[f.name])) > 0
			}
			if set {
				c.add(apierr.Forbidden(fp.String(), windowsMsg))
			}
		}
	}
	for _, kind := range containerKinds {
		for i, ctr := range mapsOf(c.spec[kind]) {
			csc := mapOf(ctr["securityContext"])
			cp := p.child(kind).index(i).child("securityContext")
			if name == "linux" {
				if has(csc, "windowsOptions") {
					c.add(apierr.Forbidden(cp.child("windowsOptions").String(), linuxMsg))
				}
				continue
			}
			for _, f := range windowsForbiddenContainer {
				if has(csc, f) {
					c.add(apierr.Forbidden(cp.child(f).String(), windowsMsg))
				}
			}
		}
	}
}

// validatePodTemplateSpec checks a pod template (PodTemplate's template,
// a workload's spec.template) at p: its labels and annotations, reported
// as upstream does at p.labels and p.annotations, and its spec. Ephemeral
// containers are not allowed in templates.
func (r podRules) validatePodTemplateSpec(tmpl map[string]any, p fieldPath) apierr.FieldErrors {
	md := mapOf(tmpl["metadata"])
	errs := validateLabels(mapOf(md["labels"]), p.child("labels").String())
	errs = append(errs, r.validateAnnotations(mapOf(md["annotations"]), p.child("annotations"))...)
	spec := mapOf(tmpl["spec"])
	errs = append(errs, r.validatePodSpecificAnnotations(mapOf(md["annotations"]), spec, p.child("annotations"), false)...)
	errs = append(errs, r.validatePodSpec(spec, p.child("spec"), podSpecOptions{})...)
	if len(listOf(spec["ephemeralContainers"])) > 0 {
		errs = append(errs, apierr.Forbidden(p.child("spec", "ephemeralContainers").String(), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// totalAnnotationSize bounds the summed size of an object's annotation
// keys and values, as upstream.
const totalAnnotationSize = 256 * 1024

// validateAnnotations checks annotation keys and their total size.
func (r podRules) validateAnnotations(m map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	total := 0
	for _, k := range sortedKeys(m) {
		errs = append(errs, invalidEach(p, k, qualifiedNameLower(k))...)
		total += len(k) + len(strOf(m[k]))
	}
	if total > totalAnnotationSize {
		errs = append(errs, apierr.TooLong(p.String(), totalAnnotationSize))
	}
	return errs
}

// validatePodSpecificAnnotations checks the annotations with a meaning
// for pods: a mirror pod must be bound, and a deletion cost must be a
// 32-bit integer unless an invalid one is already stored.
func (r podRules) validatePodSpecificAnnotations(ann, spec map[string]any, p fieldPath, allowInvalidCost bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if v, ok := ann[r.mirrorAnnotation]; ok && strOf(spec["nodeName"]) == "" {
		errs = append(errs, apierr.Invalid(p.key(r.mirrorAnnotation).String(), strOf(v), "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v, ok := ann[r.deletionCostKey]; ok && !allowInvalidCost && !validDeletionCost(strOf(v)) {
		errs = append(errs, apierr.Invalid(p.key(r.deletionCostKey).String(), strOf(v), "must be a 32bit integer"))
	}
	return errs
}

// qualifiedNameLower checks an annotation key, whose case is free.
func qualifiedNameLower(k string) []string { return validation.IsQualifiedName(strings.ToLower(k)) }

// validDeletionCost reports whether v is a 32-bit integer written without
// a plus sign or leading zeros.
func validDeletionCost(v string) bool {
	if v == "" || !(v[0] == '-' || v == "0" || v[0] >= '1' && v[0] <= '9') {
		return false
	}
	_, err := strconv.ParseInt(v, 10, 32)
	return err == nil
}

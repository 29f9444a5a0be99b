package builtin

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/filters"
	"platd/server/registry"
)

// PodSecurity admission, as upstream's: a namespace's pod-security labels
// name, per mode (enforce, audit, warn), a level of the Pod Security
// Standards and a policy version; a mode without labels takes the
// plugin's configured default. Pods breaking the enforce level are
// refused; pods and workload pod templates breaking the warn level are
// answered with a warning; those breaking the audit level are named in
// the request's audit event. Requests of exempt users, in exempt
// namespaces, and pods of exempt runtime classes are not evaluated.

// Pod Security levels, from least to most strict.
const (
	psPrivileged = "privileged"
	psBaseline   = "baseline"
	psRestricted = "restricted"
)

// psLatestMinor is the minor version "latest" stands for: the checks are
// those of v1.32, and a newer version is evaluated as it.
const psLatestMinor = 32

// Limits of the check of existing pods when a namespace's enforce level
// rises, as upstream's: the answer is a warning, and it must not hold the
// namespace write for long in a namespace of many pods.
const (
	psMaxPodsToCheck = 3000
	psPodCheckBudget = time.Second
)

// psLevelVersion is a level at a policy version; minor < 0 is "latest".
type psLevelVersion struct {
	level string
	minor int
}

func (lv psLevelVersion) String() string {
	if lv.minor < 0 {
		return lv.level + ":latest"
	}
	return lv.level + ":v1." + strconv.Itoa(lv.minor)
}

// psPolicy is a namespace's level and version for each mode.
type psPolicy struct{ enforce, audit, warn psLevelVersion }

var psVersionPattern = regexp.MustCompile(`^v1\.(0|[1-9][0-9]*)$`)

// podSecurity is the PodSecurity admission of pods, workloads with pod
// templates and namespaces.
type podSecurity struct {
	b                config.Brand
	namespaces, pods *registry.Descriptor
	// defaults is the policy of a mode a namespace sets no label of.
	defaults psPolicy
	// exempt are the configured exemptions.
	exempt config.PodSecurityExemptions
}

// newPodSecurity returns the admission with the plugin's configuration,
// as loaded by config (the zero value is upstream's default: every mode
// privileged:latest, nothing exempt).
func newPodSecurity(b config.Brand, namespaces, pods *registry.Descriptor, c config.PodSecurityConfiguration) podSecurity {
	d := c.Defaults
	return podSecurity{b: b, namespaces: namespaces, pods: pods, exempt: c.Exemptions, defaults: psPolicy{
		enforce: psConfigured(d.Enforce, d.EnforceVersion),
		audit:   psConfigured(d.Audit, d.AuditVersion),
		warn:    psConfigured(d.Warn, d.WarnVersion),
	}}
}

// psConfigured reads a configured default level and version, already
// validated; empty ones are privileged and latest.
func psConfigured(level, version string) psLevelVersion {
	lv := psLevelVersion{level, -1}
	if level == "" {
		lv.level = psPrivileged
	}
	if m := psVersionPattern.FindStringSubmatch(version); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			lv.minor = n
		}
	}
	return lv
}

// exemptUser and exemptNamespace say whether a request of the user, or
// in the namespace, is exempt; exemptRuntimeClass whether a pod spec's
// runtime class is. An empty name is never exempt.
func (ps podSecurity) exemptUser(ctx context.Context) bool {
	u := filters.UserFrom(ctx)
	return u != nil && u.Name != "" && slices.Contains(ps.exempt.Usernames, u.Name)
}

func (ps podSecurity) exemptNamespace(ns string) bool {
	return ns != "" && slices.Contains(ps.exempt.Namespaces, ns)
}

func (ps podSecurity) exemptRuntimeClass(spec map[string]any) bool {
	rc := strOf(spec["runtimeClassName"])
	return rc != "" && slices.Contains(ps.exempt.RuntimeClasses, rc)
}

// label is the namespace label of a mode ("enforce") or of its version
// ("enforce-version").
func (ps podSecurity) label(name string) string {
	return "pod-security." + ps.b.LongDomain + "/" + name
}

// policy reads the policy of a namespace's labels, and the field errors of
// the labels it could not read; a mode without labels keeps the
// configured default. A bad enforce level is enforced as restricted, bad
// audit and warn levels are privileged, a bad version is latest, as
// upstream.
func (ps podSecurity) policy(labels map[string]any) (psPolicy, apierr.FieldErrors) {
	p := ps.defaults
	if len(labels) == 0 {
		return p, nil
	}
	var errs apierr.FieldErrors
	for _, m := range []struct {
		mode      string
		lv        *psLevelVersion
		failLevel string
	}{{"enforce", &p.enforce, psRestricted}, {"audit", &p.audit, psPrivileged}, {"warn", &p.warn, psPrivileged}} {
		key := ps.label(m.mode)
		if v, ok := labels[key]; ok {
			switch s := strOf(v); s {
			case psPrivileged, psBaseline, psRestricted:
				m.lv.level = s
			default:
				m.lv.level = m.failLevel
				errs = append(errs, apierr.Invalid("metadata.labels["+key+"]", s, "must be one of privileged, baseline, restricted"))
			}
		}
		key = ps.label(m.mode + "-version")
		if v, ok := labels[key]; ok {
			s := strOf(v)
			if s == "latest" {
				m.lv.minor = -1
				continue
			}
			match := psVersionPattern.FindStringSubmatch(s)
			n, err := 0, error(nil)
			if match != nil {
				n, err = strconv.Atoi(match[1])
			}
			if match == nil || err != nil {
				m.lv.minor = -1
				errs = append(errs, apierr.Invalid("metadata.labels["+key+"]", s, `must be "latest" or "v1.x"`))
				continue
			}
			m.lv.minor = n
		}
	}
	// A namespace that enforces a level, without a warn level of its
	// own, is warned of what it enforces when that is stricter, as
	// upstream defaults warn to enforce (and the version with it, unless
	// the warn version is labeled).
	enforce, hasEnforce := labels[ps.label("enforce")]
	_, hasWarn := labels[ps.label("warn")]
	_, hasWarnVersion := labels[ps.label("warn-version")]
	if hasEnforce && !hasWarn && slices.Contains([]string{psPrivileged, psBaseline, psRestricted}, strOf(enforce)) &&
		psLevelRank(p.enforce.level) > psLevelRank(p.warn.level) {
		p.warn.level = p.enforce.level
		if !hasWarnVersion {
			p.warn.minor = p.enforce.minor
		}
	}
	return p, errs
}

// evaluate runs the checks of lv on a pod's metadata and spec and returns
// the refusals, in the order of the checks; none when allowed.
func psEvaluate(lv psLevelVersion, meta, spec map[string]any) []psResult {
	if lv.level == psPrivileged {
		return nil
	}
	minor := lv.minor
	if minor < 0 || minor > psLatestMinor {
		minor = psLatestMinor
	}
	var out []psResult
	run := func(c psCheck) {
		if c.since > minor {
			return
		}
		if r := c.run(meta, spec); r.reason != "" {
			out = append(out, r)
		}
	}
	// Checks run in upstream's order of their IDs, the baseline ones
	// first; at restricted a baseline check a restricted one replaces at
	// this version is left out.
	for _, c := range psBaselineChecks {
		if lv.level == psBaseline || !c.overlap || minor < c.overlapSince {
			run(c)
		}
	}
	if lv.level == psBaseline {
		return out
	}
	for _, c := range psRestrictedChecks {
		run(c)
	}
	return out
}

// psDetail words refusals for one object: each reason with its detail in
// parentheses.
func psDetail(rs []psResult) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.reason
		if r.detail != "" {
			parts[i] += " (" + r.detail + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// psReason words refusals shared by many pods: the reasons alone.
func psReason(rs []psResult) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.reason
	}
	return strings.Join(parts, ", ")
}

// namespacePolicy reads the policy of the namespace ns and the errors of
// its labels.
func (ps podSecurity) namespacePolicy(l registry.Lookup, ns string) (psPolicy, apierr.FieldErrors, error) {
	obj, err := l.Get(ps.namespaces, "", ns)
	if err != nil {
		return psPolicy{}, nil, err
	}
	p, errs := ps.policy(mapOf(mapOf(obj["metadata"])["labels"]))
	return p, errs, nil
}

// validatePod enforces and warns of the policy of a pod's namespace on a
// created pod, and on an updated one whose containers or images changed.
// Requests of exempt users and in exempt namespaces are not evaluated,
// nor are pods of exempt runtime classes. The request's audit event is
// annotated as upstream's: why it was exempt, the enforced policy, the
// audit level's violations, the namespace labels' errors.
func (ps podSecurity) validatePod(ctx context.Context, l registry.Lookup, obj, old registry.Object) error {
	md := mapOf(obj["metadata"])
	ns := strOf(md["namespace"])
	if ps.exempted(ctx, ns) {
		return nil
	}
	p, errs, err := ps.namespacePolicy(l, ns)
	if err != nil {
		audit.AddAnnotation(ctx, ps.label(psAnnotationError), fmt.Sprintf("Internal error occurred: failed to lookup namespace %q: %v", ns, err))
		return err
	}
	if len(errs) == 0 && p.enforce.level == psPrivileged && p.audit.level == psPrivileged && p.warn.level == psPrivileged {
		audit.AddAnnotation(ctx, ps.label(psAnnotationEnforcePolicy), psLevelVersion{psPrivileged, -1}.String())
		return nil
	}
	if old != nil && !ps.significantPodUpdate(obj, old) {
		return nil
	}
	return ps.evaluate(ctx, p, errs, md, mapOf(obj["spec"]), true)
}

// Audit annotation keys upstream's PodSecurity writes, under the
// pod-security prefix.
const (
	psAnnotationExempt          = "exempt"
	psAnnotationEnforcePolicy   = "enforce-policy"
	psAnnotationAuditViolations = "audit-violations"
	psAnnotationError           = "error"
)

// exempted says whether a request in namespace ns is exempt, the
// namespace's exemption before the user's, and annotates the audit event
// with the reason.
func (ps podSecurity) exempted(ctx context.Context, ns string) bool {
	reason := ""
	switch {
	case ps.exemptNamespace(ns):
		reason = "namespace"
	case ps.exemptUser(ctx):
		reason = "user"
	default:
		return false
	}
	audit.AddAnnotation(ctx, ps.label(psAnnotationExempt), reason)
	return true
}

// evaluate checks a pod's metadata and spec against p, whose namespace
// labels had the errors errs: the enforce level when enforce is set
// (refusing the pod), the audit level (annotating the audit event), then
// the warn level, unless the pod's runtime class is exempt.
func (ps podSecurity) evaluate(ctx context.Context, p psPolicy, errs apierr.FieldErrors, meta, spec map[string]any, enforce bool) error {
	if ps.exemptRuntimeClass(spec) {
		audit.AddAnnotation(ctx, ps.label(psAnnotationExempt), "runtimeClass")
		return nil
	}
	if len(errs) > 0 {
		audit.AddAnnotation(ctx, ps.label(psAnnotationError), "Failed to parse policy: "+errs.Error())
	}
	var denial error
	if enforce {
		audit.AddAnnotation(ctx, ps.label(psAnnotationEnforcePolicy), p.enforce.String())
		if rs := psEvaluate(p.enforce, meta, spec); len(rs) > 0 {
			denial = &registry.Denial{Reason: fmt.Sprintf("violates PodSecurity %q: %s", p.enforce.String(), psDetail(rs))}
		}
	}
	if rs := psEvaluate(p.audit, meta, spec); len(rs) > 0 {
		audit.AddAnnotation(ctx, ps.label(psAnnotationAuditViolations), fmt.Sprintf("would violate PodSecurity %q: %s", p.audit.String(), psDetail(rs)))
	}
	if denial != nil {
		return denial
	}
	if rs := psEvaluate(p.warn, meta, spec); len(rs) > 0 {
		security.AddWarning(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", p.warn.String(), psDetail(rs)))
	}
	return nil
}

// validateTemplate returns the hook of a workload whose pod template is at
// path: it only warns and annotates the audit event, as upstream never
// enforces on pod templates.
func (ps podSecurity) validateTemplate(path ...string) registry.AdmissionHook {
	return func(ctx context.Context, l registry.Lookup, obj, _ registry.Object) error {
		ns := str(obj, "metadata", "namespace")
		if ps.exempted(ctx, ns) {
			return nil
		}
		p, errs, err := ps.namespacePolicy(l, ns)
		if err != nil {
			// Upstream's lookup failure only annotates the audit event.
			audit.AddAnnotation(ctx, ps.label(psAnnotationError), fmt.Sprintf("failed to lookup namespace %q: %v", ns, err))
			return nil
		}
		if len(errs) == 0 && p.warn.level == psPrivileged && p.audit.level == psPrivileged {
			return nil
		}
		tmpl := obj
		for _, k := range path {
			if tmpl = mapOf(tmpl[k]); tmpl == nil {
				return nil
			}
		}
		return ps.evaluate(ctx, p, errs, mapOf(tmpl["metadata"]), mapOf(tmpl["spec"]), false)
	}
}

// significantPodUpdate says a pod update can change what the policy
// decides: containers added or removed, an image or a container's seccomp
// annotation changed, an ephemeral container added or changed.
func (ps podSecurity) significantPodUpdate(obj, old registry.Object) bool {
	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	ann, oldAnn := mapOf(mapOf(obj["metadata"])["annotations"]), mapOf(mapOf(old["metadata"])["annotations"])
	seccompKey := "container.seccomp.security.alpha." + ps.b.LongDomain + "/"
	changed := func(c, oc map[string]any) bool {
		key := seccompKey + strOf(c["name"])
		return strOf(c["image"]) != strOf(oc["image"]) || strOf(ann[key]) != strOf(oldAnn[key])
	}
	for _, key := range []string{"containers", "initContainers"} {
		cs, ocs := mapsOf(spec[key]), mapsOf(oldSpec[key])
		if len(cs) != len(ocs) {
			return true
		}
		for i := range cs {
			if changed(cs[i], ocs[i]) {
				return true
			}
		}
	}
	olds := mapsOf(oldSpec["ephemeralContainers"])
	for _, c := range mapsOf(spec["ephemeralContainers"]) {
		i := slices.IndexFunc(olds, func(oc map[string]any) bool { return strOf(oc["name"]) == strOf(c["name"]) })
		if i < 0 || changed(c, olds[i]) {
			return true
		}
	}
	return false
}

// validateNamespace refuses invalid policy labels on a namespace (on an
// update, only when they changed) and, when an update makes the enforce
// level stricter, warns of the existing pods that break it. An exempt
// namespace setting a policy other than the defaults is warned that the
// policy is ignored.
func (ps podSecurity) validateNamespace(ctx context.Context, l registry.Lookup, obj, old registry.Object) error {
	name := str(obj, "metadata", "name")
	labels := mapOf(mapOf(obj["metadata"])["labels"])
	p, errs := ps.policy(labels)
	if old == nil {
		if len(errs) > 0 {
			return apierr.NewInvalid("", ps.namespaces.Kind, name, errs)
		}
		if ps.exemptNamespace(name) {
			ps.warnExemptNamespace(ctx, name, p, labels)
		}
		return nil
	}
	op, oldErrs := ps.policy(mapOf(mapOf(old["metadata"])["labels"]))
	if len(errs) > 0 && (len(oldErrs) == 0 || apierr.FieldErrors(errs).Error() != apierr.FieldErrors(oldErrs).Error()) {
		return apierr.NewInvalid("", ps.namespaces.Kind, name, errs)
	}
	switch {
	case p.enforce == op.enforce, p.enforce.level == psPrivileged:
		return nil
	case p.enforce.minor == op.enforce.minor && psLevelRank(p.enforce.level) <= psLevelRank(op.enforce.level):
		return nil
	case ps.exemptNamespace(name):
		ps.warnExemptNamespace(ctx, name, p, labels)
		return nil
	}
	for _, w := range ps.checkPods(ctx, l, name, p.enforce) {
		security.AddWarning(ctx, w)
	}
	return nil
}

// warnExemptNamespace warns that the policy an exempt namespace sets is
// ignored, naming each mode whose labels set a level other than
// privileged; nothing when the policy is privileged or the defaults'.
func (ps podSecurity) warnExemptNamespace(ctx context.Context, name string, p psPolicy, labels map[string]any) {
	equivalent := func(a, b psLevelVersion) bool {
		return a.level == psPrivileged && b.level == psPrivileged || a == b
	}
	if p.enforce.level == psPrivileged && p.audit.level == psPrivileged && p.warn.level == psPrivileged ||
		equivalent(p.enforce, ps.defaults.enforce) && equivalent(p.audit, ps.defaults.audit) && equivalent(p.warn, ps.defaults.warn) {
		return
	}
	var modes []string
	for _, m := range []struct {
		mode string
		lv   psLevelVersion
	}{{"enforce", p.enforce}, {"audit", p.audit}, {"warn", p.warn}} {
		_, level := labels[ps.label(m.mode)]
		_, version := labels[ps.label(m.mode+"-version")]
		if m.lv.level != psPrivileged && (level || version) {
			modes = append(modes, m.mode+"="+m.lv.String())
		}
	}
	security.AddWarning(ctx, fmt.Sprintf("namespace %q is exempt from Pod Security, and the policy (%s) will be ignored", name, strings.Join(modes, ", ")))
}

// psLevelRank orders levels by strictness.
func psLevelRank(level string) int {
	return slices.Index([]string{psPrivileged, psBaseline, psRestricted}, level)
}

// checkPods evaluates the pods of namespace ns against a new enforce level
// and returns the warnings: pods with the same refusals are named once,
// by the first name, with how many others share them.
func (ps podSecurity) checkPods(ctx context.Context, l registry.Lookup, ns string, enforce psLevelVersion) []string {
	budget := psPodCheckBudget
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)/2 < budget {
		budget = time.Until(dl) / 2
	}
	deadline := time.Now().Add(budget)
	pods, _, err := l.List(ps.pods, ns)
	if err != nil {
		return []string{"failed to list pods while checking new PodSecurity enforce level"}
	}
	pods = ps.prioritize(pods)
	total := len(pods)
	if len(pods) > psMaxPodsToCheck {
		pods = pods[:psMaxPodsToCheck]
	}
	type seen struct {
		first string
		count int
	}
	var order []string
	byReason := map[string]*seen{}
	checked := len(pods)
	for i, pod := range pods {
		if rs := psEvaluate(enforce, mapOf(pod["metadata"]), mapOf(pod["spec"])); len(rs) > 0 {
			reason, name := psReason(rs), str(pod, "metadata", "name")
			s := byReason[reason]
			if s == nil {
				s = &seen{first: name}
				byReason[reason] = s
				order = append(order, reason)
			} else if name < s.first {
				s.first = name
			}
			s.count++
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			checked = i + 1
			break
		}
	}
	var warnings []string
	if checked < total {
		warnings = append(warnings, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, total))
	}
	if len(order) == 0 {
		return warnings
	}
	warnings = append(warnings, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", ns, enforce.String()))
	podWarnings := make([]string, len(order))
	for i, reason := range order {
		s := byReason[reason]
		switch s.count {
		case 1:
			podWarnings[i] = fmt.Sprintf("%s: %s", s.first, reason)
		case 2:
			podWarnings[i] = fmt.Sprintf("%s (and 1 other pod): %s", s.first, reason)
		default:
			podWarnings[i] = fmt.Sprintf("%s (and %d other pods): %s", s.first, s.count-1, reason)
		}
	}
	sort.Strings(podWarnings)
	return append(warnings, podWarnings...)
}

// prioritize orders pods for checking: one pod per controller first (and
// pods without one), the other replicas after; pods of exempt runtime
// classes are left out.
func (ps podSecurity) prioritize(pods []registry.Object) []registry.Object {
	first := make([]registry.Object, 0, len(pods))
	var rest []registry.Object
	controllers := map[string]bool{}
	for _, pod := range pods {
		if ps.exemptRuntimeClass(mapOf(pod["spec"])) {
			continue
		}
		uid := ""
		for _, ref := range mapsOf(mapOf(pod["metadata"])["ownerReferences"]) {
			if boolOf(ref["controller"]) {
				uid = strOf(ref["uid"])
				break
			}
		}
		switch {
		case uid == "":
			first = append(first, pod)
		case controllers[uid]:
			rest = append(rest, pod)
		default:
			controllers[uid] = true
			first = append(first, pod)
		}
	}
	return append(first, rest...)
}

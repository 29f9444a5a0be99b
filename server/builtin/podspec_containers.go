package builtin

import (
	"fmt"
	"strings"

	"platd/server/apierr"
	"platd/server/validation"
)

// Container values with closed sets.
var (
	supportedPortProtocols  = []string{"SCTP", "TCP", "UDP"}
	supportedPullPolicies   = []string{pullAlways, pullIfNotPresent, pullNever}
	terminationMessageKinds = []string{"File", "FallbackToLogsOnError"}
	supportedHTTPSchemes    = []string{"HTTP", "HTTPS"}
	mountPropagations       = []string{"Bidirectional", "HostToContainer", "None"}
	recursiveReadOnlyModes  = []string{"Disabled", "Enabled", "IfPossible"}
)

// ephemeralForbidden are the container members an ephemeral container may
// not set, in upstream's order.
var ephemeralForbidden = []string{"ports", "resources", "resizePolicy", "restartPolicy", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle"}

const msgInitOnlyWithAlways = "may not be set for init containers without restartPolicy=Always"

// validateContainerCommon applies the rules every kind of container
// follows.
func (c *specCheck) validateContainerCommon(ctr map[string]any, p fieldPath) {
	name := strOf(ctr["name"])
	if name == "" {
		c.add(apierr.Required(p.child("name").String(), ""))
	} else if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		c.add(invalidEach(p.child("name"), name, msgs)...)
	}
	if strOf(ctr["image"]) == "" {
		c.add(apierr.Required(p.child("image").String(), ""))
	}
	switch policy := strOf(ctr["terminationMessagePolicy"]); {
	case contains(terminationMessageKinds, policy):
	case policy == "":
		c.add(apierr.Required(p.child("terminationMessagePolicy").String(), ""))
	default:
		c.add(notSupported(p.child("terminationMessagePolicy"), policy, terminationMessageKinds...))
	}
	mounts := pathsByName(ctr["volumeMounts"], "mountPath")
	devices := pathsByName(ctr["volumeDevices"], "devicePath")
	// Lists that are absent have nothing to check: their paths are not
	// built.
	if has(ctr, "ports") {
		c.add(validateContainerPorts(ctr, p.child("ports"))...)
	}
	if has(ctr, "env") {
		c.add(validateEnv(ctr, p.child("env"))...)
	}
	if has(ctr, "envFrom") {
		c.add(validateEnvFrom(ctr, p.child("envFrom"))...)
	}
	c.validateVolumeMounts(ctr, devices, p.child("volumeMounts"))
	if has(ctr, "volumeDevices") {
		c.validateVolumeDevices(ctr, mounts, p.child("volumeDevices"))
	}
	switch policy := strOf(ctr["imagePullPolicy"]); {
	case contains(supportedPullPolicies, policy):
	case policy == "":
		c.add(apierr.Required(p.child("imagePullPolicy").String(), ""))
	default:
		c.add(notSupported(p.child("imagePullPolicy"), policy, supportedPullPolicies...))
	}
	c.add(c.r.validateResources(mapOf(ctr["resources"]), p.child("resources"))...)
	c.add(c.validateContainerSecurityContext(ctr, p.child("securityContext"))...)
}

// validateContainers checks the regular containers: at least one, unique
// names, probes and hooks, and host ports unique across them.
func (c *specCheck) validateContainers(p fieldPath) {
	ctrs := mapsOf(c.spec["containers"])
	if len(ctrs) == 0 {
		c.add(apierr.Required(p.String(), ""))
		return
	}
	names := map[string]bool{}
	for i, ctr := range ctrs {
		ip := p.index(i)
		c.validateContainerCommon(ctr, ip)
		name := strOf(ctr["name"])
		if names[name] {
			c.add(apierr.Duplicate(ip.child("name").String(), name))
		}
		names[name] = true
		c.validateHooksAndProbes(ctr, ip)
		if has(ctr, "restartPolicy") {
			c.add(apierr.Forbidden(ip.child("restartPolicy").String(), "may not be set for non-init containers"))
		}
	}
	c.add(hostPortConflicts(ctrs, p)...)
}

func (c *specCheck) validateHooksAndProbes(ctr map[string]any, p fieldPath) {
	if lc := mapOf(ctr["lifecycle"]); has(ctr, "lifecycle") {
		for _, h := range []string{"postStart", "preStop"} {
			if has(lc, h) {
				c.add(c.validateHandler(mapOf(lc[h]), lifecycleHandlers, p.child("lifecycle", h))...)
			}
		}
	}
	if has(ctr, "livenessProbe") {
		pp := p.child("livenessProbe")
		probe := mapOf(ctr["livenessProbe"])
		c.add(c.validateProbe(probe, pp)...)
		if n := intAt(probe, "successThreshold"); n != 1 {
			c.add(apierr.Invalid(pp.child("successThreshold").String(), n, "must be 1"))
		}
	}
	if has(ctr, "readinessProbe") {
		pp := p.child("readinessProbe")
		probe := mapOf(ctr["readinessProbe"])
		c.add(c.validateProbe(probe, pp)...)
		if has(probe, "terminationGracePeriodSeconds") {
			c.add(apierr.Invalid(pp.child("terminationGracePeriodSeconds").String(), intAt(probe, "terminationGracePeriodSeconds"), "must not be set for readinessProbes"))
		}
	}
	if has(ctr, "startupProbe") {
		pp := p.child("startupProbe")
		probe := mapOf(ctr["startupProbe"])
		c.add(c.validateProbe(probe, pp)...)
		if n := intAt(probe, "successThreshold"); n != 1 {
			c.add(apierr.Invalid(pp.child("successThreshold").String(), n, "must be 1"))
		}
	}
}

// validateInitContainers checks init containers: names unique with the
// regular ones, a restartPolicy of Always only, and probes and hooks only
// for those that restart (sidecars).
func (c *specCheck) validateInitContainers(p fieldPath) {
	names := map[string]bool{}
	for _, ctr := range mapsOf(c.spec["containers"]) {
		names[strOf(ctr["name"])] = true
	}
	for i, ctr := range mapsOf(c.spec["initContainers"]) {
		ip := p.index(i)
		c.validateContainerCommon(ctr, ip)
		sidecar := false
		if has(ctr, "restartPolicy") {
			policy := strOf(ctr["restartPolicy"])
			if policy != defaultRestartPolicy {
				c.add(notSupported(ip.child("restartPolicy"), policy, defaultRestartPolicy))
			}
			sidecar = policy == defaultRestartPolicy
		}
		name := strOf(ctr["name"])
		if names[name] {
			c.add(apierr.Duplicate(ip.child("name").String(), name))
		} else if name != "" {
			names[name] = true
		}
		// Init containers run one at a time: each is checked alone, at
		// index 0 as upstream reports it.
		c.add(hostPortConflicts([]map[string]any{ctr}, p)...)
		if sidecar {
			c.validateHooksAndProbes(ctr, ip)
			continue
		}
		for _, f := range []string{"lifecycle", "livenessProbe", "readinessProbe", "startupProbe"} {
			if has(ctr, f) {
				c.add(apierr.Forbidden(ip.child(f).String(), msgInitOnlyWithAlways))
			}
		}
	}
}

// validateEphemeralContainers checks debugging containers: common rules,
// names unique across all containers, an existing target, and none of the
// members that would make them part of the workload.
func (c *specCheck) validateEphemeralContainers(p fieldPath) {
	ecs := mapsOf(c.spec["ephemeralContainers"])
	if len(ecs) == 0 {
		return
	}
	others, all := map[string]bool{}, map[string]bool{}
	for _, kind := range []string{"containers", "initContainers"} {
		for _, ctr := range mapsOf(c.spec[kind]) {
			others[strOf(ctr["name"])] = true
			all[strOf(ctr["name"])] = true
		}
	}
	for i, ec := range ecs {
		ip := p.index(i)
		c.validateContainerCommon(ec, ip)
		c.add(imageWhitespace(ec, ip)...)
		name := strOf(ec["name"])
		if all[name] {
			c.add(apierr.Duplicate(ip.child("name").String(), name))
		} else {
			all[name] = true
		}
		if target := strOf(ec["targetContainerName"]); target != "" && !others[target] {
			c.add(&apierr.FieldError{Type: apierr.FieldNotFound, Field: ip.child("targetContainerName").String(), Value: target})
		}
		for _, f := range ephemeralForbidden {
			if !isEmptyValue(ec[f]) {
				c.add(apierr.Forbidden(ip.child(f).String(), "cannot be set for an Ephemeral Container"))
			}
		}
		for j, vm := range mapsOf(ec["volumeMounts"]) {
			for _, f := range []string{"subPath", "subPathExpr"} {
				if strOf(vm[f]) != "" {
					c.add(apierr.Forbidden(ip.child("volumeMounts").index(j).child(f).String(), "cannot be set for an Ephemeral Container"))
				}
			}
		}
	}
}

// imageWhitespace refuses an image padded with whitespace, a rule upstream
// applies only to pods, not templates.
func imageWhitespace(ctr map[string]any, p fieldPath) apierr.FieldErrors {
	image := strOf(ctr["image"])
	if len(image) != len(strings.TrimSpace(image)) {
		return apierr.FieldErrors{apierr.Invalid(p.child("image").String(), image, "must not have leading or trailing whitespace")}
	}
	return nil
}

func validateContainerPorts(ctr map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	names := map[string]bool{}
	for i, port := range mapsOf(ctr["ports"]) {
		ip := p.index(i)
		if name := strOf(port["name"]); name != "" {
			if msgs := portNameErrors(name); len(msgs) > 0 {
				errs = append(errs, invalidEach(ip.child("name"), name, msgs)...)
			} else if names[name] {
				errs = append(errs, apierr.Duplicate(ip.child("name").String(), name))
			} else {
				names[name] = true
			}
		}
		if cp := intAt(port, "containerPort"); cp == 0 {
			errs = append(errs, apierr.Required(ip.child("containerPort").String(), ""))
		} else if cp < 1 || cp > maxPortNumber {
			errs = append(errs, apierr.Invalid(ip.child("containerPort").String(), cp, inclusiveRange(1, maxPortNumber)))
		}
		if hp := intAt(port, "hostPort"); hp != 0 && (hp < 1 || hp > maxPortNumber) {
			errs = append(errs, apierr.Invalid(ip.child("hostPort").String(), hp, inclusiveRange(1, maxPortNumber)))
		}
		switch proto := strOf(port["protocol"]); {
		case proto == "":
			errs = append(errs, apierr.Required(ip.child("protocol").String(), ""))
		case !contains(supportedPortProtocols, proto):
			errs = append(errs, notSupported(ip.child("protocol"), proto, supportedPortProtocols...))
		}
	}
	return errs
}

// hostPortConflicts reports a host port used twice by the same protocol
// and host IP.
func hostPortConflicts(ctrs []map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for ci, ctr := range ctrs {
		for pi, port := range mapsOf(ctr["ports"]) {
			hp := intAt(port, "hostPort")
			if hp == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", strOf(port["protocol"]), strOf(port["hostIP"]), hp)
			if seen[key] {
				errs = append(errs, apierr.Duplicate(p.index(ci).child("ports").index(pi).child("hostPort").String(), key))
			}
			seen[key] = true
		}
	}
	return errs
}

// pathsByName maps the names of a container's mounts or devices to their
// paths.
func pathsByName(list any, pathKey string) map[string]string {
	out := map[string]string{}
	for _, m := range mapsOf(list) {
		out[strOf(m["name"])] = strOf(m[pathKey])
	}
	return out
}

func hasPath(m map[string]string, path string) bool {
	for _, v := range m {
		if v == path {
			return true
		}
	}
	return false
}

func (c *specCheck) validateVolumeMounts(ctr map[string]any, devices map[string]string, p fieldPath) {
	points := map[string]bool{}
	privileged := boolOf(mapOf(ctr["securityContext"])["privileged"])
	for i, m := range mapsOf(ctr["volumeMounts"]) {
		ip := p.index(i)
		name, mp := strOf(m["name"]), strOf(m["mountPath"])
		if name == "" {
			c.add(apierr.Required(ip.child("name").String(), ""))
		}
		vol, found := c.vols[name]
		if !found {
			c.add(&apierr.FieldError{Type: apierr.FieldNotFound, Field: ip.child("name").String(), Value: name})
		}
		if mp == "" {
			c.add(apierr.Required(ip.child("mountPath").String(), ""))
		}
		if points[mp] {
			c.add(apierr.Invalid(ip.child("mountPath").String(), mp, "must be unique"))
		}
		points[mp] = true
		if _, ok := devices[name]; ok {
			c.add(apierr.Invalid(ip.child("name").String(), name, "must not already exist in volumeDevices"))
		}
		if hasPath(devices, mp) {
			c.add(apierr.Invalid(ip.child("mountPath").String(), mp, "must not already exist as a path in volumeDevices"))
		}
		subPath, subExpr := strOf(m["subPath"]), strOf(m["subPathExpr"])
		if found && has(vol, "image") {
			if subPath != "" {
				c.add(apierr.Invalid(ip.child("subPath").String(), subPath, "not allowed in image volume sources"))
			}
			if subExpr != "" {
				c.add(apierr.Invalid(ip.child("subPathExpr").String(), subExpr, "not allowed in image volume sources"))
			}
		}
		// Upstream reports the sub-path rules at the list, not the item.
		if subPath != "" {
			c.add(localDescendingPath(subPath, p.child("subPath"))...)
		}
		if subExpr != "" {
			if subPath != "" {
				c.add(apierr.Invalid(ip.child("subPathExpr").String(), subExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			c.add(localDescendingPath(subExpr, p.child("subPathExpr"))...)
		}
		prop, hasProp := m["mountPropagation"].(string)
		if hasProp {
			pp := p.child("mountPropagation")
			if !contains(mountPropagations, prop) {
				c.add(notSupported(pp, prop, mountPropagations...))
			}
			if prop == "Bidirectional" && !privileged {
				c.add(apierr.Forbidden(pp.String(), "Bidirectional mount propagation is available only to privileged containers"))
			}
		}
		if rro, ok := m["recursiveReadOnly"].(string); ok {
			rp := p.child("recursiveReadOnly")
			switch rro {
			case "Disabled":
			case "Enabled", "IfPossible":
				if !boolOf(m["readOnly"]) {
					c.add(apierr.Forbidden(rp.String(), "may only be specified when readOnly is true"))
				}
				if hasProp && prop != "None" {
					c.add(apierr.Forbidden(rp.String(), "may only be specified when mountPropagation is None or not specified"))
				}
			default:
				c.add(notSupported(rp, rro, recursiveReadOnlyModes...))
			}
		}
	}
}

func (c *specCheck) validateVolumeDevices(ctr map[string]any, mounts map[string]string, p fieldPath) {
	paths, names := map[string]bool{}, map[string]bool{}
	for i, d := range mapsOf(ctr["volumeDevices"]) {
		ip := p.index(i)
		name, dp := strOf(d["name"]), strOf(d["devicePath"])
		vol, found := c.vols[name]
		if name == "" {
			c.add(apierr.Required(ip.child("name").String(), ""))
		}
		if names[name] {
			c.add(apierr.Invalid(ip.child("name").String(), name, "must be unique"))
		}
		if found && !has(vol, "persistentVolumeClaim") && !has(vol, "ephemeral") {
			c.add(apierr.Invalid(ip.child("name").String(), name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !found {
			c.add(&apierr.FieldError{Type: apierr.FieldNotFound, Field: ip.child("name").String(), Value: name})
		}
		if dp == "" {
			c.add(apierr.Required(ip.child("devicePath").String(), ""))
		}
		if paths[dp] {
			c.add(apierr.Invalid(ip.child("devicePath").String(), dp, "must be unique"))
		}
		if dp != "" && len(noBacksteps(dp, ip)) > 0 {
			c.add(apierr.Invalid(ip.child("devicePath").String(), dp, "can not contain backsteps ('..')"))
		} else {
			paths[dp] = true
		}
		if _, ok := mounts[name]; ok {
			c.add(apierr.Invalid(ip.child("name").String(), name, "must not already exist in volumeMounts"))
		}
		if hasPath(mounts, dp) {
			c.add(apierr.Invalid(ip.child("devicePath").String(), dp, "must not already exist as a path in volumeMounts"))
		}
		if name != "" {
			names[name] = true
		}
	}
}

// Handler kinds of probes and of lifecycle hooks, in upstream's order.
var (
	probeHandlers     = []string{"exec", "httpGet", "tcpSocket", "grpc"}
	lifecycleHandlers = []string{"exec", "httpGet", "tcpSocket", "sleep"}
)

// validateHandler checks that exactly one handler is set, and its rules.
func (c *specCheck) validateHandler(h map[string]any, kinds []string, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	n := 0
	for _, kind := range kinds {
		if !has(h, kind) {
			continue
		}
		kp := p.child(kind)
		if n > 0 {
			errs = append(errs, apierr.Forbidden(kp.String(), "may not specify more than 1 handler type"))
			continue
		}
		n++
		m := mapOf(h[kind])
		switch kind {
		case "exec":
			if len(listOf(m["command"])) == 0 {
				errs = append(errs, apierr.Required(kp.child("command").String(), ""))
			}
		case "httpGet":
			errs = append(errs, required(m, "path", kp)...)
			errs = append(errs, validatePortNumOrName(m["port"], kp.child("port"))...)
			if scheme := strOf(m["scheme"]); !contains(supportedHTTPSchemes, scheme) {
				errs = append(errs, notSupported(kp.child("scheme"), scheme, supportedHTTPSchemes...))
			}
			for _, hdr := range mapsOf(m["httpHeaders"]) {
				name := strOf(hdr["name"])
				if !isHTTPHeaderName(name) {
					errs = append(errs, apierr.Invalid(kp.child("httpHeaders").String(), name,
						regexMessage("a valid HTTP header must consist of alphanumeric characters or '-'", "[-A-Za-z0-9]+", "X-Header-Name")))
				}
			}
		case "tcpSocket":
			errs = append(errs, validatePortNumOrName(m["port"], kp.child("port"))...)
		case "grpc":
			port, _ := intOf(m["port"])
			errs = append(errs, validatePortNumOrName(port, kp.child("port"))...)
		case "sleep":
			if c.gracePeriod != nil {
				if s := intAt(m, "seconds"); s <= 0 || s > *c.gracePeriod {
					errs = append(errs, apierr.Invalid(kp.String(), s, fmt.Sprintf("must be greater than 0 and less than terminationGracePeriodSeconds (%d). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.", *c.gracePeriod)))
				}
			}
		}
	}
	if n == 0 {
		errs = append(errs, apierr.Required(p.String(), "must specify a handler type"))
	}
	return errs
}

func isHTTPHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch == '-' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			return false
		}
	}
	return true
}

func (c *specCheck) validateProbe(probe map[string]any, p fieldPath) apierr.FieldErrors {
	errs := c.validateHandler(probe, probeHandlers, p)
	for _, f := range []string{"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"} {
		errs = append(errs, validateNonNegative(probe, f, p)...)
	}
	if has(probe, "terminationGracePeriodSeconds") {
		if n := intAt(probe, "terminationGracePeriodSeconds"); n <= 0 {
			errs = append(errs, apierr.Invalid(p.child("terminationGracePeriodSeconds").String(), n, "must be greater than 0"))
		}
	}
	return errs
}

package builtin

import (
	"strings"

	"platd/server/apierr"
)

// Security values with closed sets.
var (
	seccompProfileTypes     = []string{"Localhost", "RuntimeDefault", "Unconfined"}
	appArmorProfileTypes    = []string{"Localhost", "RuntimeDefault", "Unconfined"}
	procMountTypes          = []string{"Default", "Unmasked"}
	fsGroupChangePolicies   = []string{"Always", "OnRootMismatch"}
	supplementalGroupsModes = []string{"Merge", "Strict"}
	seLinuxChangePolicies   = []string{"MountOption", "Recursive"}
)

// maxLocalhostProfile is PATH_MAX - 1, the longest AppArmor profile path.
const maxLocalhostProfile = 4095

// validateUnixID checks an optional user or group ID member.
func validateUnixID(m map[string]any, key string, p fieldPath) apierr.FieldErrors {
	if !has(m, key) {
		return nil
	}
	if id := intAt(m, key); id < 0 || id > maxUnixID {
		return apierr.FieldErrors{apierr.Invalid(p.child(key).String(), id, inclusiveRange(0, maxUnixID))}
	}
	return nil
}

func (c *specCheck) validateContainerSecurityContext(ctr map[string]any, p fieldPath) apierr.FieldErrors {
	if !has(ctr, "securityContext") {
		return nil
	}
	sc := mapOf(ctr["securityContext"])
	var errs apierr.FieldErrors
	if c.r.forbidPrivileged && boolOf(sc["privileged"]) {
		errs = append(errs, apierr.Forbidden(p.child("privileged").String(), "disallowed by cluster policy"))
	}
	errs = append(errs, validateUnixID(sc, "runAsUser", p)...)
	errs = append(errs, validateUnixID(sc, "runAsGroup", p)...)
	if pm, ok := sc["procMount"].(string); ok {
		if !contains(procMountTypes, pm) {
			errs = append(errs, notSupported(p.child("procMount"), pm, procMountTypes...))
		}
		if c.hostUsers && pm == "Unmasked" {
			errs = append(errs, apierr.Forbidden(p.child("procMount").String(), "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	errs = append(errs, validateSeccompProfile(sc, p.child("seccompProfile"))...)
	if ape, ok := sc["allowPrivilegeEscalation"].(bool); ok && !ape {
		if boolOf(sc["privileged"]) {
			errs = append(errs, apierr.Invalid(p.String(), sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		for _, capability := range listOf(mapOf(sc["capabilities"])["add"]) {
			if strOf(capability) == "CAP_SYS_ADMIN" {
				errs = append(errs, apierr.Invalid(p.String(), sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
			}
		}
	}
	return append(errs, validateAppArmorProfile(sc, p.child("appArmorProfile"))...)
}

func validateSeccompProfile(sc map[string]any, p fieldPath) apierr.FieldErrors {
	if !has(sc, "seccompProfile") {
		return nil
	}
	sp := mapOf(sc["seccompProfile"])
	var errs apierr.FieldErrors
	switch t := strOf(sp["type"]); {
	case contains(seccompProfileTypes, t):
	case t == "":
		errs = append(errs, apierr.Required(p.child("type").String(), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, notSupported(p.child("type"), t, seccompProfileTypes...))
	}
	if strOf(sp["type"]) == "Localhost" {
		if !has(sp, "localhostProfile") {
			errs = append(errs, apierr.Required(p.child("localhostProfile").String(), "must be set when seccomp type is Localhost"))
		} else {
			errs = append(errs, localDescendingPath(strOf(sp["localhostProfile"]), p.child("localhostProfile"))...)
		}
	} else if has(sp, "localhostProfile") {
		errs = append(errs, apierr.Invalid(p.child("localhostProfile").String(), sp, "can only be set when seccomp type is Localhost"))
	}
	return errs
}

func validateAppArmorProfile(sc map[string]any, p fieldPath) apierr.FieldErrors {
	if !has(sc, "appArmorProfile") {
		return nil
	}
	ap := mapOf(sc["appArmorProfile"])
	lp := p.child("localhostProfile")
	var errs apierr.FieldErrors
	switch t := strOf(ap["type"]); t {
	case "Localhost":
		if !has(ap, "localhostProfile") {
			errs = append(errs, apierr.Required(lp.String(), "must be set when AppArmor type is Localhost"))
			break
		}
		profile := strOf(ap["localhostProfile"])
		if trimmed := strings.TrimSpace(profile); trimmed != profile {
			errs = append(errs, apierr.Invalid(lp.String(), profile, "must not be padded with whitespace"))
		} else if trimmed == "" {
			errs = append(errs, apierr.Required(lp.String(), "must be set when AppArmor type is Localhost"))
		}
		if len(profile) > maxLocalhostProfile {
			errs = append(errs, &apierr.FieldError{Type: apierr.FieldTooLong, Field: lp.String(), Detail: "must have at most 4095 bytes"})
		}
	case "RuntimeDefault", "Unconfined":
		if has(ap, "localhostProfile") {
			errs = append(errs, apierr.Invalid(lp.String(), strOf(ap["localhostProfile"]), "can only be set when AppArmor type is Localhost"))
		}
	case "":
		errs = append(errs, apierr.Required(p.child("type").String(), "type is required when appArmorProfile is set"))
	default:
		errs = append(errs, notSupported(p.child("type"), t, appArmorProfileTypes...))
	}
	return errs
}

// validatePodSecurityContext checks the pod-wide security settings. In v1
// hostPID and shareProcessNamespace sit in the spec itself, but upstream
// reports them under securityContext.
func (c *specCheck) validatePodSecurityContext(p fieldPath) {
	sc := mapOf(c.spec["securityContext"])
	if sc == nil {
		return
	}
	c.add(validateUnixID(sc, "fsGroup", p)...)
	c.add(validateUnixID(sc, "runAsUser", p)...)
	c.add(validateUnixID(sc, "runAsGroup", p)...)
	for i, g := range listOf(sc["supplementalGroups"]) {
		if id, _ := intOf(g); id < 0 || id > maxUnixID {
			c.add(apierr.Invalid(p.child("supplementalGroups").index(i).String(), id, inclusiveRange(0, maxUnixID)))
		}
	}
	if share, ok := c.spec["shareProcessNamespace"].(bool); ok && share && boolOf(c.spec["hostPID"]) {
		c.add(apierr.Invalid(p.child("shareProcessNamespace").String(), share, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	if policy, ok := sc["fsGroupChangePolicy"].(string); ok && !contains(fsGroupChangePolicies, policy) {
		c.add(notSupported(p.child("fsGroupChangePolicy"), policy, fsGroupChangePolicies...))
	}
	c.add(validateSeccompProfile(sc, p.child("seccompProfile"))...)
	c.add(validateAppArmorProfile(sc, p.child("appArmorProfile"))...)
	if policy, ok := sc["supplementalGroupsPolicy"].(string); ok && !contains(supplementalGroupsModes, policy) {
		c.add(notSupported(p.child("supplementalGroupsPolicy"), policy, supplementalGroupsModes...))
	}
	if policy, ok := sc["seLinuxChangePolicy"].(string); ok && !contains(seLinuxChangePolicies, policy) {
		c.add(notSupported(p.child("seLinuxChangePolicy"), policy, seLinuxChangePolicies...))
	}
}

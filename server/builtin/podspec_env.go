package builtin

import (
	"strings"
	"unicode"

	"platd/server/apierr"
	"platd/server/schema"
	"platd/server/validation"
)

// validEnvDownwardAPIPaths are the pod fields an environment variable may
// read, sorted as upstream lists them.
var validEnvDownwardAPIPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
	"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
}

// downwardAPIFieldLabels are the pod fields the downward API can select at
// all; "spec.host" is an old spelling of spec.nodeName.
var downwardAPIFieldLabels = []string{
	"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
	"spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
	"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs", "spec.host",
}

// validContainerResourcePaths are the resources a resourceFieldRef may read.
var validContainerResourcePaths = []string{
	"limits.cpu", "limits.ephemeral-storage", "limits.memory",
	"requests.cpu", "requests.ephemeral-storage", "requests.memory",
}

// Prefixes of huge page resources a resourceFieldRef may read.
const (
	hugePagesRequestsPrefix = "requests.hugepages-"
	hugePagesLimitsPrefix   = "limits.hugepages-"
)

// Divisors a resourceFieldRef accepts per resource.
var (
	cpuDivisors   = []string{"1m", "1"}
	bytesDivisors = []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
)

const relaxedEnvNameMsg = "a valid environment variable name must consist only of printable ASCII characters other than '='"

// envNameErrors checks an environment variable name or prefix under the
// relaxed rule, on by default since v1.32: printable ASCII but '='.
func envNameErrors(name string) []string {
	var errs []string
	if name == "" {
		errs = append(errs, "environment variable name must be non-empty")
	}
	for _, r := range name {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || r == '=' {
			errs = append(errs, relaxedEnvNameMsg)
			break
		}
	}
	return errs
}

func validateEnv(c map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, ev := range mapsOf(c["env"]) {
		// Paths are built only for an error: a Pod has many variables.
		name := strOf(ev["name"])
		if name == "" {
			errs = append(errs, apierr.Required(p.index(i).child("name").String(), ""))
		} else if msgs := envNameErrors(name); len(msgs) > 0 {
			errs = append(errs, invalidEach(p.index(i).child("name"), name, msgs)...)
		}
		if has(ev, "valueFrom") {
			errs = append(errs, validateEnvValueFrom(ev, p.index(i).child("valueFrom"))...)
		}
	}
	return errs
}

func validateEnvValueFrom(ev map[string]any, p fieldPath) apierr.FieldErrors {
	if !has(ev, "valueFrom") {
		return nil
	}
	from := mapOf(ev["valueFrom"])
	var errs apierr.FieldErrors
	n := 0
	if has(from, "fieldRef") {
		n++
		errs = append(errs, validateObjectFieldSelector(mapOf(from["fieldRef"]), validEnvDownwardAPIPaths, p.child("fieldRef"))...)
	}
	if has(from, "resourceFieldRef") {
		n++
		errs = append(errs, validateResourceFieldSelector(mapOf(from["resourceFieldRef"]), p.child("resourceFieldRef"), false)...)
	}
	for _, kind := range []string{"configMapKeyRef", "secretKeyRef"} {
		if has(from, kind) {
			n++
			errs = append(errs, validateKeySelector(mapOf(from[kind]), p.child(kind))...)
		}
	}
	switch {
	case n == 0:
		errs = append(errs, apierr.Invalid(p.String(), "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case strOf(ev["value"]) != "":
		errs = append(errs, apierr.Invalid(p.String(), "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, apierr.Invalid(p.String(), "", "may not have more than one field specified at a time"))
	}
	return errs
}

// splitSubscript splits "metadata.labels['key']" into the path and key.
func splitSubscript(fieldPath string) (string, string, bool) {
	s, ok := strings.CutSuffix(fieldPath, "']")
	if !ok {
		return fieldPath, "", false
	}
	before, after, ok := strings.Cut(s, "['")
	if !ok || before == "" {
		return fieldPath, "", false
	}
	return before, after, true
}

// validateObjectFieldSelector checks a downward API fieldRef against the
// paths allowed where it is used.
func validateObjectFieldSelector(fs map[string]any, allowed []string, p fieldPath) apierr.FieldErrors {
	version, fp := strOf(fs["apiVersion"]), strOf(fs["fieldPath"])
	if version == "" {
		return apierr.FieldErrors{apierr.Required(p.child("apiVersion").String(), "")}
	}
	if fp == "" {
		return apierr.FieldErrors{apierr.Required(p.child("fieldPath").String(), "")}
	}
	internal, err := convertDownwardAPIFieldLabel(version, fp)
	if err != "" {
		return apierr.FieldErrors{apierr.Invalid(p.child("fieldPath").String(), fp, "error converting fieldPath: "+err)}
	}
	if base, key, ok := splitSubscript(internal); ok {
		switch base {
		case "metadata.annotations":
			return qualifiedName(strings.ToLower(key), p)
		case "metadata.labels":
			return qualifiedName(key, p)
		}
		return apierr.FieldErrors{apierr.Invalid(p.String(), base, "does not support subscript")}
	}
	if !contains(allowed, internal) {
		return apierr.FieldErrors{notSupported(p.child("fieldPath"), internal, sortedCopy(allowed...)...)}
	}
	return nil
}

// convertDownwardAPIFieldLabel maps a v1 field label to its internal
// name, or returns why it cannot.
func convertDownwardAPIFieldLabel(version, label string) (string, string) {
	if version != "v1" {
		return "", "unsupported pod version: " + version
	}
	if base, _, ok := splitSubscript(label); ok {
		if base == "metadata.annotations" || base == "metadata.labels" {
			return label, ""
		}
		return "", "field label does not support subscript: " + label
	}
	if !contains(downwardAPIFieldLabels, label) {
		return "", "field label not supported: " + label
	}
	if label == "spec.host" {
		return "spec.nodeName", ""
	}
	return label, ""
}

// validateResourceFieldSelector checks a resourceFieldRef; in a volume it
// must name its container.
func validateResourceFieldSelector(fs map[string]any, p fieldPath, volume bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	res := strOf(fs["resource"])
	switch {
	case volume && strOf(fs["containerName"]) == "":
		errs = append(errs, apierr.Required(p.child("containerName").String(), ""))
	case res == "":
		errs = append(errs, apierr.Required(p.child("resource").String(), ""))
	case !contains(validContainerResourcePaths, res) &&
		!strings.HasPrefix(res, hugePagesLimitsPrefix) && !strings.HasPrefix(res, hugePagesRequestsPrefix):
		errs = append(errs, notSupported(p.child("resource"), res, validContainerResourcePaths...))
	}
	divisor, ok := schema.AmountOf(fs["divisor"])
	if !ok || divisor.Sign() == 0 {
		return errs
	}
	dp := p.child("divisor")
	switch res {
	case "limits.cpu", "requests.cpu":
		if !contains(cpuDivisors, divisor.String()) {
			errs = append(errs, apierr.Invalid(dp.String(), res, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !contains(bytesDivisors, divisor.String()) {
			errs = append(errs, apierr.Invalid(dp.String(), res, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !contains(bytesDivisors, divisor.String()) {
			errs = append(errs, apierr.Invalid(dp.String(), res, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource"))
		}
	}
	if strings.HasPrefix(res, hugePagesRequestsPrefix) || strings.HasPrefix(res, hugePagesLimitsPrefix) {
		if !contains(bytesDivisors, divisor.String()) {
			errs = append(errs, apierr.Invalid(dp.String(), res, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource"))
		}
	}
	return errs
}

// validateKeySelector checks a configMapKeyRef or secretKeyRef.
func validateKeySelector(s map[string]any, p fieldPath) apierr.FieldErrors {
	name := strOf(s["name"])
	errs := dnsSubdomain(name, p.child("name"))
	key := strOf(s["key"])
	if key == "" {
		return append(errs, apierr.Required(p.child("key").String(), ""))
	}
	return append(errs, invalidEach(p.child("key"), key, configKeyErrors(key))...)
}

func validateEnvFrom(c map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, ev := range mapsOf(c["envFrom"]) {
		ip := p.index(i)
		if prefix := strOf(ev["prefix"]); prefix != "" {
			errs = append(errs, invalidEach(ip.child("prefix"), prefix, envNameErrors(prefix))...)
		}
		n := 0
		for _, kind := range []string{"configMapRef", "secretRef"} {
			if !has(ev, kind) {
				continue
			}
			n++
			kp := ip.child(kind, "name")
			name := strOf(mapOf(ev[kind])["name"])
			if name == "" {
				errs = append(errs, apierr.Required(kp.String(), ""))
				continue
			}
			// Names are checked as prefixes: a trailing dash is allowed.
			errs = append(errs, invalidEach(kp, name, validation.IsDNS1123Subdomain(maskTrailingDash(name)))...)
		}
		// Upstream reports these two at the list, not the item.
		switch {
		case n == 0:
			errs = append(errs, apierr.Invalid(p.String(), "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			errs = append(errs, apierr.Invalid(p.String(), "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

// maskTrailingDash lets a name end in "-", as names used as prefixes may.
func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

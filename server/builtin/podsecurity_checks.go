package builtin

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The Pod Security Standards checks, as upstream's PodSecurity admission
// evaluates them at the latest policy version of v1.32. A check reads a
// pod's metadata and spec (a pod's, or a workload's pod template's) and
// returns why the pod is refused, or an empty reason.

// psCheck is one check of a level.
type psCheck struct {
	// since is the first v1.<since> policy version the check belongs to.
	since int
	// overlap marks a baseline check that a restricted check replaces
	// from policy version v1.<overlapSince> on: at restricted it is then
	// left out.
	overlap      bool
	overlapSince int
	run          func(meta, spec map[string]any) psResult
}

// psResult is a check's refusal: a short reason and, for one object,
// its detail ("" when allowed).
type psResult struct{ reason, detail string }

// Baseline and restricted checks, each in upstream's order of evaluation:
// a level's results are listed in that order.
var (
	psBaselineChecks = []psCheck{
		{run: psAppArmor},
		{run: psCapabilitiesBaseline, overlap: true, overlapSince: 22},
		{run: psHostNamespaces},
		{run: psHostPathVolumes, overlap: true},
		{run: psHostPorts},
		{run: psPrivilegedCheck},
		{run: psProcMount},
		{run: psSELinux},
		{run: psSeccompBaseline, overlap: true, overlapSince: 19, since: 19},
		{run: psSysctlsCheck},
		{run: psHostProcess},
	}
	psRestrictedChecks = []psCheck{
		{run: psAllowPrivilegeEscalation, since: 8},
		{run: psCapabilitiesRestricted, since: 22},
		{run: psRestrictedVolumes},
		{run: psRunAsNonRoot},
		{run: psRunAsUser, since: 23},
		{run: psSeccompRestricted, since: 19},
	}
)

// psContainers calls visit for each container of spec: init containers,
// then containers, then ephemeral containers.
func psContainers(spec map[string]any, visit func(c map[string]any)) {
	for _, key := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for _, c := range mapsOf(spec[key]) {
			visit(c)
		}
	}
}

// psSecurity is a container's (or a pod's) securityContext, nil if unset.
func psSecurity(obj map[string]any) map[string]any { return mapOf(obj["securityContext"]) }

// psQuote joins items each quoted: `"a", "b"`.
func psQuote(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return `"` + strings.Join(items, `", "`) + `"`
}

// psPlural picks the singular or the plural form for n.
func psPlural(singular, plural string, n int) string {
	if n == 1 {
		return singular
	}
	return plural
}

// psNamed words a list of containers: `containers "a", "b"`.
func psNamed(names []string) string {
	return psPlural("container", "containers", len(names)) + " " + psQuote(names)
}

// psSortedSet returns the distinct values of items, sorted.
func psSortedSet(items []string) []string {
	out := slices.Clone(items)
	sort.Strings(out)
	return slices.Compact(out)
}

// psWindows says the pod declares the windows OS: some restricted checks
// concern Linux only.
func psWindows(spec map[string]any) bool { return strOf(mapOf(spec["os"])["name"]) == "windows" }

func psPrivilegedCheck(_, spec map[string]any) psResult {
	var bad []string
	psContainers(spec, func(c map[string]any) {
		if boolOf(psSecurity(c)["privileged"]) {
			bad = append(bad, strOf(c["name"]))
		}
	})
	if len(bad) == 0 {
		return psResult{}
	}
	return psResult{"privileged", psNamed(bad) + " must not set securityContext.privileged=true"}
}

func psHostNamespaces(_, spec map[string]any) psResult {
	var set []string
	for _, k := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if boolOf(spec[k]) {
			set = append(set, k+"=true")
		}
	}
	if len(set) == 0 {
		return psResult{}
	}
	return psResult{"host namespaces", strings.Join(set, ", ")}
}

func psHostPathVolumes(_, spec map[string]any) psResult {
	var bad []string
	for _, v := range mapsOf(spec["volumes"]) {
		if v["hostPath"] != nil {
			bad = append(bad, strOf(v["name"]))
		}
	}
	if len(bad) == 0 {
		return psResult{}
	}
	return psResult{"hostPath volumes", psPlural("volume", "volumes", len(bad)) + " " + psQuote(bad)}
}

func psHostPorts(_, spec map[string]any) psResult {
	var bad []string
	// The ports are listed once each, sorted as text, as upstream's set.
	seen := map[string]bool{}
	var ports []string
	psContainers(spec, func(c map[string]any) {
		found := false
		for _, p := range mapsOf(c["ports"]) {
			if n, ok := intOf(p["hostPort"]); ok && n != 0 {
				found = true
				if s := strconv.FormatInt(n, 10); !seen[s] {
					seen[s] = true
					ports = append(ports, s)
				}
			}
		}
		if found {
			bad = append(bad, strOf(c["name"]))
		}
	})
	if len(bad) == 0 {
		return psResult{}
	}
	sort.Strings(ports)
	return psResult{"hostPort", fmt.Sprintf("%s %s %s %s", psNamed(bad),
		psPlural("uses", "use", len(bad)), psPlural("hostPort", "hostPorts", len(ports)), strings.Join(ports, ", "))}
}

// psBaselineCapabilities are the capabilities baseline lets a container add.
var psBaselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL",
	"MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

func psCapabilitiesBaseline(_, spec map[string]any) psResult {
	var bad, caps []string
	psContainers(spec, func(c map[string]any) {
		valid := true
		for _, cp := range listOf(mapOf(psSecurity(c)["capabilities"])["add"]) {
			if s := strOf(cp); !slices.Contains(psBaselineCapabilities, s) {
				valid = false
				caps = append(caps, s)
			}
		}
		if !valid {
			bad = append(bad, strOf(c["name"]))
		}
	})
	if len(bad) == 0 {
		return psResult{}
	}
	return psResult{"non-default capabilities", fmt.Sprintf("%s must not include %s in securityContext.capabilities.add",
		psNamed(bad), psQuote(psSortedSet(caps)))}
}

func psCapabilitiesRestricted(_, spec map[string]any) psResult {
	if psWindows(spec) {
		return psResult{}
	}
	var noDrop, adding, caps []string
	psContainers(spec, func(c map[string]any) {
		name := strOf(c["name"])
		cs, ok := psSecurity(c)["capabilities"].(map[string]any)
		if !ok {
			noDrop = append(noDrop, name)
			return
		}
		if !slices.ContainsFunc(listOf(cs["drop"]), func(v any) bool { return strOf(v) == "ALL" }) {
			noDrop = append(noDrop, name)
		}
		added := false
		for _, cp := range listOf(cs["add"]) {
			if s := strOf(cp); s != "NET_BIND_SERVICE" {
				added = true
				caps = append(caps, s)
			}
		}
		if added {
			adding = append(adding, name)
		}
	})
	var details []string
	if len(noDrop) > 0 {
		details = append(details, psNamed(noDrop)+` must set securityContext.capabilities.drop=["ALL"]`)
	}
	if len(adding) > 0 {
		details = append(details, fmt.Sprintf("%s must not include %s in securityContext.capabilities.add",
			psNamed(adding), psQuote(psSortedSet(caps))))
	}
	if len(details) == 0 {
		return psResult{}
	}
	return psResult{"unrestricted capabilities", strings.Join(details, "; ")}
}

// psAppArmorAllowed says an AppArmor profile type is one baseline allows.
func psAppArmorAllowed(t string) bool { return t == "RuntimeDefault" || t == "Localhost" }

func psAppArmor(meta, spec map[string]any) psResult {
	var setters, values []string
	if p := mapOf(psSecurity(spec)["appArmorProfile"]); p != nil && !psAppArmorAllowed(strOf(p["type"])) {
		setters = append(setters, "pod")
		values = append(values, strOf(p["type"]))
	}
	var bad []string
	psContainers(spec, func(c map[string]any) {
		if p := mapOf(psSecurity(c)["appArmorProfile"]); p != nil && !psAppArmorAllowed(strOf(p["type"])) {
			bad = append(bad, strOf(c["name"]))
			values = append(values, strOf(p["type"]))
		}
	})
	if len(bad) > 0 {
		setters = append(setters, psNamed(bad))
	}
	values = psSortedSet(values)
	var annotations []string
	for k, v := range mapOf(meta["annotations"]) {
		s := strOf(v)
		if strings.HasPrefix(k, psAppArmorAnnotationPrefix) && s != "" && s != "runtime/default" && !strings.HasPrefix(s, "localhost/") {
			annotations = append(annotations, fmt.Sprintf("%s=%q", k, s))
		}
	}
	if len(annotations) > 0 {
		sort.Strings(annotations)
		values = append(values, annotations...)
		setters = append(setters, psPlural("annotation", "annotations", len(annotations)))
	}
	if len(setters) == 0 {
		return psResult{}
	}
	return psResult{psPlural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)), fmt.Sprintf("%s must not set AppArmor profile type to %s",
		strings.Join(setters, " and "), psQuote(values))}
}

// psAppArmorAnnotationPrefix is the brand-free tail of the AppArmor
// container annotations' prefix; psAppArmor matches keys holding it.
var psAppArmorAnnotationPrefix = "container.apparmor.security.beta."

func psProcMount(_, spec map[string]any) psResult {
	var bad, types []string
	psContainers(spec, func(c map[string]any) {
		if t, ok := psSecurity(c)["procMount"].(string); ok && t != "Default" {
			bad = append(bad, strOf(c["name"]))
			types = append(types, t)
		}
	})
	if len(bad) == 0 {
		return psResult{}
	}
	return psResult{"procMount", fmt.Sprintf("%s must not set securityContext.procMount to %s", psNamed(bad), psQuote(psSortedSet(types)))}
}

// psSELinuxTypes are the SELinux types baseline allows.
var psSELinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t"}

func psSELinux(_, spec map[string]any) psResult {
	var setters, types []string
	setUser, setRole := false, false
	valid := func(o map[string]any) bool {
		ok := true
		if t := strOf(o["type"]); !slices.Contains(psSELinuxTypes, t) {
			ok = false
			types = append(types, t)
		}
		if strOf(o["user"]) != "" {
			ok, setUser = false, true
		}
		if strOf(o["role"]) != "" {
			ok, setRole = false, true
		}
		return ok
	}
	if o := mapOf(psSecurity(spec)["seLinuxOptions"]); o != nil && !valid(o) {
		setters = append(setters, "pod")
	}
	var bad []string
	psContainers(spec, func(c map[string]any) {
		if o := mapOf(psSecurity(c)["seLinuxOptions"]); o != nil && !valid(o) {
			bad = append(bad, strOf(c["name"]))
		}
	})
	if len(bad) > 0 {
		setters = append(setters, psNamed(bad))
	}
	if len(setters) == 0 {
		return psResult{}
	}
	var data []string
	if len(types) > 0 {
		types = psSortedSet(types)
		data = append(data, psPlural("type", "types", len(types))+" "+psQuote(types))
	}
	if setUser {
		data = append(data, "user may not be set")
	}
	if setRole {
		data = append(data, "role may not be set")
	}
	return psResult{"seLinuxOptions", fmt.Sprintf("%s set forbidden securityContext.seLinuxOptions: %s",
		strings.Join(setters, " and "), strings.Join(data, "; "))}
}

// psSeccompType returns the seccompProfile type set in a securityContext
// and whether one is set.
func psSeccompType(sc map[string]any) (string, bool) {
	p, ok := sc["seccompProfile"].(map[string]any)
	if !ok {
		return "", false
	}
	return strOf(p["type"]), true
}

func psSeccompBaseline(_, spec map[string]any) psResult {
	var setters, values []string
	if t, ok := psSeccompType(psSecurity(spec)); ok && t == "Unconfined" {
		setters = append(setters, "pod")
		values = append(values, t)
	}
	var bad []string
	psContainers(spec, func(c map[string]any) {
		if t, ok := psSeccompType(psSecurity(c)); ok && t == "Unconfined" {
			bad = append(bad, strOf(c["name"]))
			values = append(values, t)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, psNamed(bad))
	}
	if len(setters) == 0 {
		return psResult{}
	}
	return psResult{"seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s",
		strings.Join(setters, " and "), psQuote(psSortedSet(values)))}
}

func psSeccompRestricted(_, spec map[string]any) psResult {
	if psWindows(spec) {
		return psResult{}
	}
	valid := func(t string) bool { return t == "RuntimeDefault" || t == "Localhost" }
	var setters, values, explicit, implicit []string
	podSet := false
	if t, ok := psSeccompType(psSecurity(spec)); ok {
		if valid(t) {
			podSet = true
		} else {
			setters = append(setters, "pod")
			values = append(values, t)
		}
	}
	psContainers(spec, func(c map[string]any) {
		if t, ok := psSeccompType(psSecurity(c)); ok {
			if !valid(t) {
				explicit = append(explicit, strOf(c["name"]))
				values = append(values, t)
			}
		} else if !podSet {
			implicit = append(implicit, strOf(c["name"]))
		}
	})
	if len(explicit) > 0 {
		setters = append(setters, psNamed(explicit))
	}
	if len(setters) > 0 {
		return psResult{"seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s",
			strings.Join(setters, " and "), psQuote(psSortedSet(values)))}
	}
	if len(implicit) > 0 {
		return psResult{"seccompProfile", fmt.Sprintf(`pod or %s must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
			psNamed(implicit))}
	}
	return psResult{}
}

// psSysctls are the sysctls baseline allows.
var psSysctls = []string{
	"kernel.shm_rmid_forced",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
}

func psSysctlsCheck(_, spec map[string]any) psResult {
	var bad []string
	for _, s := range mapsOf(psSecurity(spec)["sysctls"]) {
		if n := strOf(s["name"]); !slices.Contains(psSysctls, n) {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return psResult{}
	}
	return psResult{"forbidden sysctls", strings.Join(bad, ", ")}
}

func psHostProcess(_, spec map[string]any) psResult {
	hostProcess := func(sc map[string]any) bool { return boolOf(mapOf(sc["windowsOptions"])["hostProcess"]) }
	pod := hostProcess(psSecurity(spec))
	var bad []string
	psContainers(spec, func(c map[string]any) {
		if hostProcess(psSecurity(c)) {
			bad = append(bad, strOf(c["name"]))
		}
	})
	const must = " must not set securityContext.windowsOptions.hostProcess=true"
	switch {
	case pod && len(bad) > 0:
		return psResult{"hostProcess", "pod and " + psNamed(bad) + must}
	case pod:
		return psResult{"hostProcess", "pod" + must}
	case len(bad) > 0:
		return psResult{"hostProcess", psNamed(bad) + must}
	}
	return psResult{}
}

func psAllowPrivilegeEscalation(_, spec map[string]any) psResult {
	if psWindows(spec) {
		return psResult{}
	}
	var bad []string
	psContainers(spec, func(c map[string]any) {
		if v, ok := psSecurity(c)["allowPrivilegeEscalation"].(bool); !ok || v {
			bad = append(bad, strOf(c["name"]))
		}
	})
	if len(bad) == 0 {
		return psResult{}
	}
	return psResult{"allowPrivilegeEscalation != false", psNamed(bad) + " must set securityContext.allowPrivilegeEscalation=false"}
}

// psVolumeTypes are the volume sources restricted refuses, by name, in
// the order they are looked for; psAllowedVolumeTypes those it allows.
var (
	psVolumeTypes = []string{"hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
		"glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume",
		"quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos"}
	psAllowedVolumeTypes = []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
		"persistentVolumeClaim", "projected", "secret"}
)

func psRestrictedVolumes(_, spec map[string]any) psResult {
	var bad, types []string
	for _, v := range mapsOf(spec["volumes"]) {
		if slices.ContainsFunc(psAllowedVolumeTypes, func(t string) bool { return v[t] != nil }) {
			continue
		}
		bad = append(bad, strOf(v["name"]))
		t := "unknown"
		if i := slices.IndexFunc(psVolumeTypes, func(t string) bool { return v[t] != nil }); i >= 0 {
			t = psVolumeTypes[i]
		}
		types = append(types, t)
	}
	if len(bad) == 0 {
		return psResult{}
	}
	types = psSortedSet(types)
	return psResult{"restricted volume types", fmt.Sprintf("%s %s %s %s %s",
		psPlural("volume", "volumes", len(bad)), psQuote(bad), psPlural("uses", "use", len(bad)),
		psPlural("restricted volume type", "restricted volume types", len(types)), psQuote(types))}
}

func psRunAsNonRoot(_, spec map[string]any) psResult {
	var setters, explicit, implicit []string
	podNonRoot := false
	if v, ok := psSecurity(spec)["runAsNonRoot"].(bool); ok {
		if v {
			podNonRoot = true
		} else {
			setters = append(setters, "pod")
		}
	}
	psContainers(spec, func(c map[string]any) {
		if v, ok := psSecurity(c)["runAsNonRoot"].(bool); ok {
			if !v {
				explicit = append(explicit, strOf(c["name"]))
			}
		} else if !podNonRoot {
			implicit = append(implicit, strOf(c["name"]))
		}
	})
	if len(explicit) > 0 {
		setters = append(setters, psNamed(explicit))
	}
	if len(setters) > 0 {
		return psResult{"runAsNonRoot != true", strings.Join(setters, " and ") + " must not set securityContext.runAsNonRoot=false"}
	}
	if len(implicit) > 0 {
		return psResult{"runAsNonRoot != true", "pod or " + psNamed(implicit) + " must set securityContext.runAsNonRoot=true"}
	}
	return psResult{}
}

// psIsZero says v is a decoded integer 0.
func psIsZero(v any) bool { n, ok := intOf(v); return ok && n == 0 }

func psRunAsUser(_, spec map[string]any) psResult {
	var setters, bad []string
	if psIsZero(psSecurity(spec)["runAsUser"]) {
		setters = append(setters, "pod")
	}
	psContainers(spec, func(c map[string]any) {
		if psIsZero(psSecurity(c)["runAsUser"]) {
			bad = append(bad, strOf(c["name"]))
		}
	})
	if len(bad) > 0 {
		setters = append(setters, psNamed(bad))
	}
	if len(setters) == 0 {
		return psResult{}
	}
	return psResult{"runAsUser=0", strings.Join(setters, " and ") + " must not set runAsUser=0"}
}

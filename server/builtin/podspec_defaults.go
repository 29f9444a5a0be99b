package builtin

import (
	"math/big"
	"slices"
	"strings"

	"platd/server/registry"
	"platd/server/schema"
)

// Defaults of every PodSpec, wherever it is embedded. All are constants
// set when the field is absent or empty; none depends on another field.
const (
	defaultRestartPolicy            = "Always"
	defaultDNSPolicy                = "ClusterFirst"
	defaultTerminationGracePeriod   = int64(30)
	defaultSchedulerName            = "default-scheduler"
	defaultTerminationMessagePath   = "/dev/termination-log"
	defaultTerminationMessagePolicy = "File"
	defaultProtocol                 = "TCP"
	defaultFieldRefAPIVersion       = "v1"
	defaultHTTPPath                 = "/"
	defaultHTTPScheme               = "HTTP"
	defaultVolumeMode               = "Filesystem"
	// defaultFileMode is 0644, the mode of files projected into volumes.
	defaultFileMode = int64(0o644)
	// defaultTokenExpiration is one hour, the life of a projected token.
	defaultTokenExpiration = int64(3600)
)

// Probe defaults, set when the field is zero.
const (
	defaultProbeTimeout          = int64(1)
	defaultProbePeriod           = int64(10)
	defaultProbeSuccessThreshold = int64(1)
	defaultProbeFailureThreshold = int64(3)
)

// Image pull policies.
const (
	pullAlways       = "Always"
	pullIfNotPresent = "IfNotPresent"
	pullNever        = "Never"
)

// containerKinds are the PodSpec members holding containers, in the order
// upstream visits them.
var containerKinds = []string{"initContainers", "containers", "ephemeralContainers"}

// defaultPodSpec applies the defaults every PodSpec gets (pods, pod
// templates and the templates of workloads), in place. Callers pass the
// spec object itself: obj["spec"] for a pod, template.spec for templates.
func defaultPodSpec(spec map[string]any) {
	setIfEmpty(spec, "dnsPolicy", defaultDNSPolicy)
	setIfEmpty(spec, "restartPolicy", defaultRestartPolicy)
	if !has(spec, "securityContext") {
		spec["securityContext"] = map[string]any{}
	}
	if !has(spec, "terminationGracePeriodSeconds") {
		spec["terminationGracePeriodSeconds"] = defaultTerminationGracePeriod
	}
	setIfEmpty(spec, "schedulerName", defaultSchedulerName)
	syncServiceAccount(spec)
	for _, vol := range mapsOf(spec["volumes"]) {
		defaultVolume(vol)
	}
	for _, kind := range containerKinds {
		for _, c := range mapsOf(spec[kind]) {
			defaultContainer(c)
		}
	}
	roundResourceList(mapOf(spec["overhead"]))
}

// defaultPod applies the defaults of a pod: those only pods get, then
// those of its spec.
func defaultPod(obj registry.Object) {
	spec := child(obj, "spec")
	// Requests default to limits only in pods, not in templates: a
	// template's containers are defaulted again when pods are made.
	for _, kind := range []string{"containers", "initContainers"} {
		for _, c := range mapsOf(spec[kind]) {
			res := mapOf(c["resources"])
			limits := mapOf(res["limits"])
			if limits == nil {
				continue
			}
			requests := child(res, "requests")
			for k, v := range limits {
				if _, ok := requests[k]; !ok {
					requests[k] = v
				}
			}
		}
	}
	if !has(spec, "enableServiceLinks") {
		spec["enableServiceLinks"] = true
	}
	if boolOf(spec["hostNetwork"]) {
		// A host-network container listens on the node: its host port is
		// its container port.
		for _, kind := range []string{"containers", "initContainers"} {
			for _, c := range mapsOf(spec[kind]) {
				for _, p := range mapsOf(c["ports"]) {
					if intAt(p, "hostPort") == 0 {
						p["hostPort"] = intAt(p, "containerPort")
					}
				}
			}
		}
	}
	defaultPodSpec(spec)
}

// syncServiceAccount keeps the deprecated serviceAccount member equal to
// serviceAccountName, which it fills when only the old member is given.
func syncServiceAccount(spec map[string]any) {
	// The member is copied as it is, a string already boxed.
	name := spec["serviceAccountName"]
	if strOf(name) == "" {
		name = spec["serviceAccount"]
	}
	if strOf(name) == "" {
		delete(spec, "serviceAccountName")
		delete(spec, "serviceAccount")
		return
	}
	spec["serviceAccountName"] = name
	spec["serviceAccount"] = name
}

func setIfEmpty(m map[string]any, key string, v any) {
	if isEmptyValue(m[key]) {
		m[key] = v
	}
}

// volumeSources are the members of a volume naming its source, in the
// order upstream checks them.
var volumeSources = []string{
	"emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs",
	"iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte",
	"downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume", "photonPersistentDisk",
	"portworxVolume", "azureDisk", "storageos", "projected", "scaleIO", "csi", "ephemeral", "image",
}

// volumeSourceRank is the position of each volume source in
// volumeSources.
var volumeSourceRank = func() map[string]int {
	m := make(map[string]int, len(volumeSources))
	for i, s := range volumeSources {
		m[s] = i
	}
	return m
}()

// sourcesOf appends the sources vol sets (members of volumeSources that are
// not null) to dst, in the order of volumeSources. It reads the few
// members of vol rather than looking up every source in it.
func sourcesOf(dst []string, vol map[string]any) []string {
	start := len(dst)
	for k, v := range vol {
		if _, ok := volumeSourceRank[k]; ok && v != nil {
			dst = append(dst, k)
		}
	}
	if len(dst)-start > 1 {
		slices.SortFunc(dst[start:], func(a, b string) int { return volumeSourceRank[a] - volumeSourceRank[b] })
	}
	return dst
}

func defaultVolume(vol map[string]any) {
	var buf [2]string
	if len(sourcesOf(buf[:0], vol)) == 0 {
		// A volume naming no source is a scratch directory.
		vol["emptyDir"] = map[string]any{}
	}
	if m := mapOf(vol["hostPath"]); m != nil && !has(m, "type") {
		m["type"] = ""
	}
	for _, s := range []string{"secret", "configMap", "downwardAPI", "projected"} {
		if m := mapOf(vol[s]); m != nil && !has(m, "defaultMode") {
			m["defaultMode"] = defaultFileMode
		}
	}
	if m := mapOf(vol["downwardAPI"]); m != nil {
		defaultDownwardAPIItems(m)
	}
	if m := mapOf(vol["projected"]); m != nil {
		for _, src := range mapsOf(m["sources"]) {
			if d := mapOf(src["downwardAPI"]); d != nil {
				defaultDownwardAPIItems(d)
			}
			if t := mapOf(src["serviceAccountToken"]); t != nil && !has(t, "expirationSeconds") {
				t["expirationSeconds"] = defaultTokenExpiration
			}
		}
	}
	if m := mapOf(vol["ephemeral"]); m != nil {
		if tmpl := mapOf(m["volumeClaimTemplate"]); tmpl != nil {
			defaultClaimSpec(child(tmpl, "spec"))
		}
	}
}

func defaultDownwardAPIItems(m map[string]any) {
	for _, it := range mapsOf(m["items"]) {
		if f := mapOf(it["fieldRef"]); f != nil {
			setIfEmpty(f, "apiVersion", defaultFieldRefAPIVersion)
		}
	}
}

func defaultContainer(c map[string]any) {
	if isEmptyValue(c["imagePullPolicy"]) {
		// Mutable tags are pulled every time; anything else once.
		if pullsLatest(strOf(c["image"])) {
			c["imagePullPolicy"] = pullAlways
		} else {
			c["imagePullPolicy"] = pullIfNotPresent
		}
	}
	setIfEmpty(c, "terminationMessagePath", defaultTerminationMessagePath)
	setIfEmpty(c, "terminationMessagePolicy", defaultTerminationMessagePolicy)
	for _, p := range mapsOf(c["ports"]) {
		setIfEmpty(p, "protocol", defaultProtocol)
	}
	for _, e := range mapsOf(c["env"]) {
		if f := mapOf(mapOf(e["valueFrom"])["fieldRef"]); f != nil {
			setIfEmpty(f, "apiVersion", defaultFieldRefAPIVersion)
		}
	}
	res := mapOf(c["resources"])
	roundResourceList(mapOf(res["limits"]))
	roundResourceList(mapOf(res["requests"]))
	for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := mapOf(c[probe]); p != nil {
			setIfEmpty(p, "timeoutSeconds", defaultProbeTimeout)
			setIfEmpty(p, "periodSeconds", defaultProbePeriod)
			setIfEmpty(p, "successThreshold", defaultProbeSuccessThreshold)
			setIfEmpty(p, "failureThreshold", defaultProbeFailureThreshold)
			defaultHTTPGet(mapOf(p["httpGet"]))
		}
	}
	if lc := mapOf(c["lifecycle"]); lc != nil {
		for _, h := range []string{"postStart", "preStop"} {
			defaultHTTPGet(mapOf(mapOf(lc[h])["httpGet"]))
		}
	}
}

func defaultHTTPGet(h map[string]any) {
	if h == nil {
		return
	}
	setIfEmpty(h, "path", defaultHTTPPath)
	setIfEmpty(h, "scheme", defaultHTTPScheme)
}

// milliNanos is one thousandth in nanounits, the units of Amount.Nanos.
var milliNanos = big.NewInt(1_000_000)

// roundResourceList rounds every quantity of a resource list up to whole
// thousandths, as upstream does to every resource list it decodes: finer
// amounts cannot be honoured.
func roundResourceList(m map[string]any) {
	for k, v := range m {
		if r, ok := roundUpMilli(v); ok {
			m[k] = r
		}
	}
}

// roundUpMilli returns v rounded away from zero to a multiple of 1m, in
// canonical form, and whether it changed.
func roundUpMilli(v any) (string, bool) {
	q, ok := schema.AmountOf(v)
	if !ok {
		return "", false
	}
	if q.Nanos().IsInt64() && q.Nanos().Int64()%milliNanos.Int64() == 0 {
		return "", false
	}
	milli, rem := new(big.Int).QuoRem(q.Nanos(), milliNanos, new(big.Int))
	if rem.Sign() == 0 {
		return "", false
	}
	milli.Add(milli, big.NewInt(int64(rem.Sign())))
	text := milli.String() + "m"
	if strings.ContainsAny(q.String(), "eE") {
		text = milli.String() + "e-3"
	}
	c, err := schema.CanonicalQuantity(text)
	if err != nil {
		return "", false
	}
	return c, true
}

package builtin

import (
	"path"
	"slices"
	"time"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// Volume phases and the defaults of a new volume.
const (
	volumePending = "Pending"
	// defaultVolumeReclaimPolicy keeps a released volume's data: an
	// administrator created the volume by hand.
	defaultVolumeReclaimPolicy = "Retain"
	reclaimRecycle             = "Recycle"
)

// volumeReclaimPolicies are the reclaim policies a volume takes, sorted.
var volumeReclaimPolicies = sortedCopy("Delete", reclaimRecycle, "Retain")

// persistentVolumeSources are the sources a volume may name, in the order
// upstream checks them.
var persistentVolumeSources = []string{
	"hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd", "quobyte",
	"cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume", "photonPersistentDisk",
	"portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi",
}

// mountOptionSources are the sources that accept the beta mount options
// annotation.
var mountOptionSources = []string{
	"gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "nfs", "rbd", "quobyte", "iscsi", "cinder",
	"cephfs", "azureFile", "vsphereVolume", "azureDisk", "photonPersistentDisk", "flocker", "scaleIO", "fc",
	"portworxVolume",
}

// volumeRules holds what the volume rules take from the brand.
type volumeRules struct {
	// pods checks the sources a volume shares with pod volumes.
	pods podRules
	// finalizer keeps a volume bound to a claim; mountOptions is the beta
	// annotation some sources accept.
	finalizer, mountOptions string
}

func newVolumeRules(b config.Brand) volumeRules {
	return volumeRules{
		pods:         newPodRules(b),
		finalizer:    volumeFinalizer(b),
		mountOptions: "volume.beta." + b.Label("mount-options"),
	}
}

func volumeFinalizer(b config.Brand) string { _, v := ProtectionFinalizers(b); return v }

func persistentVolumes(b config.Brand) *registry.Descriptor {
	d := core("persistentvolumes", "persistentvolume", "PersistentVolume", false, "pv")
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	r := newVolumeRules(b)
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: keepSpec, Validate: noStatusRules, RequireResourceVersion: true}}
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		if strOf(spec["persistentVolumeReclaimPolicy"]) == "" {
			spec["persistentVolumeReclaimPolicy"] = defaultVolumeReclaimPolicy
		}
		if !present(spec, "volumeMode") {
			spec["volumeMode"] = defaultVolumeMode
		}
		roundResourceList(mapOf(spec["capacity"]))
		if st := child(obj, "status"); strOf(st["phase"]) == "" {
			st["phase"] = volumePending
		}
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		// A new volume is pending from now on.
		obj["status"] = map[string]any{"phase": volumePending, "lastPhaseTransitionTime": nowTimestamp()}
		delete(child(obj, "spec"), "volumeAttributesClassName")
	}
	d.Strategy.AdmissionSteps = append(d.Strategy.AdmissionSteps,
		registry.AdmissionStep{Plugin: config.PluginStorageObjectInUseProtection, Admit: protectOnCreate(r.finalizer)})
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub == "status" {
			st, oldSt := child(obj, "status"), mapOf(old["status"])
			switch phase := strOf(st["phase"]); {
			case phase == strOf(oldSt["phase"]) && !present(st, "lastPhaseTransitionTime"):
				copyKey(st, oldSt, "lastPhaseTransitionTime")
			case phase != strOf(oldSt["phase"]) && (!present(st, "lastPhaseTransitionTime") || st["lastPhaseTransitionTime"] == oldSt["lastPhaseTransitionTime"]):
				st["lastPhaseTransitionTime"] = nowTimestamp()
			}
			return
		}
		if !present(mapOf(old["spec"]), "volumeAttributesClassName") {
			delete(child(obj, "spec"), "volumeAttributesClassName")
		}
	}
	d.Strategy.Validate = r.validate
	// Upstream checks the new volume twice on update; the message lists
	// each problem once.
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(r.validate(obj), r.validateUpdate(obj, old)...)
	}
	return d
}

// noStatusRules is the validation of a status write whose only rules are
// the metadata ones.
func noStatusRules(_, _ registry.Object) apierr.FieldErrors { return nil }

// nowTimestamp is the current time as objects hold it.
func nowTimestamp() string { return time.Now().UTC().Format(time.RFC3339) }

// validate applies upstream's volume rules.
func (r volumeRules) validate(obj registry.Object) apierr.FieldErrors {
	spec := mapOf(obj["spec"])
	p := pathOf("spec")
	var errs apierr.FieldErrors
	modes := listOf(spec["accessModes"])
	if len(modes) == 0 {
		errs = append(errs, apierr.Required(p.child("accessModes").String(), ""))
	}
	errs = append(errs, validateAccessModes(modes, p.child("accessModes"))...)
	capacity := mapOf(spec["capacity"])
	cp := p.child("capacity")
	if len(capacity) == 0 {
		errs = append(errs, apierr.Required(cp.String(), ""))
	}
	if !has(capacity, resourceStorage) || len(capacity) > 1 {
		errs = append(errs, notSupported(cp, resourceListSyntax(capacity), resourceStorage))
	}
	for _, k := range sortedKeys(capacity) {
		errs = append(errs, nonNegativeAmount(capacity[k], cp.key(k))...)
		if q, ok := schema.AmountOf(capacity[k]); ok && q.Sign() <= 0 {
			errs = append(errs, apierr.Invalid(cp.key(k).String(), q.String(), msgNotPositive))
		}
	}
	if rp := strOf(spec["persistentVolumeReclaimPolicy"]); rp != "" && !slices.Contains(volumeReclaimPolicies, rp) {
		errs = append(errs, notSupported(p.child("persistentVolumeReclaimPolicy"), rp, volumeReclaimPolicies...))
	}
	hasAffinity := false
	if na := mapOf(spec["nodeAffinity"]); present(spec, "nodeAffinity") {
		hasAffinity = true
		if req := mapOf(na["required"]); req != nil {
			errs = append(errs, validateNodeSelector(req, p.child("nodeAffinity", "required"))...)
		} else {
			errs = append(errs, apierr.Required(p.child("nodeAffinity", "required").String(), "must specify required node constraints"))
		}
	}
	n := 0
	for _, s := range persistentVolumeSources {
		if !present(spec, s) {
			continue
		}
		// A flex volume is counted but never refused as a second source.
		if n > 0 && s != "flexVolume" {
			name := s
			if alt, ok := forbiddenSourceNames[s]; ok {
				name = alt
			}
			errs = append(errs, apierr.Forbidden(p.child(name).String(), "may not specify more than 1 volume type"))
			continue
		}
		n++
		errs = append(errs, r.validateSource(s, mapOf(spec[s]), p, strOf(mapOf(obj["metadata"])["name"]))...)
		if s == "local" && !hasAffinity {
			errs = append(errs, apierr.Required(p.child("nodeAffinity").String(), "Local volume requires node affinity"))
		}
	}
	if n == 0 {
		errs = append(errs, apierr.Required(p.String(), "must specify a volume type"))
	}
	if hp := mapOf(spec["hostPath"]); hp != nil && path.Clean(strOf(hp["path"])) == "/" && strOf(spec["persistentVolumeReclaimPolicy"]) == reclaimRecycle {
		errs = append(errs, apierr.Forbidden(p.child("persistentVolumeReclaimPolicy").String(), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if sc := strOf(spec["storageClassName"]); sc != "" {
		errs = append(errs, dnsSubdomain(sc, p.child("storageClassName"))...)
	}
	if present(spec, "volumeMode") {
		if vm := strOf(spec["volumeMode"]); !slices.Contains(volumeModes, vm) {
			errs = append(errs, notSupported(p.child("volumeMode"), vm, volumeModes...))
		}
	}
	// The mount options annotation belongs to sources that mount.
	if _, ok := mapOf(mapOf(obj["metadata"])["annotations"])[r.mountOptions]; ok && !slices.ContainsFunc(mountOptionSources, func(s string) bool { return present(spec, s) }) {
		errs = append(errs, apierr.Forbidden("metadata.annotations."+r.mountOptions, "may not specify mount options for this volume type"))
	}
	return errs
}

// validateAccessModes checks the access modes of a volume or claim: known
// ones, and ReadWriteOncePod alone.
func validateAccessModes(modes []any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	rwop, other := false, false
	for _, m := range modes {
		mode := strOf(m)
		if !slices.Contains(accessModes, mode) {
			errs = append(errs, notSupported(p, mode, accessModes...))
		} else if mode == accessModeRWOP {
			rwop = true
		} else {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, apierr.Forbidden(p.String(), "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// resourceListSyntax prints a resource list the way upstream's message
// shows its Go value, for an empty list exactly.
func resourceListSyntax(m map[string]any) any {
	if m == nil {
		return goSyntax("core.ResourceList(nil)")
	}
	if len(m) == 0 {
		return goSyntax("core.ResourceList{}")
	}
	return m
}

// validateSource checks one volume source: the pod volume rules where the
// persistent form is the same, and the persistent forms' extra members
// (secret namespaces, endpoints namespace, CSI secrets, local paths).
func (r volumeRules) validateSource(kind string, m map[string]any, p fieldPath, pvName string) apierr.FieldErrors {
	sp := p.child(kind)
	switch kind {
	case "local":
		lp := strOf(m["path"])
		if lp == "" {
			return apierr.FieldErrors{apierr.Required(sp.child("path").String(), "")}
		}
		return noBacksteps(lp, sp.child("path"))
	case "csi":
		errs := validateCSIDriverName(strOf(m["driver"]), sp.child("driver"))
		errs = append(errs, required(m, "volumeHandle", sp)...)
		for _, ref := range []string{"controllerPublishSecretRef", "controllerExpandSecretRef", "nodePublishSecretRef", "nodeExpandSecretRef"} {
			if present(m, ref) {
				errs = append(errs, validateSecretReference(mapOf(m[ref]), sp.child(ref))...)
			}
		}
		return errs
	}
	// A check of its own per call: a specCheck gathers state.
	errs := (&specCheck{r: r.pods}).validateOneSource(kind, m, p, "")
	switch kind {
	case "glusterfs":
		if present(m, "endpointsNamespace") {
			if ns := strOf(m["endpointsNamespace"]); ns == "" {
				errs = append(errs, apierr.Invalid(sp.child("endpointsNamespace").String(), ns, "if the endpointnamespace is set, it must be a valid namespace name"))
			} else {
				errs = append(errs, dnsLabel(ns, sp.child("endpointsNamespace"))...)
			}
		}
	case "cinder", "storageos":
		if ref := mapOf(m["secretRef"]); present(m, "secretRef") && strOf(ref["namespace"]) == "" {
			errs = append(errs, apierr.Required(sp.child("secretRef", "namespace").String(), ""))
		}
	case "azureFile":
		if present(m, "secretNamespace") && strOf(m["secretNamespace"]) == "" {
			errs = append(errs, apierr.Required(sp.child("secretNamespace").String(), ""))
		}
	case "iscsi":
		if present(m, "initiatorName") && len(pvName+":"+strOf(m["targetPortal"])) > maxISCSIInitiatorPortal {
			// Upstream spells this member in lower case here.
			errs = append(errs, apierr.Invalid(sp.child("targetportal").String(), strOf(m["targetPortal"]),
				"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
		}
	}
	return errs
}

// validateSecretReference checks a secret a volume names by namespace
// and name.
func validateSecretReference(ref map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if name := strOf(ref["name"]); name == "" {
		errs = append(errs, apierr.Required(p.child("name").String(), ""))
	} else {
		errs = append(errs, dnsSubdomain(name, p.child("name"))...)
	}
	if ns := strOf(ref["namespace"]); ns == "" {
		errs = append(errs, apierr.Required(p.child("namespace").String(), ""))
	} else {
		errs = append(errs, dnsLabel(ns, p.child("namespace"))...)
	}
	return errs
}

// validateUpdate refuses changes of the source, the volume mode and a set
// node affinity; a CSI source may gain its expansion secret.
func (r volumeRules) validateUpdate(obj, old registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	cur, prev := map[string]any{}, map[string]any{}
	for _, s := range persistentVolumeSources {
		copyKey(cur, spec, s)
		copyKey(prev, oldSpec, s)
	}
	if csi := mapOf(cur["csi"]); csi != nil && present(csi, "controllerExpandSecretRef") &&
		present(prev, "csi") && !present(mapOf(prev["csi"]), "controllerExpandSecretRef") {
		c := map[string]any{}
		for k, v := range csi {
			c[k] = v
		}
		delete(c, "controllerExpandSecretRef")
		cur["csi"] = c
	}
	if !semanticEqual(cur, prev) {
		errs = append(errs, apierr.Forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation\n"+structDiff("core.PersistentVolumeSource", prev, cur)))
	}
	if vm := strOf(spec["volumeMode"]); vm != strOf(oldSpec["volumeMode"]) {
		errs = append(errs, apierr.Invalid("volumeMode", vm, fieldImmutable))
	}
	if present(oldSpec, "nodeAffinity") && !semanticEqual(spec["nodeAffinity"], oldSpec["nodeAffinity"]) {
		errs = append(errs, apierr.Invalid("nodeAffinity", spec["nodeAffinity"], fieldImmutable))
	}
	if !sameOptionalString(spec, oldSpec, "volumeAttributesClassName") {
		errs = append(errs, apierr.Forbidden("spec.volumeAttributesClassName", "update is forbidden when the VolumeAttributesClass feature gate is disabled"))
		if present(oldSpec, "volumeAttributesClassName") && !present(spec, "volumeAttributesClassName") {
			errs = append(errs, apierr.Forbidden("spec.volumeAttributesClassName", "update from non-nil value to nil is forbidden"))
		}
	}
	return errs
}

package builtin

import (
	"slices"

	"platd/config"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
	"platd/server/schema"
)

// Claim phases.
const (
	claimPending = "Pending"
	claimBound   = "Bound"
)

// Kinds a claim's data source may name without an API group or with the
// snapshot group.
const (
	kindClaim          = "PersistentVolumeClaim"
	kindVolumeSnapshot = "VolumeSnapshot"
	resourceStorage    = "storage"
	accessModeRWOP     = "ReadWriteOncePod"
)

// Access modes and volume modes, sorted as upstream lists its sets.
var (
	accessModes = sortedCopy("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", accessModeRWOP)
	volumeModes = sortedCopy("Block", defaultVolumeMode)
	// resizeStatuses are the values of status.allocatedResourceStatuses.
	resizeStatuses = sortedCopy("ControllerResizeInProgress", "ControllerResizeInfeasible",
		"NodeResizePending", "NodeResizeInProgress", "NodeResizeInfeasible")
)

const msgClaimSpecImmutable = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"

// defaultClaimSpec applies the defaults of a claim spec, wherever one is
// written (claims, ephemeral volume templates, stateful set templates):
// the volume mode, and resource amounts rounded as every resource list.
func defaultClaimSpec(spec map[string]any) {
	if !present(spec, "volumeMode") {
		spec["volumeMode"] = defaultVolumeMode
	}
	res := mapOf(spec["resources"])
	roundResourceList(mapOf(res["limits"]))
	roundResourceList(mapOf(res["requests"]))
}

// claimRules holds the brand-bearing names the claim rules use.
type claimRules struct {
	res resourceNames
	// finalizer keeps a claim in use by a pod; snapshotGroup is the group
	// of VolumeSnapshot data sources; classAnnotation the beta storage
	// class annotation.
	finalizer, snapshotGroup, classAnnotation string
}

func newClaimRules(b config.Brand) claimRules {
	return claimRules{
		res:             newResourceNames(b),
		finalizer:       claimFinalizer(b),
		snapshotGroup:   b.Group("snapshot.storage"),
		classAnnotation: "volume.beta." + b.Label("storage-class"),
	}
}

// defaultStorageClass gives a new claim naming no class, by field or beta
// annotation, the StorageClass annotated as the default (by the current
// or the beta annotation).
func defaultStorageClass(b config.Brand, classes *registry.Descriptor) defaultClass {
	return defaultClass{
		classes: classes,
		isDefault: annotatedTrue("storageclass."+b.LongDomain+"/is-default-class",
			"storageclass.beta."+b.LongDomain+"/is-default-class"),
		named: classNamed("storageClassName", newClaimRules(b).classAnnotation),
		field: "storageClassName",
	}
}

// ProtectionFinalizers are the finalizers a claim and a volume get on
// create, which keep them while in use.
func ProtectionFinalizers(b config.Brand) (claim, volume string) {
	return claimFinalizer(b), b.Label("pv-protection")
}

func claimFinalizer(b config.Brand) string { return b.Label("pvc-protection") }

func persistentVolumeClaims(b config.Brand) *registry.Descriptor {
	d := core("persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, "pvc")
	d.Quota = quota.Claims(b)
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	r := newClaimRules(b)
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: keepSpec, Validate: r.validateStatusUpdate, RequireResourceVersion: true}}
	d.Strategy.Default = func(obj registry.Object) {
		defaultClaimSpec(child(obj, "spec"))
		if st := child(obj, "status"); strOf(st["phase"]) == "" {
			st["phase"] = claimPending
		}
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		spec := child(obj, "spec")
		dropDisabledClaimFields(spec, nil)
		r.enforceDataSourceCompat(spec, nil)
		normalizeDataSources(spec)
	}
	d.Strategy.AdmissionSteps = append(d.Strategy.AdmissionSteps,
		registry.AdmissionStep{Plugin: config.PluginStorageObjectInUseProtection, Admit: protectOnCreate(r.finalizer)})
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub == "status" {
			dropDisabledClaimStatus(child(obj, "status"), mapOf(old["status"]))
			return
		}
		spec, oldSpec := child(obj, "spec"), mapOf(old["spec"])
		dropDisabledClaimFields(spec, oldSpec)
		r.enforceDataSourceCompat(spec, oldSpec)
		normalizeDataSources(spec)
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateClaimSpec(mapOf(obj["spec"]), nil, pathOf("spec"))
	}
	d.Strategy.ValidateUpdate = r.validateUpdate
	return d
}

// addFinalizer adds f to metadata.finalizers unless it is there.
func addFinalizer(obj registry.Object, f string) {
	md := child(obj, "metadata")
	fins := listOf(md["finalizers"])
	for _, x := range fins {
		if strOf(x) == f {
			return
		}
	}
	md["finalizers"] = append(fins, f)
}

// dropDisabledClaimFields removes what features that are off by default
// would carry (volume attributes classes, cross-namespace data sources),
// unless the stored claim already uses it.
func dropDisabledClaimFields(spec, old map[string]any) {
	if !present(old, "volumeAttributesClassName") {
		delete(spec, "volumeAttributesClassName")
	}
	if ref := mapOf(spec["dataSourceRef"]); ref != nil && strOf(ref["namespace"]) != "" && !present(old, "dataSourceRef") {
		delete(ref, "namespace")
	}
}

// dropDisabledClaimStatus removes the status fields of the volume
// attributes class feature, off by default, unless the claim has them.
func dropDisabledClaimStatus(st, old map[string]any) {
	for _, f := range []string{"currentVolumeAttributesClassName", "modifyVolumeStatus"} {
		if !present(old, f) {
			delete(st, f)
		}
	}
}

// enforceDataSourceCompat drops a data source that names neither a claim
// nor a volume snapshot, as clients of the time before dataSourceRef
// expect, unless the claim already had one or dataSourceRef is set.
func (r claimRules) enforceDataSourceCompat(spec, old map[string]any) {
	if present(old, "dataSource") || present(spec, "dataSourceRef") {
		return
	}
	ds := mapOf(spec["dataSource"])
	if ds == nil {
		return
	}
	group, kind := strOf(ds["apiGroup"]), strOf(ds["kind"])
	if (group == "" && kind == kindClaim) || (group == r.snapshotGroup && kind == kindVolumeSnapshot) {
		return
	}
	delete(spec, "dataSource")
}

// normalizeDataSources fills dataSourceRef from dataSource or the other
// way round when only one is set (a namespaced dataSourceRef has no
// dataSource equivalent).
func normalizeDataSources(spec map[string]any) {
	ds, ref := mapOf(spec["dataSource"]), mapOf(spec["dataSourceRef"])
	copyRef := func(from map[string]any) map[string]any {
		to := map[string]any{"kind": from["kind"], "name": from["name"]}
		if g, ok := from["apiGroup"]; ok && g != nil {
			to["apiGroup"] = g
		}
		return to
	}
	switch {
	case ds != nil && ref == nil:
		spec["dataSourceRef"] = copyRef(ds)
	case ref != nil && ds == nil && strOf(ref["namespace"]) == "":
		spec["dataSource"] = copyRef(ref)
	}
}

// validateClaimSpec applies upstream's claim spec rules to a spec at p
// (a claim's "spec", a claim template's "...volumeClaimTemplate.spec").
// old is the stored spec of an update, nil on create: values it already
// held stay allowed.
func validateClaimSpec(spec, old map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	modes := listOf(spec["accessModes"])
	if len(modes) == 0 {
		errs = append(errs, apierr.Required(p.child("accessModes").String(), "at least 1 access mode is required"))
	}
	if sel := mapOf(spec["selector"]); sel != nil {
		allowBad := old != nil && selectorHasBadValue(mapOf(old["selector"]))
		errs = append(errs, validateLabelSelector(sel, allowBad, p.child("selector").String())...)
	}
	errs = append(errs, validateAccessModes(modes, p.child("accessModes"))...)
	// Upstream keys the storage request under resources, not requests.
	sp := p.child("resources").key(resourceStorage)
	requests := mapOf(mapOf(spec["resources"])["requests"])
	if !has(requests, resourceStorage) {
		errs = append(errs, apierr.Required(sp.String(), ""))
	} else if q, ok := schema.AmountOf(requests[resourceStorage]); ok && q.Sign() <= 0 {
		errs = append(errs, apierr.Invalid(sp.String(), q.String(), msgNotPositive))
	}
	if sc := strOf(spec["storageClassName"]); sc != "" {
		errs = append(errs, dnsSubdomain(sc, p.child("storageClassName"))...)
	}
	if present(spec, "volumeMode") {
		if vm := strOf(spec["volumeMode"]); !slices.Contains(volumeModes, vm) {
			errs = append(errs, notSupported(p.child("volumeMode"), vm, volumeModes...))
		}
	}
	allowGroup := old != nil && (present(mapOf(old["dataSource"]), "apiGroup") || present(mapOf(old["dataSourceRef"]), "apiGroup"))
	ds, ref := mapOf(spec["dataSource"]), mapOf(spec["dataSourceRef"])
	if ds != nil {
		errs = append(errs, validateDataSource(ds, p.child("dataSource"), allowGroup)...)
	}
	if ref != nil {
		errs = append(errs, validateDataSource(ref, p.child("dataSourceRef"), allowGroup)...)
		if ns := strOf(ref["namespace"]); ns != "" {
			errs = append(errs, dnsLabel(ns, p.child("dataSourceRef", "namespace"))...)
		}
	}
	// Upstream reports these with the path of the field as the bad value.
	if ref != nil && strOf(ref["namespace"]) != "" {
		if ds != nil {
			errs = append(errs, apierr.Invalid(p.String(), goSyntax(p.child("dataSource").String()), "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if ds != nil && ref != nil && !sameDataSource(ds, ref) {
		errs = append(errs, apierr.Invalid(p.String(), goSyntax(p.child("dataSource").String()), "must match dataSourceRef"))
	}
	if vac := strOf(spec["volumeAttributesClassName"]); vac != "" && present(old, "volumeAttributesClassName") {
		errs = append(errs, dnsSubdomain(vac, p.child("volumeAttributesClassName"))...)
	}
	return errs
}

// validateDataSource checks a dataSource or dataSourceRef.
func validateDataSource(ds map[string]any, p fieldPath, allowGroup bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if strOf(ds["name"]) == "" {
		errs = append(errs, apierr.Required(p.child("name").String(), ""))
	}
	kind := strOf(ds["kind"])
	if kind == "" {
		errs = append(errs, apierr.Required(p.child("kind").String(), ""))
	}
	group := strOf(ds["apiGroup"])
	if group == "" && kind != kindClaim {
		errs = append(errs, apierr.Invalid(p.String(), kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if group != "" && !allowGroup {
		errs = append(errs, dnsSubdomain(group, p.child("apiGroup"))...)
	}
	return errs
}

func sameDataSource(ds, ref map[string]any) bool {
	return present(ds, "apiGroup") == present(ref, "apiGroup") && strOf(ds["apiGroup"]) == strOf(ref["apiGroup"]) &&
		strOf(ds["kind"]) == strOf(ref["kind"]) && strOf(ds["name"]) == strOf(ref["name"])
}

// validateUpdate applies the claim rules to the new state, then refuses
// spec changes beyond binding a volume name once, moving from the beta
// storage class annotation to the field, and growing the storage request
// of a bound claim.
func (r claimRules) validateUpdate(obj, old registry.Object) apierr.FieldErrors {
	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	errs := validateClaimSpec(spec, oldSpec, pathOf("spec"))
	cur, prev := canonicalClaimSpec(spec), canonicalClaimSpec(oldSpec)
	if strOf(prev["volumeName"]) == "" {
		copyKey(prev, cur, "volumeName")
	}
	newAnn, oldAnn := mapOf(mapOf(obj["metadata"])["annotations"]), mapOf(mapOf(old["metadata"])["annotations"])
	oldClass, oldHas := oldAnn[r.classAnnotation]
	newClass, newHas := newAnn[r.classAnnotation]
	switch {
	case oldHas && !present(oldSpec, "storageClassName") && present(spec, "storageClassName") &&
		strOf(spec["storageClassName"]) == strOf(oldClass) && (!newHas || strOf(newClass) == strOf(oldClass)):
		// The class moves from the annotation to the field.
		delete(cur, "storageClassName")
	default:
		if strOf(newClass) != strOf(oldClass) {
			errs = append(errs, apierr.Invalid("metadata.annotations."+r.classAnnotation, strOf(newClass), fieldImmutable))
		}
		// A claim without a class may get one, matching its annotation.
		if present(spec, "storageClassName") && !present(oldSpec, "storageClassName") &&
			(!oldHas || strOf(spec["storageClassName"]) == strOf(oldClass)) {
			copyKey(cur, prev, "storageClassName")
		}
	}
	bound := str(obj, "status", "phase") == claimBound
	if req := mapOf(mapOf(cur["resources"])["requests"]); bound && req != nil {
		if v, ok := mapOf(mapOf(prev["resources"])["requests"])[resourceStorage]; ok {
			req[resourceStorage] = v
		} else {
			delete(req, resourceStorage)
		}
	}
	if bound && present(cur, "volumeAttributesClassName") {
		copyKey(cur, prev, "volumeAttributesClassName")
	}
	if !semanticEqual(cur, prev) {
		errs = append(errs, apierr.Forbidden("spec", msgClaimSpecImmutable+"\n"+structDiff("core.PersistentVolumeClaimSpec", prev, cur)))
	}
	newSize := storageRequest(spec)
	if newSize.Cmp(storageRequest(oldSpec)) < 0 {
		// Shrinking is allowed down to just above the capacity, to recover
		// from a failed expansion.
		// No capacity is zero.
		capacity, _ := schema.AmountOf(mapOf(mapOf(old["status"])["capacity"])[resourceStorage])
		if newSize.Cmp(capacity) <= 0 {
			errs = append(errs, apierr.Forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
		}
	}
	if vm := strOf(spec["volumeMode"]); vm != strOf(oldSpec["volumeMode"]) {
		errs = append(errs, apierr.Invalid("volumeMode", vm, fieldImmutable))
	}
	if !sameOptionalString(spec, oldSpec, "volumeAttributesClassName") {
		errs = append(errs, apierr.Forbidden("spec.volumeAttributesClassName", "update is forbidden when the VolumeAttributesClass feature gate is disabled"))
		if present(oldSpec, "volumeAttributesClassName") {
			if !present(spec, "volumeAttributesClassName") {
				errs = append(errs, apierr.Forbidden("spec.volumeAttributesClassName", "update from non-nil value to nil is forbidden"))
			} else if strOf(spec["volumeAttributesClassName"]) == "" {
				errs = append(errs, apierr.Forbidden("spec.volumeAttributesClassName", "update from non-nil value to an empty string is forbidden"))
			}
		}
	}
	return errs
}

// sameOptionalString compares a pointer field: set or not, and its value.
func sameOptionalString(a, b map[string]any, key string) bool {
	return present(a, key) == present(b, key) && strOf(a[key]) == strOf(b[key])
}

// storageRequest is a spec's storage request, zero when absent.
func storageRequest(spec map[string]any) schema.Amount {
	q, _ := schema.AmountOf(mapOf(mapOf(spec["resources"])["requests"])[resourceStorage])
	return q
}

// canonicalClaimSpec copies a claim spec with its resource amounts in
// canonical form, so that two spellings of one amount compare equal.
func canonicalClaimSpec(spec map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range spec {
		out[k] = v
	}
	res := map[string]any{}
	for k, v := range mapOf(spec["resources"]) {
		l := mapOf(v)
		if l == nil {
			res[k] = v
			continue
		}
		cl := map[string]any{}
		for name, amount := range l {
			if q, ok := schema.AmountOf(amount); ok {
				cl[name] = q.String()
			} else {
				cl[name] = amount
			}
		}
		res[k] = cl
	}
	if spec["resources"] != nil {
		out["resources"] = res
	}
	return out
}

// validateStatusUpdate checks a write of a claim's status: access modes
// still set, and valid amounts and keys in capacity and the allocation
// fields.
func (r claimRules) validateStatusUpdate(obj, _ registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if len(listAt(obj, "spec", "accessModes")) == 0 {
		// Upstream spells the path with a capital S.
		errs = append(errs, apierr.Required("Spec.accessModes", ""))
	}
	st := mapOf(obj["status"])
	capacity := mapOf(st["capacity"])
	for _, k := range sortedKeys(capacity) {
		errs = append(errs, nonNegativeAmount(capacity[k], pathOf("status.capacity").key(k))...)
	}
	// Upstream names the statuses' path in the singular and reports the
	// key as the unsupported value.
	sp := pathOf("status.allocatedResourceStatus")
	statuses := mapOf(st["allocatedResourceStatuses"])
	for _, k := range sortedKeys(statuses) {
		errs = append(errs, r.claimResourceKey(k, sp)...)
		if !slices.Contains(resizeStatuses, strOf(statuses[k])) {
			errs = append(errs, notSupported(sp, k, resizeStatuses...))
		}
	}
	ap := pathOf("status.allocatedResources")
	alloc := mapOf(st["allocatedResources"])
	for _, k := range sortedKeys(alloc) {
		if e := r.claimResourceKey(k, ap); len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		errs = append(errs, nonNegativeAmount(alloc[k], ap.key(k))...)
	}
	return errs
}

// claimResourceKey checks a resource name of a claim's status: qualified,
// and "storage" when native.
func (r claimRules) claimResourceKey(k string, p fieldPath) apierr.FieldErrors {
	if errs := qualifiedName(k, p); len(errs) > 0 {
		return errs
	}
	if r.res.isNative(k) && k != resourceStorage {
		return apierr.FieldErrors{notSupported(p, k, resourceStorage)}
	}
	return nil
}

// nonNegativeAmount refuses a negative quantity.
func nonNegativeAmount(v any, p fieldPath) apierr.FieldErrors {
	if q, ok := schema.AmountOf(v); ok && q.Sign() < 0 {
		return apierr.FieldErrors{apierr.Invalid(p.String(), q.String(), msgNegative)}
	}
	return nil
}

// copyKey sets dst[key] to src[key], or removes it when src has none.
func copyKey(dst, src map[string]any, key string) {
	if v, ok := src[key]; ok {
		dst[key] = v
	} else {
		delete(dst, key)
	}
}

package builtin

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

func storageV1(b config.Brand) []*registry.Descriptor {
	g := b.Group("storage")
	return []*registry.Descriptor{
		csiDrivers(g), csiNodes(g), csiStorageCapacities(g), storageClasses(g), volumeAttachments(g),
	}
}

// Limits of storage objects, as upstream: provisioner parameters and
// attachment metadata travel to drivers in gRPC calls of bounded size.
const (
	provisionerParametersMax     = 512
	provisionerParametersSizeMax = 256 * (1 << 10)
	attachmentMetadataSizeMax    = 256 * (1 << 10)
	volumeErrorMessageMax        = 1024
	// csiNodeIDMax is the longer node ID limit upstream accepts since
	// drivers began to encode more into it.
	csiNodeIDMax = 256
	// tokenExpirationMin and tokenExpirationMax bound a CSI driver's
	// token requests: ten minutes to 2^32 seconds.
	tokenExpirationMin = 10 * 60
	tokenExpirationMax = 1 << 32
)

// Reclaim policies and binding modes a StorageClass takes, sorted, and the
// defaults.
var (
	reclaimPolicies    = []string{"Delete", "Retain"}
	volumeBindingModes = []string{"Immediate", "WaitForFirstConsumer"}
)

const (
	defaultReclaimPolicy     = "Delete"
	defaultVolumeBindingMode = "Immediate"
)

func storageClasses(group string) *registry.Descriptor {
	d := groupType(group, "storageclasses", "storageclass", "StorageClass", false, "sc")
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	d.Strategy.Default = func(obj registry.Object) {
		if !present(obj, "reclaimPolicy") {
			obj["reclaimPolicy"] = defaultReclaimPolicy
		}
		if !present(obj, "volumeBindingMode") {
			obj["volumeBindingMode"] = defaultVolumeBindingMode
		}
	}
	d.Strategy.Validate = validateStorageClass
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := validateStorageClass(obj)
		if !sameStringMap(obj["parameters"], old["parameters"]) {
			errs = append(errs, apierr.Forbidden("parameters", "updates to parameters are forbidden."))
		}
		if str(obj, "provisioner") != str(old, "provisioner") {
			errs = append(errs, apierr.Forbidden("provisioner", "updates to provisioner are forbidden."))
		}
		if str(obj, "reclaimPolicy") != str(old, "reclaimPolicy") {
			errs = append(errs, apierr.Forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
		}
		if m := str(obj, "volumeBindingMode"); m != str(old, "volumeBindingMode") {
			errs = append(errs, apierr.Invalid("volumeBindingMode", m, fieldImmutable))
		}
		return errs
	}
	return d
}

// sameStringMap compares two decoded maps as upstream compares Go maps:
// a missing map and an empty one differ.
func sameStringMap(a, b any) bool { return reflect.DeepEqual(a, b) }

func validateStorageClass(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	provisioner := str(obj, "provisioner")
	if provisioner == "" {
		errs = append(errs, apierr.Required("provisioner", ""))
	} else {
		lower := strings.ToLower(provisioner)
		for _, msg := range validation.IsQualifiedName(lower) {
			errs = append(errs, apierr.Invalid("provisioner", lower, msg))
		}
	}
	errs = append(errs, validateProvisionerParameters(mapAt(obj, "parameters"))...)
	if p := str(obj, "reclaimPolicy"); p != "" && !slices.Contains(reclaimPolicies, p) {
		errs = append(errs, apierr.NotSupported("reclaimPolicy", p, reclaimPolicies))
	}
	if !present(obj, "volumeBindingMode") {
		errs = append(errs, apierr.Required("volumeBindingMode", ""))
	} else if m := str(obj, "volumeBindingMode"); !slices.Contains(volumeBindingModes, m) {
		errs = append(errs, apierr.NotSupported("volumeBindingMode", m, volumeBindingModes))
	}
	return append(errs, validateAllowedTopologies(listAt(obj, "allowedTopologies"))...)
}

func validateProvisionerParameters(params map[string]any) apierr.FieldErrors {
	if len(params) > provisionerParametersMax {
		// Upstream words the count limit in bytes.
		return apierr.FieldErrors{apierr.TooLong("parameters", provisionerParametersMax)}
	}
	var errs apierr.FieldErrors
	total := 0
	for _, k := range sortedKeys(params) {
		if k == "" {
			errs = append(errs, apierr.Invalid("parameters", k, "field can not be empty."))
		}
		v, _ := params[k].(string)
		total += len(k) + len(v)
	}
	if total > provisionerParametersSizeMax {
		errs = append(errs, apierr.TooLong("parameters", provisionerParametersSizeMax))
	}
	return errs
}

// validateAllowedTopologies checks each term's label requirements and
// refuses a term equal to an earlier one. As upstream, a term without
// requirements counts as a duplicate of the empty terms the comparison
// list starts with, once for each term of the list.
func validateAllowedTopologies(terms []any) apierr.FieldErrors {
	if len(terms) == 0 {
		return nil
	}
	var errs apierr.FieldErrors
	seen := make([]map[string][]string, len(terms))
	for i, x := range terms {
		term, _ := x.(map[string]any)
		path := index("allowedTopologies", i)
		exprs := map[string][]string{}
		for j, y := range listAt(term, "matchLabelExpressions") {
			req, _ := y.(map[string]any)
			p := index(path+".matchLabelExpressions", j)
			values := listAt(req, "values")
			if len(values) == 0 {
				errs = append(errs, apierr.Required(p+".values", ""))
			}
			var set []string
			for k, v := range values {
				s, _ := v.(string)
				if slices.Contains(set, s) {
					errs = append(errs, apierr.Duplicate(index(p+".values", k), s))
					continue
				}
				set = append(set, s)
			}
			slices.Sort(set)
			key := str(req, "key")
			errs = append(errs, validateLabelName(key, p+".key")...)
			if _, dup := exprs[key]; dup {
				errs = append(errs, apierr.Duplicate(p+".key", key))
			}
			exprs[key] = set
		}
		for _, prev := range seen {
			if sameTopology(exprs, prev) {
				errs = append(errs, apierr.Duplicate(path+".matchLabelExpressions", ""))
			}
		}
		seen = append(seen, exprs)
	}
	return errs
}

// sameTopology compares two terms' key→values sets, empty and missing
// sets being equal.
func sameTopology(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || len(va) != len(vb) || !slices.Equal(va, vb) {
			return false
		}
	}
	return true
}

// CSI driver settings and their defaults.
const (
	fsGroupPolicyDefault      = "ReadWriteOnceWithFSType"
	volumeLifecyclePersistent = "Persistent"
	volumeLifecycleEphemeral  = "Ephemeral"
)

// fsGroupPolicies are the accepted policies, sorted.
var fsGroupPolicies = []string{"File", "None", fsGroupPolicyDefault}

// csiDrivers: the generation counts spec changes, which kubelets act on.
func csiDrivers(group string) *registry.Descriptor {
	d := groupType(group, "csidrivers", "csidriver", "CSIDriver", false)
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	d.UpdateRequiresResourceVersion = true
	d.Strategy.Default = defaultCSIDriver
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateCSIDriverSpec(mapAt(obj, "spec"))
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		spec, oldSpec := mapAt(obj, "spec"), mapAt(old, "spec")
		errs := validateCSIDriverSpec(spec)
		// Upstream spells the attachRequired path this way.
		if !reflect.DeepEqual(spec["attachRequired"], oldSpec["attachRequired"]) {
			errs = append(errs, apierr.Invalid("spec.attachedRequired", spec["attachRequired"], fieldImmutable))
		}
		if !sameMember(nil, spec, oldSpec, "volumeLifecycleModes") {
			errs = append(errs, apierr.Invalid("spec.volumeLifecycleModes", goStrings("storage.VolumeLifecycleMode", listAt(spec, "volumeLifecycleModes")), fieldImmutable))
		}
		return errs
	}
	return d
}

// defaultCSIDriver fills what a driver does not say: it needs attaching,
// gets no pod info, publishes no capacity, is not republished, does not
// mount with SELinux contexts, serves persistent volumes and applies
// fsGroup for read-write-once volumes with a file system type.
func defaultCSIDriver(obj registry.Object) {
	spec := child(obj, "spec")
	for f, v := range map[string]any{
		"attachRequired":    true,
		"podInfoOnMount":    false,
		"storageCapacity":   false,
		"fsGroupPolicy":     fsGroupPolicyDefault,
		"requiresRepublish": false,
		"seLinuxMount":      false,
	} {
		if !present(spec, f) {
			spec[f] = v
		}
	}
	if len(listAt(spec, "volumeLifecycleModes")) == 0 {
		spec["volumeLifecycleModes"] = []any{volumeLifecyclePersistent}
	}
}

func validateCSIDriverSpec(spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, f := range []struct{ member, path string }{
		{"attachRequired", "spec.attachedRequired"},
		{"podInfoOnMount", "spec.podInfoOnMount"},
		{"storageCapacity", "spec.storageCapacity"},
	} {
		if !present(spec, f.member) {
			errs = append(errs, apierr.Required(f.path, ""))
		}
	}
	if present(spec, "fsGroupPolicy") {
		if p := str(spec, "fsGroupPolicy"); !slices.Contains(fsGroupPolicies, p) {
			errs = append(errs, apierr.NotSupported("spec.fsGroupPolicy", p, fsGroupPolicies))
		}
	}
	audiences := map[string]bool{}
	for i, x := range listAt(spec, "tokenRequests") {
		req, _ := x.(map[string]any)
		path := index("spec.tokenRequests", i)
		aud := str(req, "audience")
		if audiences[aud] {
			errs = append(errs, apierr.Duplicate(path+".audience", aud))
			continue
		}
		audiences[aud] = true
		secs, ok := intOf(req["expirationSeconds"])
		if !ok {
			continue
		}
		if secs < tokenExpirationMin {
			errs = append(errs, apierr.Invalid(path+".expirationSeconds", secs, "may not specify a duration less than 10 minutes"))
		}
		if secs > tokenExpirationMax {
			errs = append(errs, apierr.Invalid(path+".expirationSeconds", secs, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	for _, x := range listAt(spec, "volumeLifecycleModes") {
		if m, _ := x.(string); m != volumeLifecyclePersistent && m != volumeLifecycleEphemeral {
			errs = append(errs, apierr.NotSupported("spec.volumeLifecycleModes", m, []string{volumeLifecyclePersistent, volumeLifecycleEphemeral}))
		}
	}
	if !present(spec, "seLinuxMount") {
		errs = append(errs, apierr.Required("spec.seLinuxMount", ""))
	}
	return errs
}

// csiNodes: a driver entry, once registered, does not change.
func csiNodes(group string) *registry.Descriptor {
	d := groupType(group, "csinodes", "csinode", "CSINode", false)
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	d.Strategy.Validate = validateCSINode
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := validateCSINode(obj)
		for _, o := range listAt(old, "spec", "drivers") {
			od, _ := o.(map[string]any)
			for _, n := range listAt(obj, "spec", "drivers") {
				nd, _ := n.(map[string]any)
				if str(nd, "name") != str(od, "name") {
					continue
				}
				if !sameCSINodeDriver(d, nd, od) {
					errs = append(errs, apierr.Invalid("spec.drivers", csiNodeDriverValue(nd), fieldImmutable))
				}
			}
		}
		return errs
	}
	return d
}

// sameCSINodeDriver compares two driver entries in their canonical form.
func sameCSINodeDriver(d *registry.Descriptor, a, b map[string]any) bool {
	wrap := func(m map[string]any) registry.Object {
		return registry.Object{"spec": map[string]any{"drivers": []any{m}}}
	}
	return sameMember(d.Schema, wrap(a), wrap(b), "spec")
}

// csiNodeDriverValue spells a driver entry as upstream's bad value.
func csiNodeDriverValue(drv map[string]any) goSyntax {
	keys := "[]string(nil)"
	if l := listAt(drv, "topologyKeys"); l != nil {
		keys = string(goStrings("string", l))
	}
	alloc := "(*storage.VolumeNodeResources)(nil)"
	if a := mapAt(drv, "allocatable"); a != nil {
		count := "(*int32)(nil)"
		if n, ok := intOf(a["count"]); ok {
			count = fmt.Sprintf("&%d", n)
		}
		alloc = "&storage.VolumeNodeResources{Count:" + count + "}"
	}
	return goSyntax(fmt.Sprintf("storage.CSINodeDriver{Name:%q, NodeID:%q, TopologyKeys:%s, Allocatable:%s}",
		str(drv, "name"), str(drv, "nodeID"), keys, alloc))
}

func validateCSINode(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	names := map[string]bool{}
	for i, x := range listAt(obj, "spec", "drivers") {
		drv, _ := x.(map[string]any)
		path := index("spec.drivers", i)
		name := str(drv, "name")
		errs = append(errs, validateCSIDriverName(name, pathOf(path+".name"))...)
		nodeID := str(drv, "nodeID")
		if nodeID == "" {
			errs = append(errs, apierr.Required(path+".nodeID", ""))
		}
		if len(nodeID) > csiNodeIDMax {
			errs = append(errs, apierr.Invalid(path+".nodeID", nodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMax)))
		}
		if n, ok := intOf(valueAt(drv, "allocatable", "count")); ok && n < 0 {
			errs = append(errs, apierr.Invalid(path+".allocatable.count", n, negativeMsg))
		}
		if names[name] {
			errs = append(errs, apierr.Duplicate(path+".name", name))
		}
		names[name] = true
		keys := map[string]bool{}
		for _, k := range listAt(drv, "topologyKeys") {
			key, _ := k.(string)
			if key == "" {
				errs = append(errs, apierr.Required(path, ""))
			}
			if keys[key] {
				errs = append(errs, apierr.Duplicate(path, key))
			}
			keys[key] = true
			for _, msg := range validation.IsQualifiedName(key) {
				errs = append(errs, apierr.Invalid(path, key, msg))
			}
		}
	}
	return errs
}

// csiStorageCapacities: what a capacity was computed for (topology and
// class) never changes; only the amounts do.
func csiStorageCapacities(group string) *registry.Descriptor {
	d := groupType(group, "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", true)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateCSIStorageCapacity(obj, false)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := validateCSIStorageCapacity(obj, selectorHasBadValue(mapAt(old, "nodeTopology")))
		if !sameMember(d.Schema, obj, old, "nodeTopology") {
			errs = append(errs, apierr.Invalid("nodeTopology", labelSelectorValue(mapAt(obj, "nodeTopology")), fieldImmutable))
		}
		if c := str(obj, "storageClassName"); c != str(old, "storageClassName") {
			errs = append(errs, apierr.Invalid("storageClassName", c, fieldImmutable))
		}
		return errs
	}
	return d
}

func validateCSIStorageCapacity(obj registry.Object, allowBadSelectorValues bool) apierr.FieldErrors {
	errs := validateLabelSelector(mapAt(obj, "nodeTopology"), allowBadSelectorValues, "nodeTopology")
	class := str(obj, "storageClassName")
	for _, msg := range validation.IsDNS1123Subdomain(class) {
		errs = append(errs, apierr.Invalid("storageClassName", class, msg))
	}
	if present(obj, "capacity") {
		if q, ok := schema.AmountOf(obj["capacity"]); ok && q.Sign() < 0 {
			errs = append(errs, apierr.Invalid("capacity", q.String(), negativeMsg))
		}
	}
	return errs
}

// volumeAttachments: the spec is fixed at creation; the attacher reports
// through the status subresource.
func volumeAttachments(group string) *registry.Descriptor {
	d := groupType(group, "volumeattachments", "volumeattachment", "VolumeAttachment", false)
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs}}
	d.Strategy.PrepareForCreate = resetStatus
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		errs := validateVolumeAttachment(obj)
		// v1 objects are held to the stricter name rules.
		spec := mapAt(obj, "spec")
		errs = append(errs, validateCSIDriverName(str(spec, "attacher"), pathOf("spec.attacher"))...)
		if present(mapAt(spec, "source"), "persistentVolumeName") {
			pv := str(spec, "source", "persistentVolumeName")
			for _, msg := range validation.IsDNS1123Subdomain(pv) {
				errs = append(errs, apierr.Invalid("spec.source.persistentVolumeName", pv, msg))
			}
		}
		return errs
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		// As upstream, the object rules run twice: once on their own and
		// once as part of the update rules.
		errs := validateVolumeAttachment(obj)
		errs = append(errs, validateVolumeAttachment(obj)...)
		if !sameMember(d.Schema, obj, old, "spec") {
			errs = append(errs, apierr.Invalid("spec", volumeAttachmentSpecValue(mapAt(obj, "spec")), fieldImmutable))
		}
		return errs
	}
	return d
}

func validateVolumeAttachment(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec := mapAt(obj, "spec")
	if str(spec, "attacher") == "" {
		errs = append(errs, apierr.Required("spec.attacher", ""))
	}
	source := mapAt(spec, "source")
	hasPV, hasInline := present(source, "persistentVolumeName"), present(source, "inlineVolumeSpec")
	const exactlyOne = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
	switch {
	case !hasPV && !hasInline:
		errs = append(errs, apierr.Required("spec.source", exactlyOne))
	case hasPV && hasInline:
		errs = append(errs, apierr.Forbidden("spec.source", exactlyOne))
	case hasPV && str(source, "persistentVolumeName") == "":
		errs = append(errs, apierr.Required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"))
	}
	node := str(spec, "nodeName")
	for _, msg := range validation.IsDNS1123Subdomain(node) {
		errs = append(errs, apierr.Invalid("spec.nodeName", node, msg))
	}
	status := mapAt(obj, "status")
	size := 0
	for k, v := range mapAt(status, "attachmentMetadata") {
		s, _ := v.(string)
		size += len(k) + len(s)
	}
	if size > attachmentMetadataSizeMax {
		errs = append(errs, apierr.TooLong("status.attachmentMetadata", attachmentMetadataSizeMax))
	}
	for _, f := range []string{"attachError", "detachError"} {
		if len(str(status, f, "message")) > volumeErrorMessageMax {
			// Upstream states the metadata limit here, not the message's.
			errs = append(errs, apierr.TooLong("status."+f+".message", attachmentMetadataSizeMax))
		}
	}
	return errs
}

// volumeAttachmentSpecValue spells a spec as upstream's bad value, with
// pointers shown by value.
func volumeAttachmentSpecValue(spec map[string]any) goSyntax {
	source := mapAt(spec, "source")
	pv := "(*string)(nil)"
	if present(source, "persistentVolumeName") {
		pv = fmt.Sprintf("&%q", str(source, "persistentVolumeName"))
	}
	inline := "(*core.PersistentVolumeSpec)(nil)"
	if present(source, "inlineVolumeSpec") {
		inline = "&core.PersistentVolumeSpec{...}"
	}
	return goSyntax(fmt.Sprintf("storage.VolumeAttachmentSpec{Attacher:%q, Source:storage.VolumeAttachmentSource{PersistentVolumeName:%s, InlineVolumeSpec:%s}, NodeName:%q}",
		str(spec, "attacher"), pv, inline, str(spec, "nodeName")))
}

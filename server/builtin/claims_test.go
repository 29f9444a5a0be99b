package builtin

import (
	"reflect"
	"strings"
	"testing"

	"platd/server/registry"
)

func claim(spec map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": "c", "namespace": "ns"}, "spec": spec}
}

func claimSpec(storage any, modes ...any) map[string]any {
	spec := map[string]any{"accessModes": modes}
	if storage != nil {
		spec["resources"] = map[string]any{"requests": map[string]any{"storage": storage}}
	}
	return spec
}

func TestDefaultClaimSpec(t *testing.T) {
	t.Parallel()
	spec := map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1.0001m"}}}
	defaultClaimSpec(spec)
	want := map[string]any{"volumeMode": "Filesystem", "resources": map[string]any{"requests": map[string]any{"storage": "2m"}}}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("got %v, want %v", spec, want)
	}
	block := map[string]any{"volumeMode": "Block"}
	defaultClaimSpec(block)
	if block["volumeMode"] != "Block" {
		t.Errorf("volumeMode overwritten: %v", block)
	}
}

func TestClaimCreate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PersistentVolumeClaim")
	got := mustCreate(t, d, claim(claimSpec("1Gi", "ReadWriteOnce")))
	if str(got, "spec", "volumeMode") != "Filesystem" || str(got, "status", "phase") != "Pending" {
		t.Errorf("defaults: %v", got)
	}
	if f := listAt(got, "metadata", "finalizers"); !reflect.DeepEqual(f, []any{brand.Label("pvc-protection")}) {
		t.Errorf("finalizers: %v", f)
	}
	// A data source fills dataSourceRef; an unknown kind without a group
	// is dropped, as before dataSourceRef existed.
	spec := claimSpec("1Gi", "ReadWriteOnce")
	spec["dataSource"] = map[string]any{"kind": "PersistentVolumeClaim", "name": "src"}
	got = mustCreate(t, d, claim(spec))
	if ref := mapAt(got, "spec", "dataSourceRef"); !reflect.DeepEqual(ref, map[string]any{"kind": "PersistentVolumeClaim", "name": "src"}) {
		t.Errorf("dataSourceRef: %v", ref)
	}
	spec["dataSource"] = map[string]any{"kind": "Thing", "name": "src"}
	got = mustCreate(t, d, claim(spec))
	if has(mapAt(got, "spec"), "dataSource") || has(mapAt(got, "spec"), "dataSourceRef") {
		t.Errorf("unknown data source kept: %v", got["spec"])
	}
	spec = claimSpec("1Gi", "ReadWriteOnce")
	spec["volumeAttributesClassName"] = "gold"
	got = mustCreate(t, d, claim(spec))
	if has(mapAt(got, "spec"), "volumeAttributesClassName") {
		t.Errorf("volumeAttributesClassName kept while its feature is off")
	}

	withRef := func(ref map[string]any) registry.Object {
		s := claimSpec("1Gi", "ReadWriteOnce")
		s["dataSourceRef"] = ref
		return claim(s)
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"nothing", claim(map[string]any{}), []string{
			"spec.accessModes: Required value: at least 1 access mode is required",
			"spec.resources[storage]: Required value",
		}},
		{"modes", claim(claimSpec("1Gi", "ReadWriteOncePod", "ReadWriteOnce", "Sometimes")), []string{
			`spec.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
			"spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
		}},
		{"zero storage", claim(claimSpec("0", "ReadWriteOnce")), []string{
			`spec.resources[storage]: Invalid value: "0": must be greater than zero`,
		}},
		{"negative storage", claim(claimSpec("-1Gi", "ReadWriteOnce")), []string{
			`spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero`,
		}},
		{"class and mode", claim(map[string]any{"accessModes": []any{"ReadOnlyMany"}, "storageClassName": "Fast",
			"volumeMode": "Raw", "resources": map[string]any{"requests": map[string]any{"storage": "1"}}}), []string{
			`spec.storageClassName: Invalid value: "Fast": ` + subdomainMsg,
			`spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"`,
		}},
		{"data source ref", withRef(map[string]any{"kind": "Snap", "apiGroup": "", "name": ""}), []string{
			"spec.dataSource.name: Required value",
			`spec.dataSource: Invalid value: "Snap": must be 'PersistentVolumeClaim' when referencing the default apiGroup`,
			"spec.dataSourceRef.name: Required value",
			`spec.dataSourceRef: Invalid value: "Snap": must be 'PersistentVolumeClaim' when referencing the default apiGroup`,
		}},
		{"bad group", withRef(map[string]any{"kind": "Snap", "apiGroup": "Snap_Group", "name": "x"}), []string{
			`spec.dataSource.apiGroup: Invalid value: "Snap_Group": ` + subdomainMsg,
			`spec.dataSourceRef.apiGroup: Invalid value: "Snap_Group": ` + subdomainMsg,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
	mismatch := claimSpec("1Gi", "ReadWriteOnce")
	mismatch["dataSource"] = map[string]any{"kind": "PersistentVolumeClaim", "name": "a"}
	mismatch["dataSourceRef"] = map[string]any{"kind": "PersistentVolumeClaim", "name": "b"}
	_, errs := create(d, claim(mismatch))
	checkErrs(t, "mismatch", errs, []string{`spec: Invalid value: spec.dataSource: must match dataSourceRef`})
}

func TestClaimUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PersistentVolumeClaim")
	stored := mustCreate(t, d, claim(claimSpec("1Gi", "ReadWriteOnce")))
	with := func(f func(spec map[string]any)) registry.Object {
		o := copyObj(stored)
		f(mapAt(o, "spec"))
		return o
	}
	// The volume name may be set once.
	bound, errs := update(d, with(func(s map[string]any) { s["volumeName"] = "pv1" }), stored, "")
	checkErrs(t, "volume name", errs, nil)
	_, errs = update(d, with(func(s map[string]any) { s["volumeName"] = "pv2" }), bound, "")
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "spec: Forbidden: "+msgClaimSpecImmutable+"\n  core.PersistentVolumeClaimSpec{\n") ||
		!strings.Contains(errs[0].Error(), `- 	volumeName: "pv1",`) {
		t.Errorf("renaming the volume: %v", errs)
	}
	// An unbound claim cannot grow; a bound one can, and shrink only
	// down to above its capacity.
	grow := func(s map[string]any) { mapAt(s, "resources", "requests")["storage"] = "2Gi" }
	_, errs = update(d, with(grow), stored, "")
	if len(errs) != 1 || errs[0].Field != "spec" {
		t.Errorf("growing an unbound claim: %v", errs)
	}
	boundStatus := copyObj(bound)
	boundStatus["status"] = map[string]any{"phase": "Bound", "capacity": map[string]any{"storage": "1Gi"}}
	boundStatus, errs = update(d, boundStatus, bound, "status")
	checkErrs(t, "status", errs, nil)
	if str(boundStatus, "spec", "volumeName") != "pv1" {
		t.Fatalf("status write changed spec: %v", boundStatus["spec"])
	}
	grown := copyObj(boundStatus)
	grow(mapAt(grown, "spec"))
	grown, errs = update(d, grown, boundStatus, "")
	checkErrs(t, "growing a bound claim", errs, nil)
	shrunk := copyObj(grown)
	mapAt(shrunk, "spec", "resources", "requests")["storage"] = "1Gi"
	_, errs = update(d, shrunk, grown, "")
	checkErrs(t, "shrinking to capacity", errs, []string{"spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"})
	mapAt(shrunk, "spec", "resources", "requests")["storage"] = "1536Mi"
	_, errs = update(d, shrunk, grown, "")
	checkErrs(t, "shrinking above capacity", errs, nil)
	// Equal amounts in other spellings are no change.
	same := copyObj(grown)
	mapAt(same, "spec", "resources", "requests")["storage"] = "2048Mi"
	_, errs = update(d, same, grown, "")
	checkErrs(t, "same amount", errs, nil)

	block := with(func(s map[string]any) { s["volumeMode"] = "Block" })
	_, errs = update(d, block, stored, "")
	if len(errs) != 2 || errs[1].Error() != `volumeMode: Invalid value: "Block": field is immutable` {
		t.Errorf("volume mode: %v", errs)
	}

	// The beta class annotation may move into the field, and is itself
	// immutable.
	ann := brandClassAnnotation()
	annotated := copyObj(stored)
	child(mapAt(annotated, "metadata"), "annotations")[ann] = "fast"
	moved := copyObj(annotated)
	mapAt(moved, "spec")["storageClassName"] = "fast"
	_, errs = update(d, moved, annotated, "")
	checkErrs(t, "class from annotation", errs, nil)
	mapAt(moved, "metadata", "annotations")[ann] = "slow"
	mapAt(moved, "spec")["storageClassName"] = "slow"
	_, errs = update(d, moved, annotated, "")
	checkErrs(t, "class annotation changed", errs, []string{
		`metadata.annotations.` + ann + `: Invalid value: "slow": field is immutable`,
		"spec: Forbidden: " + msgClaimSpecImmutable + "\n  core.PersistentVolumeClaimSpec{\n+ \tstorageClassName: \"slow\",\n  }\n",
	})
	classed := with(func(s map[string]any) { s["storageClassName"] = "any" })
	_, errs = update(d, classed, stored, "")
	checkErrs(t, "class from nothing", errs, nil)
}

func brandClassAnnotation() string { return "volume.beta." + brand.Label("storage-class") }

func TestClaimStatusUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PersistentVolumeClaim")
	stored := mustCreate(t, d, claim(claimSpec("1Gi", "ReadWriteOnce")))
	next := copyObj(stored)
	next["status"] = map[string]any{
		"phase":                     "Bound",
		"capacity":                  map[string]any{"storage": "-1"},
		"allocatedResources":        map[string]any{"cpu": "1", "storage": "-2", "example.com/x": "1"},
		"allocatedResourceStatuses": map[string]any{"storage": "Resizing"},
		"modifyVolumeStatus":        map[string]any{"status": "Pending"},
	}
	got, errs := update(d, next, stored, "status")
	checkErrs(t, "status", errs, []string{
		`status.capacity[storage]: Invalid value: "-1": must be greater than or equal to 0`,
		`status.allocatedResourceStatus: Unsupported value: "storage": supported values: "ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress", "NodeResizeInfeasible", "NodeResizePending"`,
		`status.allocatedResources: Unsupported value: "cpu": supported values: "storage"`,
		`status.allocatedResources[storage]: Invalid value: "-2": must be greater than or equal to 0`,
	})
	if has(mapAt(got, "status"), "modifyVolumeStatus") {
		t.Errorf("modifyVolumeStatus kept while its feature is off")
	}
}

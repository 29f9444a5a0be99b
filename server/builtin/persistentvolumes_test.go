package builtin

import (
	"reflect"
	"strings"
	"testing"

	"platd/server/registry"
)

func volume(spec map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": "v"}, "spec": spec}
}

func hostPathVolume(members map[string]any) registry.Object {
	spec := map[string]any{
		"accessModes": []any{"ReadWriteOnce"},
		"capacity":    map[string]any{"storage": "1Gi"},
		"hostPath":    map[string]any{"path": "/data"},
	}
	for k, v := range members {
		if v == nil {
			delete(spec, k)
		} else {
			spec[k] = v
		}
	}
	return volume(spec)
}

func TestVolumeCreate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PersistentVolume")
	got := mustCreate(t, d, hostPathVolume(map[string]any{"volumeAttributesClassName": "gold"}))
	spec := mapAt(got, "spec")
	if spec["persistentVolumeReclaimPolicy"] != "Retain" || spec["volumeMode"] != "Filesystem" || has(spec, "volumeAttributesClassName") {
		t.Errorf("spec defaults: %v", spec)
	}
	if str(got, "status", "phase") != "Pending" || str(got, "status", "lastPhaseTransitionTime") == "" {
		t.Errorf("status: %v", got["status"])
	}
	if f := listAt(got, "metadata", "finalizers"); !reflect.DeepEqual(f, []any{brand.Label("pv-protection")}) {
		t.Errorf("finalizers: %v", f)
	}

	mountOptions := hostPathVolume(nil)
	mountOptions["metadata"] = map[string]any{"name": "v", "annotations": map[string]any{"volume.beta." + brand.Label("mount-options"): "ro"}}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"nothing", volume(map[string]any{}), []string{
			"spec.accessModes: Required value",
			"spec.capacity: Required value",
			`spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"`,
			"spec: Required value: must specify a volume type",
		}},
		{"capacity", hostPathVolume(map[string]any{"capacity": map[string]any{"storage": "0"}}), []string{
			`spec.capacity[storage]: Invalid value: "0": must be greater than zero`,
		}},
		{"negative capacity", hostPathVolume(map[string]any{"capacity": map[string]any{"storage": "-1"}}), []string{
			`spec.capacity[storage]: Invalid value: "-1": must be greater than or equal to 0`,
			`spec.capacity[storage]: Invalid value: "-1": must be greater than zero`,
		}},
		{"two sources", hostPathVolume(map[string]any{"nfs": map[string]any{"server": "s", "path": "/x"}, "cephfs": map[string]any{"monitors": []any{"m"}}}), []string{
			"spec.nfs: Forbidden: may not specify more than 1 volume type",
			"spec.cephFS: Forbidden: may not specify more than 1 volume type",
		}},
		{"recycle root", hostPathVolume(map[string]any{"hostPath": map[string]any{"path": "/"}, "persistentVolumeReclaimPolicy": "Recycle"}), []string{
			"spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
		}},
		{"enums", hostPathVolume(map[string]any{"persistentVolumeReclaimPolicy": "Keep", "volumeMode": "Raw", "accessModes": []any{"Once"}}), []string{
			`spec.accessModes: Unsupported value: "Once": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
			`spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"`,
			`spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"`,
		}},
		{"local without affinity", hostPathVolume(map[string]any{"hostPath": nil, "local": map[string]any{"path": "/a/../b"}}), []string{
			`spec.local.path: Invalid value: "/a/../b": must not contain '..'`,
			"spec.nodeAffinity: Required value: Local volume requires node affinity",
		}},
		{"affinity", hostPathVolume(map[string]any{"nodeAffinity": map[string]any{}}), []string{
			"spec.nodeAffinity.required: Required value: must specify required node constraints",
		}},
		{"csi", hostPathVolume(map[string]any{"hostPath": nil, "csi": map[string]any{"driver": "d.example.com", "nodePublishSecretRef": map[string]any{"name": "s"}}}), []string{
			"spec.csi.volumeHandle: Required value",
			"spec.csi.nodePublishSecretRef.namespace: Required value",
		}},
		{"secret namespaces", hostPathVolume(map[string]any{"hostPath": nil, "cinder": map[string]any{"volumeID": "x", "secretRef": map[string]any{"name": "s"}}}), []string{
			"spec.cinder.secretRef.namespace: Required value",
		}},
		{"mount options", mountOptions, []string{
			"metadata.annotations.volume.beta." + brand.Label("mount-options") + ": Forbidden: may not specify mount options for this volume type",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestVolumeUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PersistentVolume")
	stored := mustCreate(t, d, hostPathVolume(nil))
	next := copyObj(stored)
	mapAt(next, "spec")["claimRef"] = map[string]any{"name": "c", "namespace": "ns"}
	mapAt(next, "spec")["persistentVolumeReclaimPolicy"] = "Delete"
	_, errs := update(d, next, stored, "")
	checkErrs(t, "mutable fields", errs, nil)

	next = copyObj(stored)
	mapAt(next, "spec", "hostPath")["path"] = "/other"
	mapAt(next, "spec")["volumeMode"] = "Block"
	_, errs = update(d, next, stored, "")
	if len(errs) != 2 || !strings.HasPrefix(errs[0].Error(), "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n  core.PersistentVolumeSource{\n") ||
		errs[1].Error() != `volumeMode: Invalid value: "Block": field is immutable` {
		t.Errorf("immutable fields: %v", errs)
	}

	// A status write keeps the transition time while the phase stays and
	// stamps a new one when it changes.
	st := copyObj(stored)
	st["status"] = map[string]any{"phase": "Pending"}
	got, errs := update(d, st, stored, "status")
	checkErrs(t, "status", errs, nil)
	if str(got, "status", "lastPhaseTransitionTime") != str(stored, "status", "lastPhaseTransitionTime") {
		t.Errorf("transition time not kept: %v", got["status"])
	}
	st["status"] = map[string]any{"phase": "Available", "lastPhaseTransitionTime": "2000-01-01T00:00:00Z"}
	got, _ = update(d, st, stored, "status")
	if str(got, "status", "lastPhaseTransitionTime") != "2000-01-01T00:00:00Z" {
		t.Errorf("client transition time dropped: %v", got["status"])
	}
	st["status"] = map[string]any{"phase": "Available"}
	stored["status"] = map[string]any{"phase": "Pending", "lastPhaseTransitionTime": "2000-01-01T00:00:00Z"}
	got, _ = update(d, st, stored, "status")
	if ts := str(got, "status", "lastPhaseTransitionTime"); ts == "" || ts == "2000-01-01T00:00:00Z" {
		t.Errorf("phase change not stamped: %v", got["status"])
	}
}

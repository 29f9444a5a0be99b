package builtin

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"platd/server/registry"
)

func TestStorageClass(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "StorageClass")
	sc := func(members map[string]any) registry.Object { return named("s", members) }
	got := mustCreate(t, d, sc(map[string]any{"provisioner": "example.com/disk"}))
	if str(got, "reclaimPolicy") != "Delete" || str(got, "volumeBindingMode") != "Immediate" {
		t.Errorf("defaults: %v", got)
	}
	tooMany := map[string]any{}
	for i := range provisionerParametersMax + 1 {
		tooMany[fmt.Sprint(i)] = ""
	}
	topology := func(terms ...any) registry.Object {
		return sc(map[string]any{"provisioner": "p", "allowedTopologies": terms})
	}
	term := func(reqs ...any) map[string]any { return map[string]any{"matchLabelExpressions": reqs} }
	req := func(key string, values ...any) map[string]any { return map[string]any{"key": key, "values": values} }
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"retain", sc(map[string]any{"provisioner": "Example.com/Disk", "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}), nil},
		{"nothing", sc(nil), []string{"provisioner: Required value"}},
		{"enums", sc(map[string]any{"provisioner": "a/b/c", "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"}), []string{
			"provisioner: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
			`reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"`,
			`volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"`,
		}},
		{"parameters", sc(map[string]any{"provisioner": "p", "parameters": map[string]any{"": "x", "big": strings.Repeat("x", provisionerParametersSizeMax)}}), []string{
			`parameters: Invalid value: "": field can not be empty.`,
			"parameters: Too long: may not be more than 262144 bytes",
		}},
		{"too many parameters", sc(map[string]any{"provisioner": "p", "parameters": tooMany}), []string{
			"parameters: Too long: may not be more than 512 bytes",
		}},
		{"topology", topology(term(req("zone", "a", "b")), term(req("zone", "b", "a"))), []string{
			`allowedTopologies[1].matchLabelExpressions: Duplicate value: ""`,
		}},
		{"topology requirements", topology(term(req("zone"), req("zone", "a", "a"), req("a b", "x"))), []string{
			"allowedTopologies[0].matchLabelExpressions[0].values: Required value",
			`allowedTopologies[0].matchLabelExpressions[1].values[1]: Duplicate value: "a"`,
			`allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone"`,
			"allowedTopologies[0].matchLabelExpressions[2].key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		}},
		// As upstream, an empty term matches each empty entry the
		// comparison starts with.
		{"empty terms", topology(term(), term()), []string{
			`allowedTopologies[0].matchLabelExpressions: Duplicate value: ""`,
			`allowedTopologies[0].matchLabelExpressions: Duplicate value: ""`,
			`allowedTopologies[1].matchLabelExpressions: Duplicate value: ""`,
			`allowedTopologies[1].matchLabelExpressions: Duplicate value: ""`,
			`allowedTopologies[1].matchLabelExpressions: Duplicate value: ""`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}

	stored := mustCreate(t, d, sc(map[string]any{"provisioner": "p", "parameters": map[string]any{"a": "1"}}))
	_, errs := update(d, sc(map[string]any{"provisioner": "p", "parameters": map[string]any{"a": "1"}, "allowVolumeExpansion": true}), stored, "")
	checkErrs(t, "mutable field", errs, nil)
	_, errs = update(d, sc(map[string]any{"provisioner": "q", "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}), stored, "")
	checkErrs(t, "immutable fields", errs, []string{
		"parameters: Forbidden: updates to parameters are forbidden.",
		"provisioner: Forbidden: updates to provisioner are forbidden.",
		"reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
		`volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable`,
	})
}

func TestCSIDriver(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CSIDriver")
	drv := func(spec map[string]any) registry.Object { return named("d", map[string]any{"spec": spec}) }
	got := mustCreate(t, d, drv(map[string]any{}))
	want := map[string]any{
		"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false, "requiresRepublish": false,
		"seLinuxMount": false, "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": []any{"Persistent"},
	}
	if !reflect.DeepEqual(got["spec"], want) {
		t.Errorf("defaults:\n got  %v\n want %v", got["spec"], want)
	}
	if _, ok := mapAt(got, "metadata")["generation"]; ok {
		t.Errorf("a new driver has a generation: %v", got["metadata"])
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"set", map[string]any{"attachRequired": false, "fsGroupPolicy": "File", "volumeLifecycleModes": []any{"Ephemeral", "Persistent"}}, nil},
		{"values", map[string]any{"fsGroupPolicy": "Always", "volumeLifecycleModes": []any{"Forever"}, "tokenRequests": []any{
			map[string]any{"audience": "a", "expirationSeconds": int64(60)},
			map[string]any{"audience": "a"},
			map[string]any{"audience": "", "expirationSeconds": int64(1<<32 + 1)},
		}}, []string{
			`spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType"`,
			"spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
			`spec.tokenRequests[1].audience: Duplicate value: "a"`,
			"spec.tokenRequests[2].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
			`spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, drv(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}
	next, errs := update(d, drv(map[string]any{"podInfoOnMount": true, "requiresRepublish": true}), got, "")
	checkErrs(t, "mutable", errs, nil)
	if intAt(next, "metadata", "generation") != 1 {
		t.Errorf("spec change: generation %v", valueAt(next, "metadata", "generation"))
	}
	_, errs = update(d, drv(map[string]any{"attachRequired": false, "volumeLifecycleModes": []any{"Ephemeral"}}), got, "")
	checkErrs(t, "immutable", errs, []string{
		"spec.attachedRequired: Invalid value: false: field is immutable",
		`spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: field is immutable`,
	})
}

func TestCSINode(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CSINode")
	node := func(drivers ...any) registry.Object {
		return named("n", map[string]any{"spec": map[string]any{"drivers": drivers}})
	}
	driver := func(name, id string, keys ...any) map[string]any {
		return map[string]any{"name": name, "nodeID": id, "topologyKeys": keys}
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"valid", node(driver("Disk.Example.com", strings.Repeat("i", csiNodeIDMax), "zone")), nil},
		{"driver", node(
			driver("", ""),
			driver("d."+strings.Repeat("a", 62), "x"),
			map[string]any{"name": "e", "nodeID": strings.Repeat("i", csiNodeIDMax+1), "allocatable": map[string]any{"count": int64(-1)}},
			driver("e", "y", "", "k", "k", "a b"),
		), []string{
			"spec.drivers[0].name: Required value",
			`spec.drivers[0].name: Invalid value: "": ` + subdomainMsg,
			"spec.drivers[0].nodeID: Required value",
			"spec.drivers[1].name: Too long: may not be more than 63 bytes",
			`spec.drivers[2].nodeID: Invalid value: "` + strings.Repeat("i", csiNodeIDMax+1) + `": must be 256 characters or less`,
			"spec.drivers[2].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
			`spec.drivers[3].name: Duplicate value: "e"`,
			"spec.drivers[3]: Required value",
			"spec.drivers[3]: Invalid value: \"\": name part must be non-empty",
			"spec.drivers[3]: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
			`spec.drivers[3]: Duplicate value: "k"`,
			"spec.drivers[3]: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
	stored := mustCreate(t, d, node(driver("a.example.com", "n1", "zone")))
	_, errs := update(d, node(driver("a.example.com", "n1", "zone"), driver("b.example.com", "n1")), stored, "")
	checkErrs(t, "driver added", errs, nil)
	_, errs = update(d, node(driver("a.example.com", "n2", "zone")), stored, "")
	checkErrs(t, "driver changed", errs, []string{
		`spec.drivers: Invalid value: storage.CSINodeDriver{Name:"a.example.com", NodeID:"n2", TopologyKeys:[]string{"zone"}, Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable`,
	})
}

func TestCSIStorageCapacity(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CSIStorageCapacity")
	capacity := func(members map[string]any) registry.Object { return named("c", members) }
	bad := map[string]any{"matchExpressions": []any{map[string]any{"key": "zone", "operator": "In", "values": []any{"-a"}}}}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"valid", capacity(map[string]any{"storageClassName": "fast", "capacity": "1Gi", "maximumVolumeSize": "100Mi",
			"nodeTopology": map[string]any{"matchLabels": map[string]any{"zone": "a"}}}), nil},
		{"no class", capacity(nil), []string{`storageClassName: Invalid value: "": ` + subdomainMsg}},
		{"negative", capacity(map[string]any{"storageClassName": "fast", "capacity": "-1Gi", "nodeTopology": bad}), []string{
			`nodeTopology.matchExpressions[0].values[0]: Invalid value: "-a": ` + labelValueMsg,
			`capacity: Invalid value: "-1Gi": must be greater than or equal to 0`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
	stored := mustCreate(t, d, capacity(map[string]any{"storageClassName": "fast", "capacity": "1Gi"}))
	_, errs := update(d, capacity(map[string]any{"storageClassName": "fast", "capacity": "2Gi"}), stored, "")
	checkErrs(t, "capacity change", errs, nil)
	_, errs = update(d, capacity(map[string]any{"storageClassName": "slow", "nodeTopology": map[string]any{"matchLabels": map[string]any{"zone": "a"}}}), stored, "")
	checkErrs(t, "immutable", errs, []string{
		`nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"zone":"a"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable`,
		`storageClassName: Invalid value: "slow": field is immutable`,
	})
	legacy := copyObj(stored)
	legacy["nodeTopology"] = bad
	_, errs = update(d, capacity(map[string]any{"storageClassName": "fast", "nodeTopology": bad}), legacy, "")
	checkErrs(t, "legacy selector", errs, nil)
}

func TestVolumeAttachment(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "VolumeAttachment")
	va := func(spec map[string]any) registry.Object { return named("v", map[string]any{"spec": spec}) }
	spec := map[string]any{"attacher": "disk.example.com", "nodeName": "node-1", "source": map[string]any{"persistentVolumeName": "pv"}}
	obj := va(spec)
	obj["status"] = map[string]any{"attached": true}
	got := mustCreate(t, d, obj)
	if !reflect.DeepEqual(got["status"], map[string]any{"attached": false}) {
		t.Errorf("created status: %v", got["status"])
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"inline", map[string]any{"attacher": "a.b", "nodeName": "n", "source": map[string]any{"inlineVolumeSpec": map[string]any{}}}, nil},
		{"empty", map[string]any{}, []string{
			"spec.attacher: Required value",
			"spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
			`spec.nodeName: Invalid value: "": ` + subdomainMsg,
			"spec.attacher: Required value",
			`spec.attacher: Invalid value: "": ` + subdomainMsg,
		}},
		{"both sources", map[string]any{"attacher": "A_B", "nodeName": "n", "source": map[string]any{"inlineVolumeSpec": map[string]any{}, "persistentVolumeName": "PV"}}, []string{
			"spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
			`spec.attacher: Invalid value: "A_B": ` + subdomainMsg,
			`spec.source.persistentVolumeName: Invalid value: "PV": ` + subdomainMsg,
		}},
		{"empty volume name", map[string]any{"attacher": "a", "nodeName": "n", "source": map[string]any{"persistentVolumeName": ""}}, []string{
			"spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName",
			`spec.source.persistentVolumeName: Invalid value: "": ` + subdomainMsg,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, va(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}

	next, errs := update(d, registry.Object{"status": map[string]any{"attached": true, "attachmentMetadata": map[string]any{"dev": "/dev/xvdf"}}}, got, "status")
	checkErrs(t, "status", errs, nil)
	if valueAt(next, "status", "attached") != true || str(next, "spec", "nodeName") != "node-1" {
		t.Errorf("status write: %v", next)
	}
	_, errs = update(d, registry.Object{"status": map[string]any{
		"attachmentMetadata": map[string]any{"k": strings.Repeat("v", attachmentMetadataSizeMax)},
		"detachError":        map[string]any{"message": strings.Repeat("m", volumeErrorMessageMax+1)},
	}}, got, "status")
	tooBig := []string{
		"status.attachmentMetadata: Too long: may not be more than 262144 bytes",
		"status.detachError.message: Too long: may not be more than 262144 bytes",
	}
	checkErrs(t, "status limits", errs, append(tooBig, tooBig...))

	changed := copyObj(spec)
	changed["nodeName"] = "node-2"
	_, errs = update(d, va(changed), got, "")
	checkErrs(t, "spec changed", errs, []string{
		`spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:"disk.example.com", Source:storage.VolumeAttachmentSource{PersistentVolumeName:&"pv", InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:"node-2"}: field is immutable`,
	})
}

package printers

import "testing"

func TestStoragePrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	g := b.Group("storage")
	checkTable(t, p.For(g, "v1", "storageclasses"), []colSpec{
		nameSpec, str0("Provisioner"), str0("ReclaimPolicy"), str0("VolumeBindingMode"), str0("AllowVolumeExpansion"), ageSpec,
	}, []printerCase{
		{
			name:  "default class",
			obj:   `{"metadata":{"name":"standard","annotations":{"storageclass.` + b.LongDomain + `/is-default-class":"true"}},"provisioner":"csi.example.com","reclaimPolicy":"Retain","volumeBindingMode":"WaitForFirstConsumer","allowVolumeExpansion":true}`,
			cells: []any{"standard (default)", "csi.example.com", "Retain", "WaitForFirstConsumer", true, "<unknown>"},
		},
		{
			name:  "beta default annotation, defaults",
			obj:   `{"metadata":{"name":"old","annotations":{"storageclass.beta.` + b.LongDomain + `/is-default-class":"true"}},"provisioner":"p"}`,
			cells: []any{"old (default)", "p", "Delete", "Immediate", false, "<unknown>"},
		},
		{
			name:  "not default",
			obj:   `{` + meta("fast") + `,"provisioner":"p","metadata":{"name":"fast","annotations":{"storageclass.` + b.LongDomain + `/is-default-class":"false"}}}`,
			cells: []any{"fast", "p", "Delete", "Immediate", false, "<unknown>"},
		},
	})
	checkTable(t, p.For(g, "v1", "csidrivers"), []colSpec{
		nameSpec, bool0("AttachRequired"), bool0("PodInfoOnMount"), bool0("StorageCapacity"), str0("TokenRequests"), bool0("RequiresRepublish"), str0("Modes"), ageSpec,
	}, []printerCase{
		{
			name: "full",
			obj: `{` + meta("csi.example.com") + `,"spec":{"attachRequired":false,"podInfoOnMount":true,"storageCapacity":true,"requiresRepublish":true,
				"tokenRequests":[{"audience":"a"},{"audience":"b","expirationSeconds":3600}],"volumeLifecycleModes":["Persistent","Ephemeral"]}}`,
			cells: []any{"csi.example.com", false, true, true, "a,b", true, "Persistent,Ephemeral", "60m"},
		},
		{
			name:  "defaults",
			obj:   `{` + meta("d") + `,"spec":{}}`,
			cells: []any{"d", true, false, false, "<unset>", false, "<none>", "60m"},
		},
	})
	checkTable(t, p.For(g, "v1", "csinodes"), []colSpec{nameSpec, int0("Drivers"), ageSpec}, []printerCase{
		{name: "two drivers", obj: `{` + meta("n1") + `,"spec":{"drivers":[{"name":"a","nodeID":"1"},{"name":"b","nodeID":"1"}]}}`, cells: []any{"n1", int64(2), "60m"}},
	})
	checkTable(t, p.For(g, "v1", "csistoragecapacities"), []colSpec{nameSpec, str0("StorageClassName"), str0("Capacity")}, []printerCase{
		{name: "set", obj: `{"metadata":{"name":"csisc-1"},"storageClassName":"fast","capacity":"1073741824"}`, cells: []any{"csisc-1", "fast", "1073741824"}},
		{name: "canonical", obj: `{"metadata":{"name":"c"},"storageClassName":"fast","capacity":"2048Mi"}`, cells: []any{"c", "fast", "2Gi"}},
		{name: "unset", obj: `{"metadata":{"name":"c"},"storageClassName":"fast"}`, cells: []any{"c", "fast", "<unset>"}},
	})
	checkTable(t, p.For(g, "v1", "volumeattachments"), []colSpec{
		nameSpec, {"Attacher", "string", "name", 0}, str0("PV"), str0("Node"), bool0("Attached"), ageSpec,
	}, []printerCase{
		{
			name:  "attached",
			obj:   `{` + meta("va-1") + `,"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{"persistentVolumeName":"pv1"}},"status":{"attached":true}}`,
			cells: []any{"va-1", "csi.example.com", "pv1", "n1", true, "60m"},
		},
		{
			name:  "inline source",
			obj:   `{` + meta("va-2") + `,"spec":{"attacher":"a","nodeName":"n2","source":{"inlineVolumeSpec":{}}}}`,
			cells: []any{"va-2", "a", "", "n2", false, "60m"},
		},
	})
}

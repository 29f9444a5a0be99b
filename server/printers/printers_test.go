package printers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// served lists every built-in resource platd serves, and whether upstream
// gives it a printer of its own.
func served(b config.Brand) []struct {
	group, version, resource string
	printer                  bool
} {
	type r = struct {
		group, version, resource string
		printer                  bool
	}
	core := func(res string, printer bool) r { return r{"", "v1", res, printer} }
	out := []r{
		core("pods", true), core("podtemplates", true), core("replicationcontrollers", true), core("services", true),
		core("endpoints", true), core("nodes", true), core("events", true), core("namespaces", true), core("secrets", true),
		core("serviceaccounts", true), core("persistentvolumes", true), core("persistentvolumeclaims", true),
		core("componentstatuses", true), core("configmaps", true), core("resourcequotas", true), core("limitranges", false),
		{"apps", "v1", "deployments", true}, {"apps", "v1", "replicasets", true}, {"apps", "v1", "statefulsets", true},
		{"apps", "v1", "daemonsets", true}, {"apps", "v1", "controllerrevisions", true},
		{"batch", "v1", "jobs", true}, {"batch", "v1", "cronjobs", true},
		{"autoscaling", "v1", "horizontalpodautoscalers", true}, {"autoscaling", "v2", "horizontalpodautoscalers", true},
		{"policy", "v1", "poddisruptionbudgets", true},
		core("replicationcontrollers/scale", true), {"apps", "v1", "deployments/scale", true},
		{"apps", "v1", "replicasets/scale", true}, {"apps", "v1", "statefulsets/scale", true},
		{"apps", "v1", "daemonsets/scale", false},
	}
	for _, x := range []struct {
		prefix    string
		resources []string
		none      []string
	}{
		{"networking", []string{"ingresses", "ingressclasses", "networkpolicies"}, nil},
		{"discovery", []string{"endpointslices"}, nil},
		{"storage", []string{"storageclasses", "csidrivers", "csinodes", "csistoragecapacities", "volumeattachments"}, nil},
		{"scheduling", []string{"priorityclasses"}, nil},
		{"node", []string{"runtimeclasses"}, nil},
		{"coordination", []string{"leases"}, nil},
		{"events", []string{"events"}, nil},
		{"certificates", []string{"certificatesigningrequests"}, nil},
		{"rbac.authorization", []string{"rolebindings", "clusterrolebindings"}, []string{"roles", "clusterroles"}},
		{"admissionregistration", []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations",
			"validatingadmissionpolicies", "validatingadmissionpolicybindings"}, nil},
		{"flowcontrol.apiserver", []string{"flowschemas", "prioritylevelconfigurations"}, nil},
		{"apiregistration", []string{"apiservices"}, nil},
	} {
		for _, res := range x.resources {
			out = append(out, r{b.Group(x.prefix), "v1", res, true})
		}
		for _, res := range x.none {
			out = append(out, r{b.Group(x.prefix), "v1", res, false})
		}
	}
	return out
}

func TestForEveryServedResource(t *testing.T) {
	for _, name := range config.BrandNames() {
		b := testBrand(t, name)
		p := New(b)
		printers := 0
		for _, r := range served(b) {
			tbl := p.For(r.group, r.version, r.resource)
			if (tbl != nil) != r.printer {
				t.Errorf("%s: %s/%s %s: printer %v, want %v", name, r.group, r.version, r.resource, tbl != nil, r.printer)
				continue
			}
			if tbl == nil {
				continue
			}
			printers++
			// Every table has a name column and fills every column, even
			// for an empty object.
			hasName := false
			for _, c := range tbl.Columns {
				hasName = hasName || c.Format == "name" && c.Name == "Name"
			}
			if !hasName && !strings.HasSuffix(r.resource, "/scale") {
				t.Errorf("%s %s: no Name column", r.group, r.resource)
			}
			for _, obj := range []string{`{}`, `{"metadata":{"name":"x"},"spec":null,"status":null}`} {
				cells, _ := tbl.Row(decode(t, obj), time.Now())
				if len(cells) != len(tbl.Columns) {
					t.Errorf("%s %s: %d cells for %d columns", r.group, r.resource, len(cells), len(tbl.Columns))
				}
			}
		}
		if printers != len(p.tables) {
			t.Errorf("%s: %d printers, %d tested", name, len(p.tables), printers)
		}
	}
}

// Group names come from the brand: one brand's spelling finds nothing in
// the other.
func TestGroupsFollowBrand(t *testing.T) {
	plat, kube := testBrand(t, "plat"), testBrand(t, "kubernetes")
	p := New(plat)
	if p.For(kube.Group("networking"), "v1", "ingresses") != nil {
		t.Error("plat printers answer for the kubernetes group name")
	}
	if p.For(plat.Group("networking"), "v1", "ingresses") == nil {
		t.Error("plat printers miss their own group name")
	}
	if p.For("apps", "v1beta1", "deployments") != nil {
		t.Error("an unserved version has a printer")
	}
}

func TestScalePrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	checkTable(t, p.For("apps", "v1", "deployments/scale"), []colSpec{str0("Name"), int0("Desired"), int0("Available"), ageSpec}, []printerCase{
		{
			name:  "scale",
			obj:   `{"kind":"Scale","apiVersion":"autoscaling/v1",` + meta("web") + `,"spec":{"replicas":5},"status":{"replicas":3,"selector":"app=web"}}`,
			cells: []any{"web", int64(5), int64(3), "60m"},
		},
	})
}

func TestListOrder(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	if p.For("", "v1", "pods").Order != nil || p.For(b.Group("flowcontrol.apiserver"), "v1", "prioritylevelconfigurations").Order != nil {
		t.Error("a resource upstream lists in storage order has an order")
	}
	order := p.For(b.Group("flowcontrol.apiserver"), "v1", "flowschemas").Order
	if order == nil {
		t.Fatal("flow schemas have no order")
	}
	var objs []map[string]any
	for _, o := range []string{
		`{"metadata":{"name":"workload-low"},"spec":{"matchingPrecedence":9000}}`,
		`{"metadata":{"name":"exempt"},"spec":{"matchingPrecedence":1}}`,
		`{"metadata":{"name":"catch-all"},"spec":{"matchingPrecedence":10000}}`,
		`{"metadata":{"name":"b-system"},"spec":{"matchingPrecedence":500}}`,
		`{"metadata":{"name":"a-system"},"spec":{"matchingPrecedence":500}}`,
	} {
		objs = append(objs, decode(t, o))
	}
	slices.SortFunc(objs, order)
	var names []string
	for _, o := range objs {
		names = append(names, str(o, "metadata", "name"))
	}
	if want := []string{"exempt", "a-system", "b-system", "workload-low", "catch-all"}; !slices.Equal(names, want) {
		t.Errorf("order %v, want %v", names, want)
	}
}

package server_test

import (
	"slices"
	"sort"
	"testing"
)

// listNames returns the names of the objects at a collection path.
func listNames(t *testing.T, e *env, p string) []string {
	t.Helper()
	var names []string
	for _, o := range e.do("GET", p, nil).mustCode(t, 200).obj(t)["items"].([]any) {
		names = append(names, at(o, "metadata", "name").(string))
	}
	sort.Strings(names)
	return names
}

// TestSeeds checks the system objects every start writes: a local
// APIService per served group-version, the system priority classes and
// the bootstrap flow-control configuration; and that a later start
// follows --runtime-config and restores auto-updated specs.
func TestSeeds(t *testing.T) {
	t.Parallel()
	b := platBrand
	dir := t.TempDir()
	apiservices := groupPath(b.Group("apiregistration"), "v1", "", "apiservices")
	flowschemas := groupPath(b.Group("flowcontrol.apiserver"), "v1", "", "flowschemas")
	levels := groupPath(b.Group("flowcontrol.apiserver"), "v1", "", "prioritylevelconfigurations")

	e := startWith(t, testOptions(t, dir))
	names := listNames(t, e, apiservices)
	for _, want := range []string{"v1.", "v1.apps", "v1.batch", "v2.autoscaling", "v1.autoscaling", "v1." + b.Group("rbac.authorization"), "v1." + b.Group("flowcontrol.apiserver")} {
		if !slices.Contains(names, want) {
			t.Errorf("apiservices %q lack %q", names, want)
		}
	}
	if slices.Contains(names, "v1."+b.Group("apiregistration")) {
		t.Errorf("apiservices %q hold one for the aggregator's own group", names)
	}
	apps := e.do("GET", apiservices+"/v1.apps", nil).mustCode(t, 200).obj(t)
	if at(apps, "metadata", "labels", b.AutomanagedLabel) != "onstart" || at(apps, "spec", "groupPriorityMinimum") != 17800.0 ||
		at(apps, "spec", "versionPriority") != 15.0 || at(apps, "spec", "service") != nil ||
		at(apps, "status", "conditions", 0, "type") != "Available" || at(apps, "status", "conditions", 0, "status") != "True" ||
		at(apps, "status", "conditions", 0, "reason") != "Local" {
		t.Errorf("apiservice v1.apps: %v", apps)
	}
	pc := e.do("GET", groupPath(b.Group("scheduling"), "v1", "", "priorityclasses")+"/system-node-critical", nil).mustCode(t, 200).obj(t)
	if pc["value"] != 2000001000.0 || pc["preemptionPolicy"] != "PreemptLowerPriority" {
		t.Errorf("system-node-critical: %v", pc)
	}
	if got := listNames(t, e, levels); len(got) != 8 || !slices.Contains(got, "exempt") || !slices.Contains(got, "catch-all") {
		t.Errorf("priority levels %q", got)
	}
	if got := listNames(t, e, flowschemas); len(got) != 13 || !slices.Contains(got, "global-default") {
		t.Errorf("flow schemas %q", got)
	}
	// An operator's change to an auto-updated schema is undone at the next
	// start; one that turned auto-update off is kept. (Read after the
	// server's write of the schema's status, which would conflict.)
	for name, auto := range map[string]string{"global-default": "true", "service-accounts": "false"} {
		eventually(t, name+"'s Dangling condition", func() bool {
			return at(e.do("GET", flowschemas+"/"+name, nil).mustCode(t, 200).obj(t), "status", "conditions") != nil
		})
		fs := e.do("GET", flowschemas+"/"+name, nil).mustCode(t, 200).obj(t)
		fs["spec"].(map[string]any)["matchingPrecedence"] = 4321
		fs["metadata"].(map[string]any)["annotations"].(map[string]any)["apf."+b.LongDomain+"/autoupdate-spec"] = auto
		e.do("PUT", flowschemas+"/"+name, fs).mustCode(t, 200)
	}
	e.stop()

	e = startWith(t, testOptions(t, dir, withRuntimeConfig("batch/v1=false")))
	names = listNames(t, e, apiservices)
	if slices.Contains(names, "v1.batch") || !slices.Contains(names, "v1.apps") {
		t.Errorf("apiservices after batch/v1 was switched off: %q", names)
	}
	for name, want := range map[string]float64{"global-default": 9900, "service-accounts": 4321} {
		fs := e.do("GET", flowschemas+"/"+name, nil).mustCode(t, 200).obj(t)
		if got := at(fs, "spec", "matchingPrecedence"); got != want {
			t.Errorf("flow schema %s after restart: matchingPrecedence %v, want %v", name, got, want)
		}
	}
}

package builtin

import (
	"reflect"
	"slices"
	"testing"

	"platd/config"
	"platd/server/registry"
)

func TestAPIService(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "APIService")
	svc := func(name string, spec map[string]any) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": name}, "spec": spec}
	}
	remote := func(more map[string]any) map[string]any {
		spec := map[string]any{"group": "metrics.example.com", "version": "v1beta1", "groupPriorityMinimum": int64(100), "versionPriority": int64(10),
			"service": map[string]any{"namespace": "ns", "name": "metrics"}}
		for k, v := range more {
			spec[k] = v
		}
		return spec
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"remote", svc("v1beta1.metrics.example.com", remote(nil)), nil},
		{"core", svc("v1.", map[string]any{"version": "v1", "groupPriorityMinimum": int64(18000), "versionPriority": int64(1)}), nil},
		{"wrong name", svc("metrics", remote(nil)), []string{
			"metadata.name: Invalid value: \"metrics\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.example.com\"",
		}},
		{"empty spec", svc(".", map[string]any{}), []string{
			"spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
			`spec.version: Invalid value: "": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
			"spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
			"spec.versionPriority: Invalid value: 0: must be positive and less than 1000",
		}},
		{"bad group and priorities", svc("v1.Bad_Group", map[string]any{"group": "Bad_Group", "version": "v1", "groupPriorityMinimum": int64(20001), "versionPriority": int64(1001)}), []string{
			`spec.group: Invalid value: "Bad_Group": ` + subdomainMsg,
			"spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000",
			"spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
		}},
		{"local with transport", svc("v1.example.com", map[string]any{"group": "example.com", "version": "v1", "groupPriorityMinimum": int64(1), "versionPriority": int64(1),
			"caBundle": b64("pem"), "insecureSkipTLSVerify": true}), []string{
			`spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle`,
			"spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
		}},
		{"remote service", svc("v1beta1.metrics.example.com", remote(map[string]any{"service": map[string]any{}, "caBundle": b64("pem"), "insecureSkipTLSVerify": true})), []string{
			"spec.service.namespace: Required value",
			"spec.service.name: Required value",
			"spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}

	// Defaults and the server's condition on local APIServices.
	got := mustCreate(t, d, svc("v1beta1.metrics.example.com", remote(nil)))
	if p := intAt(got, "spec", "service", "port"); p != 443 {
		t.Errorf("port = %d", p)
	}
	if c := listOf(valueAt(got, "status", "conditions")); len(c) != 0 {
		t.Errorf("a remote APIService got conditions %v", c)
	}
	local := mustCreate(t, d, svc("v1.example.com", map[string]any{"group": "example.com", "version": "v1", "groupPriorityMinimum": int64(1), "versionPriority": int64(1)}))
	conds := mapsOf(valueAt(local, "status", "conditions"))
	if len(conds) != 1 || conds[0]["type"] != "Available" || conds[0]["status"] != "True" || conds[0]["reason"] != "Local" ||
		conds[0]["message"] != "Local APIServices are always available" || str(conds[0], "lastTransitionTime") == "" {
		t.Errorf("local conditions = %v", conds)
	}

	// Status writes check condition statuses only.
	errs := d.Subresource("status").Validate(registry.Object{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Available", "status": "Maybe"}}}}, got)
	checkErrs(t, "status", errs, []string{`status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"`})
	if !d.UpdateRequiresResourceVersion || d.UpdateCreates {
		t.Error("APIService updates need a resourceVersion and never create")
	}
}

func TestAPIServicePriorities(t *testing.T) {
	t.Parallel()
	p := APIServicePriorities(brand)
	tests := []struct {
		group, version string
		want           registry.Priority
		ok             bool
	}{
		{"", "v1", registry.Priority{Group: 18000, Version: 1}, true},
		{"apps", "v1", registry.Priority{Group: 17800, Version: 15}, true},
		{"autoscaling", "v2", registry.Priority{Group: 17500, Version: 30}, true},
		{brand.Group("flowcontrol.apiserver"), "v1", registry.Priority{Group: 16100, Version: 21}, true},
		{brand.Group("rbac.authorization"), "v1", registry.Priority{Group: 17000, Version: 15}, true},
		{brand.Group("apiregistration"), "v1", registry.Priority{Group: 20001, Version: 15}, true},
		{"rbac.authorization.example.com", "v1", registry.Priority{}, false},
		{"apps", "v9", registry.Priority{}, false},
	}
	for _, tt := range tests {
		if got, ok := p(tt.group, tt.version); got != tt.want || ok != tt.ok {
			t.Errorf("%s/%s = %v, %v; want %v, %v", tt.group, tt.version, got, ok, tt.want, tt.ok)
		}
	}

	d := typeDescriptor(t, "APIService")
	core := LocalAPIService("", "v1", brand)
	if core["metadata"].(map[string]any)["name"] != "v1." || has(mapAt(core, "spec"), "group") {
		t.Errorf("core APIService = %v", core)
	}
	if l := mapAt(core, "metadata", "labels"); l[brand.AutomanagedLabel] != "onstart" {
		t.Errorf("labels = %v", l)
	}
	for _, gv := range [][2]string{{"", "v1"}, {"apps", "v1"}, {brand.Group("scheduling"), "v1"}} {
		obj := LocalAPIService(gv[0], gv[1], brand)
		if _, errs := create(d, obj); len(errs) > 0 {
			t.Errorf("%v: %v", gv, errs)
		}
	}
	if LocalAPIService(brand.Group("apiregistration"), "v1", brand) != nil || LocalAPIService("example.com", "v1", brand) != nil {
		t.Error("no APIService is made for the apiregistration group or unknown groups")
	}
}

// TestLocalAPIServicesMatchUpstream compares the APIServices made for the
// group-versions a v1.32 server lists with the ones it created.
func TestLocalAPIServicesMatchUpstream(t *testing.T) {
	t.Parallel()
	b := config.Brands["kubernetes"]
	// version, group (a prefix of the brand's domain when branded), group
	// priority minimum, version priority, as upstream stored them.
	upstream := []struct {
		version, group string
		branded        bool
		min, ver       int64
	}{
		{"v1", "", false, 18000, 1}, {"v1", "admissionregistration", true, 16700, 15}, {"v1", "apiextensions", true, 16700, 15},
		{"v1", "apps", false, 17800, 15}, {"v1", "authentication", true, 17700, 15}, {"v1", "authorization", true, 17600, 15},
		{"v1", "autoscaling", false, 17500, 15}, {"v1", "batch", false, 17400, 15}, {"v1", "certificates", true, 17300, 15},
		{"v1", "coordination", true, 16500, 15}, {"v1", "discovery", true, 16200, 15}, {"v1", "events", true, 17750, 15},
		{"v1", "flowcontrol.apiserver", true, 16100, 21}, {"v1", "networking", true, 17200, 15}, {"v1", "node", true, 16300, 15},
		{"v1", "policy", false, 17100, 15}, {"v1", "rbac.authorization", true, 17000, 15}, {"v1", "scheduling", true, 16600, 15},
		{"v1", "storage", true, 16800, 15}, {"v2", "autoscaling", false, 17500, 30},
	}
	for _, u := range upstream {
		group := u.group
		if u.branded {
			group = b.Group(group)
		}
		name := u.version + "." + group
		obj := LocalAPIService(group, u.version, b)
		if obj == nil {
			t.Errorf("%s: no APIService", name)
			continue
		}
		spec := map[string]any{"version": u.version, "groupPriorityMinimum": u.min, "versionPriority": u.ver}
		if group != "" {
			spec["group"] = group
		}
		meta := map[string]any{"name": name, "labels": map[string]any{b.AutomanagedLabel: "onstart"}}
		if !reflect.DeepEqual(obj["spec"], spec) || !reflect.DeepEqual(obj["metadata"], meta) {
			t.Errorf("%s: %v", name, obj)
		}
	}
}

// TestPrioritiesOrderGroups checks that the priorities order the served
// groups as a v1.32 server lists them: apiregistration first, then by
// group priority, then by name.
func TestPrioritiesOrderGroups(t *testing.T) {
	t.Parallel()
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := Register(reg, cat, brand); err != nil {
		t.Fatal(err)
	}
	reg.SetPriorities(APIServicePriorities(brand))
	// The upstream order, less the groups not served yet.
	upstream := []string{"", "apiregistration", "apps", "events", "authentication", "authorization", "autoscaling", "batch",
		"certificates", "networking", "policy", "rbac.authorization", "storage", "admissionregistration", "apiextensions",
		"scheduling", "coordination", "node", "discovery", "flowcontrol.apiserver"}
	served := map[string]bool{}
	for _, g := range reg.Groups() {
		served[g] = true
	}
	var want []string
	for _, g := range upstream {
		switch g {
		case "", "apps", "autoscaling", "batch", "policy":
		default:
			g = brand.Group(g)
		}
		if served[g] {
			want = append(want, g)
		}
	}
	if len(want) < 8 {
		t.Fatalf("only %q served", want)
	}
	if got := reg.Groups(); !slices.Equal(got, want) {
		t.Errorf("groups:\n got  %q\n want %q", got, want)
	}
}

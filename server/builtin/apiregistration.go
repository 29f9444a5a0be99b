package builtin

import (
	"fmt"
	"time"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// APIService priority bounds: upstream caps what an APIService may claim,
// and lists the apiregistration group above every group that can claim.
const (
	maxGroupPriorityMinimum = 20000
	maxVersionPriority      = 1000
	apiRegistrationPriority = maxGroupPriorityMinimum + 1
	defaultServicePort      = 443
)

// The condition the server keeps on an APIService it serves itself.
const (
	apiServiceAvailable    = "Available"
	localAPIServiceReason  = "Local"
	localAPIServiceMessage = "Local APIServices are always available"
)

func apiRegistrationV1(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{apiServices(b.Group("apiregistration"))}
}

// apiServices: which server serves a group-version, and how groups and
// versions are ordered. Upstream's update needs a resourceVersion.
func apiServices(group string) *registry.Descriptor {
	d := groupType(group, "apiservices", "apiservice", "APIService", false)
	d.NameRule = registry.NamePathSegment
	d.Categories = []string{"api-extensions"}
	d.UpdateRequiresResourceVersion = true
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: []string{"spec", "metadata.labels", "metadata.annotations", "metadata.finalizers", "metadata.ownerReferences"}, Validate: validateAPIServiceStatus}}
	d.Strategy.Default = func(obj registry.Object) {
		if svc := mapAt(obj, "spec", "service"); svc != nil && !has(svc, "port") {
			svc["port"] = int64(defaultServicePort)
		}
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		markLocalAvailable(obj, time.Now())
	}
	d.Strategy.PrepareForUpdate = func(obj, _ registry.Object, _ string) { markLocalAvailable(obj, time.Now()) }
	d.Strategy.Validate = validateAPIService
	return d
}

// markLocalAvailable keeps the Available condition of an APIService
// without a service True: the server serves that group-version itself.
// Upstream's availability controller writes it soon after; here it is
// part of the write.
func markLocalAvailable(obj registry.Object, now time.Time) {
	if mapAt(obj, "spec", "service") != nil {
		return
	}
	status := child(obj, "status")
	conds := listOf(status["conditions"])
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if str(cond, "type") != apiServiceAvailable {
			continue
		}
		if str(cond, "status") != "True" || str(cond, "lastTransitionTime") == "" {
			cond["lastTransitionTime"] = now.UTC().Format(time.RFC3339)
		}
		cond["status"], cond["reason"], cond["message"] = "True", localAPIServiceReason, localAPIServiceMessage
		return
	}
	status["conditions"] = append(conds, map[string]any{
		"type": apiServiceAvailable, "status": "True", "lastTransitionTime": now.UTC().Format(time.RFC3339),
		"reason": localAPIServiceReason, "message": localAPIServiceMessage,
	})
}

func validateAPIService(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec := mapAt(obj, "spec")
	group, version := str(spec, "group"), str(spec, "version")
	// The name is checked as a path segment first; one that is must
	// name the group-version it serves.
	if want, name := version+"."+group, str(obj, "metadata", "name"); name != "" && name != want && len(validation.IsPathSegment(name)) == 0 {
		errs = append(errs, apierr.Invalid("metadata.name", name, fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", want)))
	}
	if group == "" && version != "v1" {
		errs = append(errs, apierr.Required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
	}
	if group != "" {
		errs = append(errs, dnsSubdomain(group, pathOf("spec.group"))...)
	}
	errs = append(errs, invalidEach(pathOf("spec.version"), version, isDNS1035Label(version))...)
	if n := intAt(spec, "groupPriorityMinimum"); n <= 0 || n > maxGroupPriorityMinimum {
		errs = append(errs, apierr.Invalid("spec.groupPriorityMinimum", n, "must be positive and less than 20000"))
	}
	if n := intAt(spec, "versionPriority"); n <= 0 || n > maxVersionPriority {
		errs = append(errs, apierr.Invalid("spec.versionPriority", n, "must be positive and less than 1000"))
	}
	caBundle := decodeBytes(str(spec, "caBundle"))
	insecure := boolOf(spec["insecureSkipTLSVerify"])
	svc, ok := spec["service"].(map[string]any)
	if !ok {
		if len(caBundle) != 0 {
			errs = append(errs, apierr.Invalid("spec.caBundle", fmt.Sprintf("%d bytes", len(caBundle)), "local APIServices may not have a caBundle"))
		}
		if insecure {
			errs = append(errs, apierr.Invalid("spec.insecureSkipTLSVerify", insecure, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	if str(svc, "namespace") == "" {
		errs = append(errs, apierr.Required("spec.service.namespace", ""))
	}
	if str(svc, "name") == "" {
		errs = append(errs, apierr.Required("spec.service.name", ""))
	}
	if insecure && len(caBundle) > 0 {
		errs = append(errs, apierr.Invalid("spec.insecureSkipTLSVerify", insecure, "may not be true if caBundle is present"))
	}
	return errs
}

// validateAPIServiceStatus checks a status write: condition statuses only.
func validateAPIServiceStatus(obj, _ registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, c := range mapsOf(valueAt(obj, "status", "conditions")) {
		if s := str(c, "status"); !contains(conditionStatuses, s) {
			errs = append(errs, apierr.NotSupported(index("status.conditions", i)+".status", s, []string{"True", "False", "Unknown"}))
		}
	}
	return errs
}

// apiServicePriorities is upstream's table of the priorities of the
// built-in group-versions, by brand-free group prefix (the groups without
// a domain are spelled as served), version.
var apiServicePriorities = []struct {
	group    string
	branded  bool
	versions map[string]registry.Priority
}{
	{"", false, map[string]registry.Priority{"v1": {Group: 18000, Version: 1}}},
	{"apiregistration", true, map[string]registry.Priority{"v1": {Group: apiRegistrationPriority, Version: 15}}},
	{"apps", false, map[string]registry.Priority{"v1": {Group: 17800, Version: 15}}},
	{"events", true, map[string]registry.Priority{"v1": {Group: 17750, Version: 15}, "v1beta1": {Group: 17750, Version: 5}}},
	{"authentication", true, map[string]registry.Priority{"v1": {Group: 17700, Version: 15}, "v1beta1": {Group: 17700, Version: 9}, "v1alpha1": {Group: 17700, Version: 1}}},
	{"authorization", true, map[string]registry.Priority{"v1": {Group: 17600, Version: 15}}},
	{"autoscaling", false, map[string]registry.Priority{"v1": {Group: 17500, Version: 15}, "v2": {Group: 17500, Version: 30}, "v2beta1": {Group: 17500, Version: 9}, "v2beta2": {Group: 17500, Version: 1}}},
	{"batch", false, map[string]registry.Priority{"v1": {Group: 17400, Version: 15}, "v1beta1": {Group: 17400, Version: 9}, "v2alpha1": {Group: 17400, Version: 9}}},
	{"certificates", true, map[string]registry.Priority{"v1": {Group: 17300, Version: 15}, "v1beta1": {Group: 17300, Version: 9}, "v1alpha1": {Group: 17300, Version: 1}}},
	{"networking", true, map[string]registry.Priority{"v1": {Group: 17200, Version: 15}, "v1beta1": {Group: 17200, Version: 9}, "v1alpha1": {Group: 17200, Version: 1}}},
	{"policy", false, map[string]registry.Priority{"v1": {Group: 17100, Version: 15}, "v1beta1": {Group: 17100, Version: 9}}},
	{"rbac.authorization", true, map[string]registry.Priority{"v1": {Group: 17000, Version: 15}}},
	{"storage", true, map[string]registry.Priority{"v1": {Group: 16800, Version: 15}, "v1beta1": {Group: 16800, Version: 9}, "v1alpha1": {Group: 16800, Version: 1}}},
	{"apiextensions", true, map[string]registry.Priority{"v1": {Group: 16700, Version: 15}}},
	{"admissionregistration", true, map[string]registry.Priority{"v1": {Group: 16700, Version: 15}, "v1beta1": {Group: 16700, Version: 12}, "v1alpha1": {Group: 16700, Version: 9}}},
	{"scheduling", true, map[string]registry.Priority{"v1": {Group: 16600, Version: 15}}},
	{"coordination", true, map[string]registry.Priority{"v1": {Group: 16500, Version: 15}, "v1beta1": {Group: 16500, Version: 13}, "v1alpha2": {Group: 16500, Version: 12}}},
	{"node", true, map[string]registry.Priority{"v1": {Group: 16300, Version: 15}, "v1beta1": {Group: 16300, Version: 9}, "v1alpha1": {Group: 16300, Version: 1}}},
	{"discovery", true, map[string]registry.Priority{"v1": {Group: 16200, Version: 15}, "v1beta1": {Group: 16200, Version: 12}}},
	{"resource", true, map[string]registry.Priority{"v1beta1": {Group: 16200, Version: 9}, "v1alpha3": {Group: 16200, Version: 1}}},
	{"flowcontrol.apiserver", true, map[string]registry.Priority{"v1": {Group: 16100, Version: 21}, "v1beta3": {Group: 16100, Version: 18}, "v1beta2": {Group: 16100, Version: 15}, "v1beta1": {Group: 16100, Version: 12}, "v1alpha1": {Group: 16100, Version: 9}}},
	{"internal.apiserver", true, map[string]registry.Priority{"v1alpha1": {Group: 16000, Version: 9}}},
	{"storagemigration", true, map[string]registry.Priority{"v1alpha1": {Group: 15800, Version: 9}}},
}

// APIServicePriorities returns the priority of each built-in group-version
// under the brand's group names, in the form registry.SetPriorities takes;
// ok is false for any other group-version (custom resources). The
// apiregistration group ranks above all, as upstream lists it first; it
// has no APIService object.
func APIServicePriorities(b config.Brand) func(group, version string) (registry.Priority, bool) {
	byGroup := make(map[string]map[string]registry.Priority, len(apiServicePriorities))
	for _, g := range apiServicePriorities {
		name := g.group
		if g.branded {
			name = b.Group(g.group)
		}
		byGroup[name] = g.versions
	}
	return func(group, version string) (registry.Priority, bool) {
		p, ok := byGroup[group][version]
		return p, ok
	}
}

// LocalAPIService returns the APIService the server creates at start for a
// group-version it serves itself, or nil for one upstream creates none for:
// the apiregistration group, and group-versions outside the built-in table.
// The caller owns the returned object; the server sets its status.
func LocalAPIService(group, version string, b config.Brand) registry.Object {
	if group == b.Group("apiregistration") {
		return nil
	}
	p, ok := APIServicePriorities(b)(group, version)
	if !ok {
		return nil
	}
	spec := map[string]any{"version": version, "groupPriorityMinimum": int64(p.Group), "versionPriority": int64(p.Version)}
	if group != "" {
		spec["group"] = group
	}
	return registry.Object{
		"apiVersion": b.Group("apiregistration") + "/v1", "kind": "APIService",
		"metadata": map[string]any{"name": version + "." + group, "labels": map[string]any{b.AutomanagedLabel: "onstart"}},
		"spec":     spec,
	}
}

// Package builtin describes the built-in resource types: their descriptors
// and the few rules per type that a schema cannot say.
package builtin

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"platd/config"
	"platd/server/printers"
	"platd/server/registry"
	"platd/server/schema"
)

// statusVerbs are the verbs of a status subresource.
var statusVerbs = []string{registry.VerbGet, registry.VerbPatch, registry.VerbUpdate}

// Register adds the built-in types to reg, with schemas from cat and
// upstream's Tables; services are allocated from the default ranges.
func Register(reg *registry.Registry, cat *schema.Catalog, b config.Brand) error {
	return RegisterWith(reg, cat, b, DefaultServiceRanges(), Services{})
}

// RegisterWith is Register with the service ranges the server was
// configured with and the server parts the types answer with.
func RegisterWith(reg *registry.Registry, cat *schema.Catalog, b config.Brand, r ServiceRanges, sv Services) error {
	return RegisterDescribed(reg, cat, b, Describe(b, r, sv))
}

// Describe returns the descriptors of every built-in type, without their
// schemas and tables: ResourcesOf and RegisterDescribed read the same
// list, so a start builds it once.
func Describe(b config.Brand, r ServiceRanges, sv Services) []*registry.Descriptor {
	return all(b, r, sv)
}

// RegisterDescribed adds ds, from Describe, to reg with their schemas
// from cat and their tables.
func RegisterDescribed(reg *registry.Registry, cat *schema.Catalog, b config.Brand, ds []*registry.Descriptor) error {
	tables := printers.New(b)
	for _, d := range ds {
		d.Schema = cat.ByGVK(d.Group, d.Version, d.Kind)
		if d.Schema == nil {
			return fmt.Errorf("builtin: no schema for %s/%s %s", d.Group, d.Version, d.Kind)
		}
		sort.Strings(d.Verbs)
		d.Table = tables.For(d.Group, d.Version, d.Resource)
		for i := range d.Subresources {
			if sr := &d.Subresources[i]; sr.Kind != "" {
				sr.Table = tables.For(d.Group, d.Version, d.Resource+"/"+sr.Name)
			}
		}
		reg.Add(d)
	}
	return nil
}

// ResourcesOf lists the resources of ds, from Describe, and names the one
// namespaces are; it needs no schema: --runtime-config is checked against
// them before anything else is done.
func ResourcesOf(ds []*registry.Descriptor) (every []config.GroupVersionResource, namespaces config.GroupVersionResource) {
	for _, d := range ds {
		gvr := config.GroupVersionResource{Group: d.Group, Version: d.Version, Resource: d.Resource}
		if d.IsNamespace {
			namespaces = gvr
		}
		every = append(every, gvr)
	}
	return every, namespaces
}

// all lists the descriptors of every built-in type, group by group.
func all(b config.Brand, r ServiceRanges, sv Services) []*registry.Descriptor {
	core := coreV1With(b, r, sv)
	hpa := autoscalingV2(b)
	policy := policyV1()
	// Evictions are budgeted by the disruption budgets of policy/v1.
	kindOf(core, "Pod").Subresource("eviction").Budgets = kindOf(policy, "PodDisruptionBudget")
	ds := slices.Concat(
		core, eventsV1(b, kindOf(core, "Event")),
		hpa, autoscalingV1(b, hpa[0]),
		appsV1(b, sv), batchV1(b, sv),
		networkingV1(b), policy, storageV1(b), coordinationV1(b), nodeV1(b), discoveryV1(b),
		rbacV1(b, sv), schedulingV1(b), certificatesV1(b, sv), apiRegistrationV1(b), apiExtensionsV1(b),
		admissionRegistrationV1(b), flowControlV1(b), authenticationV1(b, sv), authorizationV1(b, sv),
	)
	admitAcrossGroups(b, ds, sv)
	composeAdmission(ds, sv.Admission.Enabled)
	return ds
}

// admitAcrossGroups sets the admission hooks of ds that read the objects
// of another type: a pod runs as a ServiceAccount, its priority comes from
// its PriorityClass, its overhead and scheduling from its RuntimeClass and
// its node selector and tolerations from its Namespace, a claim's default
// class is a StorageClass, whose allowVolumeExpansion says whether the
// claim may grow, and the LimitRanges of their namespace default and bound
// the resources of pods and claims; the images of pods are reviewed by
// the configured image policy backend; the pod-security labels of their
// namespace check pods and the pod templates of workloads, and are
// checked on namespaces themselves. The plugins' configurations are sv's.
// The steps join those the types have of their own
// (DefaultTolerationSeconds', AlwaysPullImages',
// LimitPodHardAntiAffinityTopology's, ExtendedResourceToleration's,
// StorageObjectInUseProtection's), which need no other objects;
// composeAdmission puts them all in upstream's order.
func admitAcrossGroups(b config.Brand, ds []*registry.Descriptor, sv Services) {
	lr := newLimitRanger(b, kindOf(ds, "LimitRange"))
	pa := priorityAdmission{classes: kindOf(ds, "PriorityClass")}
	sa := newServiceAccountAdmission(b, kindOf(ds, "ServiceAccount"))
	rc := runtimeClassAdmission{classes: kindOf(ds, "RuntimeClass")}
	ps := newPodSecurity(b, kindOf(ds, "Namespace"), kindOf(ds, "Pod"), sv.PodSecurity)
	pns := newPodNodeSelector(b, kindOf(ds, "Pod"), kindOf(ds, "Namespace"), sv.PodNodeSelector)
	ptr := newPodTolerationRestriction(b, kindOf(ds, "Namespace"), sv.PodTolerationRestriction)
	pod := &kindOf(ds, "Pod").Strategy
	pod.AdmissionSteps = append(pod.AdmissionSteps,
		registry.AdmissionStep{Plugin: config.PluginLimitRanger, Admit: lr.admitPod, Validate: lr.validatePod},
		registry.AdmissionStep{Plugin: config.PluginServiceAccount, Admit: sa.admitPod},
		registry.AdmissionStep{Plugin: config.PluginPodSecurity, Validate: ps.validatePod},
		registry.AdmissionStep{Plugin: config.PluginPodNodeSelector, Admit: pns.admitPod, Validate: pns.validatePod},
		registry.AdmissionStep{Plugin: config.PluginPriority, Admit: pa.admitPod},
		registry.AdmissionStep{Plugin: config.PluginPodTolerationRestriction, Admit: ptr.admitPod, Validate: ptr.validatePod},
		registry.AdmissionStep{Plugin: config.PluginRuntimeClass, Admit: rc.admitPod, Validate: rc.validatePod})
	if c := sv.ImagePolicyWebhook; c != nil {
		ip := newImagePolicy(b, *c, sv.now)
		if sv.OnStop != nil {
			sv.OnStop(ip.close)
		}
		pod.AdmissionSteps = append(pod.AdmissionSteps, registry.AdmissionStep{
			Plugin: config.PluginImagePolicyWebhook, Validate: ip.validatePod,
			ValidateSubresources: map[string]registry.AdmissionHook{"ephemeralcontainers": ip.validateEphemeralContainers},
		})
	}
	ns := &ps.namespaces.Strategy
	ns.AdmissionSteps = append(ns.AdmissionSteps, registry.AdmissionStep{Plugin: config.PluginPodSecurity, Validate: ps.validateNamespace})
	// Workloads' pod templates are only warned of.
	for kind, path := range map[string][]string{
		"PodTemplate":           {"template"},
		"ReplicationController": {"spec", "template"},
		"ReplicaSet":            {"spec", "template"},
		"Deployment":            {"spec", "template"},
		"StatefulSet":           {"spec", "template"},
		"DaemonSet":             {"spec", "template"},
		"Job":                   {"spec", "template"},
		"CronJob":               {"spec", "jobTemplate", "spec", "template"},
	} {
		st := &kindOf(ds, kind).Strategy
		st.AdmissionSteps = append(st.AdmissionSteps, registry.AdmissionStep{Plugin: config.PluginPodSecurity, Validate: ps.validateTemplate(path...)})
	}
	pa.classes.Strategy.AdmissionSteps = append(pa.classes.Strategy.AdmissionSteps,
		registry.AdmissionStep{Plugin: config.PluginPriority, Validate: pa.validateClass})
	claim, classes := kindOf(ds, "PersistentVolumeClaim"), kindOf(ds, "StorageClass")
	claim.Strategy.AdmissionSteps = append(claim.Strategy.AdmissionSteps,
		registry.AdmissionStep{Plugin: config.PluginLimitRanger, Validate: lr.validateClaim},
		registry.AdmissionStep{Plugin: config.PluginDefaultStorageClass, Admit: defaultStorageClass(b, classes).admit},
		registry.AdmissionStep{Plugin: config.PluginPersistentVolumeClaimResize, Validate: newClaimResize(b, classes).validate})
}

// composeAdmission builds each type's admission hooks from the steps of
// the admission plugins enabled reports on, first putting each type's
// steps in upstream's order of their plugins (config.AdmissionPluginNames):
// a type's own steps and those set across groups run where upstream runs
// their plugin. Steps of one plugin keep their order.
func composeAdmission(ds []*registry.Descriptor, enabled func(plugin string) bool) {
	for _, d := range ds {
		slices.SortStableFunc(d.Strategy.AdmissionSteps, func(a, b registry.AdmissionStep) int {
			return slices.Index(config.AdmissionPluginNames, a.Plugin) - slices.Index(config.AdmissionPluginNames, b.Plugin)
		})
		d.Strategy.ComposeAdmission(enabled)
	}
}

// protectOnCreate is StorageObjectInUseProtection's step: a new object
// gets finalizer, which keeps it while it is in use.
func protectOnCreate(finalizer string) registry.AdmissionHook {
	return func(_ context.Context, _ registry.Lookup, obj, old registry.Object) error {
		if old == nil {
			addFinalizer(obj, finalizer)
		}
		return nil
	}
}

// kindOf returns the descriptor of kind among ds: the stored form a
// descriptor of another group or version converts from.
func kindOf(ds []*registry.Descriptor, kind string) *registry.Descriptor {
	for _, d := range ds {
		if d.Kind == kind {
			return d
		}
	}
	panic("builtin: no descriptor for " + kind)
}

// str reads a string at a path of nested maps.
func str(obj registry.Object, path ...string) string {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

// child returns the map at obj[key], creating it when absent.
func child(obj map[string]any, key string) map[string]any {
	m, ok := obj[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj[key] = m
	}
	return m
}

// fieldGetter returns a FieldSelectors entry reading a string at path.
func fieldGetter(path ...string) registry.FieldSelector {
	return registry.FieldSelector{Get: func(o registry.Object) string { return str(o, path...) }, Reads: [][]string{path}}
}

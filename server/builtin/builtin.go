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
	core := coreV1With(b, r)
	hpa := autoscalingV2(b)
	policy := policyV1()
	// Evictions are budgeted by the disruption budgets of policy/v1.
	kindOf(core, "Pod").Subresource("eviction").Budgets = kindOf(policy, "PodDisruptionBudget")
	ds := slices.Concat(
		core, eventsV1(b, kindOf(core, "Event")),
		hpa, autoscalingV1(b, hpa[0]),
		appsV1(b), batchV1(b),
		networkingV1(b), policy, storageV1(b), coordinationV1(b), nodeV1(b), discoveryV1(b),
		rbacV1(b, sv), schedulingV1(b), certificatesV1(b, sv), apiRegistrationV1(b), apiExtensionsV1(b),
		admissionRegistrationV1(b), flowControlV1(b), authenticationV1(b, sv), authorizationV1(b, sv),
	)
	admitAcrossGroups(b, ds, sv)
	return ds
}

// admitAcrossGroups sets the admission hooks of ds that read the objects
// of another type: a pod runs as a ServiceAccount, its priority comes from
// its PriorityClass and its overhead and scheduling from its
// RuntimeClass, a claim's default class is a StorageClass, whose
// allowVolumeExpansion says whether the claim may grow, and the
// LimitRanges of their namespace default and bound the resources of pods
// and claims; the pod-security labels of their namespace check pods and
// the pod templates of workloads, and are checked on namespaces
// themselves, with the PodSecurity configuration of sv. A type's hooks
// run in upstream's order of its admission plugins.
func admitAcrossGroups(b config.Brand, ds []*registry.Descriptor, sv Services) {
	lr := newLimitRanger(b, kindOf(ds, "LimitRange"))
	pa := priorityAdmission{classes: kindOf(ds, "PriorityClass")}
	sa := newServiceAccountAdmission(b, kindOf(ds, "ServiceAccount"))
	rc := runtimeClassAdmission{classes: kindOf(ds, "RuntimeClass")}
	ps := newPodSecurity(b, kindOf(ds, "Namespace"), kindOf(ds, "Pod"), sv.PodSecurity)
	pod := &kindOf(ds, "Pod").Strategy
	// The pod's own hook is upstream's DefaultTolerationSeconds.
	pod.Admit = inOrder(lr.admitPod, sa.admitPod, pa.admitPod, pod.Admit, rc.admitPod)
	pod.ValidateAdmission = inOrder(pod.ValidateAdmission, lr.validatePod, ps.validatePod, rc.validatePod)
	ns := &ps.namespaces.Strategy
	ns.ValidateAdmission = inOrder(ns.ValidateAdmission, ps.validateNamespace)
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
		st.ValidateAdmission = inOrder(st.ValidateAdmission, ps.validateTemplate(path...))
	}
	pa.classes.Strategy.ValidateAdmission = pa.validateClass
	claim, classes := kindOf(ds, "PersistentVolumeClaim"), kindOf(ds, "StorageClass")
	claim.Strategy.Admit = defaultStorageClass(b, classes).admit
	claim.Strategy.ValidateAdmission = inOrder(lr.validateClaim, newClaimResize(b, classes).validate)
}

// admitHook is an admission hook of a type's Strategy.
type admitHook = func(ctx context.Context, l registry.Lookup, obj, old registry.Object) error

// inOrder returns a hook running hooks one after the other, nil ones
// left out, until one fails.
func inOrder(hooks ...admitHook) admitHook {
	var run []admitHook
	for _, h := range hooks {
		if h != nil {
			run = append(run, h)
		}
	}
	switch len(run) {
	case 0:
		return nil
	case 1:
		return run[0]
	}
	return func(ctx context.Context, l registry.Lookup, obj, old registry.Object) error {
		for _, h := range run {
			if err := h(ctx, l, obj, old); err != nil {
				return err
			}
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

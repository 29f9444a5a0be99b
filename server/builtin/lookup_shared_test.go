package builtin

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
)

// sharedLookup serves admission hooks the very objects it holds, by kind,
// as the server's Lookup shares what it decoded between requests.
type sharedLookup map[string][]registry.Object

func (l sharedLookup) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	for _, o := range l[d.Kind] {
		if str(o, "metadata", "name") == name && str(o, "metadata", "namespace") == ns {
			return o, nil
		}
	}
	return nil, apierr.NotFound(d.Group, d.Resource, name)
}

func (l sharedLookup) List(d *registry.Descriptor, ns string) ([]registry.Object, int64, error) {
	var out []registry.Object
	for _, o := range l[d.Kind] {
		if ns == "" || str(o, "metadata", "namespace") == ns {
			out = append(out, o)
		}
	}
	return out, 1, nil
}

// scramble overwrites every member and item below v, so that whatever an
// admitted object shares with a looked-up one shows as changed.
func scramble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scramble(e)
			x[k] = "scrambled"
		}
		x["added"] = "scrambled"
	case []any:
		for i, e := range x {
			scramble(e)
			x[i] = "scrambled"
		}
	}
}

// TestAdmissionOnlyReadsLookedUpObjects: the admission hooks that look
// objects up (registry.Lookup) leave them as they were, and what they
// admit shares nothing with them: the looked-up objects are shared
// between requests.
func TestAdmissionOnlyReadsLookedUpObjects(t *testing.T) {
	t.Parallel()
	ds := Describe(brand, DefaultServiceRanges(), Services{})
	obj := func(s string) registry.Object { return decodeJSON(t, s) }
	enforce := brand.Label("enforce-mountable-secrets")
	psLabels := fmt.Sprintf(`{%q:"privileged",%q:"restricted",%q:"baseline"}`,
		brand.Label("pod-security")+"/enforce", brand.Label("pod-security")+"/warn", brand.Label("pod-security")+"/audit")
	stored := sharedLookup{
		"Namespace": {obj(`{"metadata":{"name":"ns","labels":` + psLabels + `}}`)},
		"ServiceAccount": {
			obj(`{"metadata":{"name":"default","namespace":"ns"},"imagePullSecrets":[{"name":"pull"}],"secrets":[{"name":"s"}]}`),
			obj(`{"metadata":{"name":"locked","namespace":"ns","annotations":{"` + enforce + `":"true"}},"imagePullSecrets":[{"name":"pull"}],"secrets":[{"name":"s"}]}`),
		},
		"PriorityClass": {
			obj(`{"metadata":{"name":"low"},"value":10,"globalDefault":true,"preemptionPolicy":"Never"}`),
			obj(`{"metadata":{"name":"high"},"value":1000,"preemptionPolicy":"PreemptLowerPriority"}`),
		},
		"RuntimeClass": {obj(`{"metadata":{"name":"gvisor"},"handler":"runsc","overhead":{"podFixed":{"cpu":"100m","memory":"64Mi"}},
			"scheduling":{"nodeSelector":{"sandbox":"yes"},"tolerations":[{"key":"sandbox","operator":"Exists","effect":"NoSchedule"}]}}`)},
		"LimitRange": {obj(`{"metadata":{"name":"defaults","namespace":"ns"},"spec":{"limits":[
			{"type":"Container","default":{"cpu":"500m","memory":"256Mi"},"defaultRequest":{"cpu":"100m","memory":"128Mi"},"max":{"cpu":"4"}},
			{"type":"PersistentVolumeClaim","max":{"storage":"10Gi"}}]}}`)},
		"StorageClass": {obj(`{"metadata":{"name":"standard","annotations":{"` + brand.Group("storageclass") + `/is-default-class":"true"}},"provisioner":"p"}`)},
		"Pod": {obj(`{"metadata":{"name":"running","namespace":"ns","ownerReferences":[{"uid":"u","controller":true}]},
			"spec":{"containers":[{"name":"c","image":"i","securityContext":{"privileged":true}}]}}`)},
	}
	before := map[string][]registry.Object{}
	for kind, objs := range stored {
		for _, o := range objs {
			before[kind] = append(before[kind], copyObj(o))
		}
	}
	pod := func(spec string) string {
		return `{"metadata":{"name":"p","namespace":"ns","labels":{"a":"b"}},"spec":` + spec + `}`
	}
	tests := []struct {
		kind string
		obj  string
		old  string
	}{
		{"Pod", pod(`{"containers":[{"name":"c","image":"i"}],"initContainers":[{"name":"init","image":"i"}]}`), ""},
		{"Pod", pod(`{"serviceAccountName":"locked","runtimeClassName":"gvisor","priorityClassName":"high","nodeSelector":{"zone":"a"},
			"containers":[{"name":"c","image":"i","env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}],
			"volumes":[{"name":"v","secret":{"secretName":"s"}}],"imagePullSecrets":[{"name":"pull"}]}`), ""},
		{"Pod", pod(`{"runtimeClassName":"gvisor","containers":[{"name":"c","image":"i","securityContext":{"privileged":true}}]}`), ""},
		{"Pod", pod(`{"containers":[{"name":"c","image":"new"}]}`), pod(`{"containers":[{"name":"c","image":"old"}]}`)},
		{"Deployment", `{"metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"i"}]}}}}`, ""},
		{"Namespace", `{"metadata":{"name":"ns","labels":{"` + brand.Label("pod-security") + `/enforce":"restricted"}}}`,
			`{"metadata":{"name":"ns","labels":` + psLabels + `}}`},
		{"PersistentVolumeClaim", `{"metadata":{"name":"c","namespace":"ns"},"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`, ""},
		{"PriorityClass", `{"metadata":{"name":"other"},"value":5,"globalDefault":true}`, ""},
	}
	for i, tc := range tests {
		d := kindOf(ds, tc.kind)
		o := obj(tc.obj)
		var old registry.Object
		if tc.old != "" {
			old = obj(tc.old)
		}
		ran := false
		for _, hook := range []registry.AdmissionHook{d.Strategy.Admit, d.Strategy.ValidateAdmission} {
			if hook == nil {
				continue
			}
			ran = true
			// A refusal is an answer too: what matters is what the hook
			// did to the objects it read.
			_ = hook(context.Background(), stored, o, old)
		}
		if !ran {
			t.Fatalf("%d: %s has no admission hooks", i, tc.kind)
		}
		scramble(o)
		for kind, objs := range stored {
			if !reflect.DeepEqual(objs, before[kind]) {
				t.Fatalf("%d (%s): looked-up %s changed:\n%v\nwas\n%v", i, tc.kind, kind, objs, before[kind])
			}
		}
	}
}

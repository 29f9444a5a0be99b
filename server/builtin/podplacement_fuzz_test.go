package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"platd/config"
	"platd/server/registry"
)

// FuzzPodPlacementAdmission feeds arbitrary namespace annotations (a
// node selector, default tolerations and a toleration whitelist), plugin
// configurations and pod specs to PodNodeSelector and
// PodTolerationRestriction: whoever may annotate a namespace writes what
// they parse at every pod's admission. Each answers a Status error or
// admits, never panics; and a pod either admits passes its own
// validating step unchanged.
func FuzzPodPlacementAdmission(f *testing.F) {
	f.Add("zone = a, disk=ssd", `[{"key":"ns","operator":"Equal","value":"v","effect":"NoSchedule"}]`,
		`[{"key":"ns","operator":"Exists"},{"operator":"Exists","effect":"NoExecute","tolerationSeconds":5}]`, "env=prod",
		[]byte(`{"nodeSelector":{"zone":"a"},"tolerations":[{"key":"ns","operator":"Exists"}],"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}`))
	f.Add("a=b=c", `[{"key":`, `{}`, "a,", []byte(`{"nodeSelector":{"zone":1},"tolerations":"x"}`))
	f.Add("", `[{"Key":"ns","Operator":"Exists","tolerationSeconds":"60"}]`, "", "", []byte(`{}`))
	f.Add("-zone=a", `[{"operator":1}]`, `[]`, "=", []byte(`[]`))
	core := coreV1(brand)
	pods, namespaces := kindOf(core, "Pod"), kindOf(core, "Namespace")
	nodeSelectorKey := "scheduler.alpha." + brand.Label("node-selector")
	ptr := newPodTolerationRestriction(brand, namespaces, config.PodTolerationRestrictionConfiguration{})
	f.Fuzz(func(t *testing.T, selector, defaults, whitelist, clusterDefault string, spec []byte) {
		ns := registry.Object{"metadata": map[string]any{"name": "ns", "annotations": map[string]any{
			nodeSelectorKey: selector, ptr.defaultsKey: defaults, ptr.whitelistKey: whitelist,
		}}}
		l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{namespaces: {ns}}}
		newPod := func() registry.Object {
			var s any
			if json.Unmarshal(spec, &s) != nil {
				s = map[string]any{}
			}
			return registry.Object{"metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": s}
		}
		ctx := context.Background()
		nodeSelector := newPodNodeSelector(brand, pods, namespaces,
			config.PodNodeSelectorConfiguration{config.PodNodeSelectorDefaultKey: clusterDefault, "ns": whitelist})
		for _, step := range []struct {
			name            string
			admit, validate func(context.Context, registry.Lookup, registry.Object, registry.Object) error
		}{
			{"PodNodeSelector", nodeSelector.admitPod, nodeSelector.validatePod},
			{"PodTolerationRestriction", ptr.admitPod, ptr.validatePod},
		} {
			for _, update := range []bool{false, true} {
				pod := newPod()
				var old registry.Object
				if update {
					old = newPod()
				}
				if err := step.admit(ctx, l, pod, old); err != nil {
					if statusText(err) == "" {
						t.Fatalf("%s admission refused without a status: %v", step.name, err)
					}
					continue
				}
				before := canonicalJSON(t, pod)
				if err := step.validate(ctx, l, pod, old); err != nil {
					t.Fatalf("%s refuses the pod it admitted (update %v): %v\npod %s", step.name, update, err, before)
				}
				if after := canonicalJSON(t, pod); after != before {
					t.Fatalf("%s validation changed the pod:\n%s\n%s", step.name, before, after)
				}
			}
		}
	})
}

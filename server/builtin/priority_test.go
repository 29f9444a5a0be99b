package builtin

import (
	"context"
	"errors"
	"testing"

	"platd/server/registry"
)

func priorityClass(name string, value int64, policy string, globalDefault bool) registry.Object {
	pc := registry.Object{"metadata": map[string]any{"name": name}, "value": value, "globalDefault": globalDefault}
	if policy != "" {
		pc["preemptionPolicy"] = policy
	}
	return pc
}

// admissionError renders what an admission hook answered: "" for
// nothing, the reason of a denial prefixed "denied: ", else the text.
func admissionError(err error) string {
	var denial *registry.Denial
	switch {
	case err == nil:
		return ""
	case errors.As(err, &denial):
		return "denied: " + denial.Reason
	default:
		return err.Error()
	}
}

func TestPriorityAdmissionOfPods(t *testing.T) {
	t.Parallel()
	pa := priorityAdmission{classes: kindOf(schedulingV1(brand), "PriorityClass")}
	classes := []registry.Object{
		priorityClass("high", 1000, "PreemptLowerPriority", false),
		priorityClass("polite", 5, "Never", false),
		priorityClass("bare", 7, "", false),
		priorityClass("system-cluster-critical", systemCriticalValue, "PreemptLowerPriority", false),
	}
	withDefaults := append([]registry.Object{
		priorityClass("gd-b", 80, "Never", true),
		priorityClass("gd-a", 77, "Never", true),
	}, classes...)
	tests := []struct {
		name    string
		classes []registry.Object
		spec    string
		// want is the spec's priority fields after admission.
		want, err string
	}{
		{"no class, no default", classes, `{}`, `{"preemptionPolicy":"PreemptLowerPriority","priority":0}`, ""},
		{"no class, global default of lowest value", withDefaults, `{}`,
			`{"preemptionPolicy":"Never","priority":77,"priorityClassName":"gd-a"}`, ""},
		{"named class", withDefaults, `{"priorityClassName":"high"}`,
			`{"preemptionPolicy":"PreemptLowerPriority","priority":1000,"priorityClassName":"high"}`, ""},
		{"class that never preempts", classes, `{"priorityClassName":"polite"}`,
			`{"preemptionPolicy":"Never","priority":5,"priorityClassName":"polite"}`, ""},
		{"class without a policy keeps the pod's", classes, `{"priorityClassName":"bare","preemptionPolicy":"Never"}`,
			`{"preemptionPolicy":"Never","priority":7,"priorityClassName":"bare"}`, ""},
		{"system class in any namespace", classes, `{"priorityClassName":"system-cluster-critical"}`,
			`{"preemptionPolicy":"PreemptLowerPriority","priority":2000000000,"priorityClassName":"system-cluster-critical"}`, ""},
		{"same values given", classes, `{"priorityClassName":"high","priority":1000,"preemptionPolicy":"PreemptLowerPriority"}`,
			`{"preemptionPolicy":"PreemptLowerPriority","priority":1000,"priorityClassName":"high"}`, ""},
		{"missing class", classes, `{"priorityClassName":"missing"}`, "",
			"denied: no PriorityClass with name missing was found"},
		{"other priority given", classes, `{"priorityClassName":"high","priority":5}`, "",
			"denied: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"},
		{"priority given without a class", classes, `{"priority":3}`, "",
			"denied: the integer value of priority (3) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"},
		{"other policy given", classes, `{"priorityClassName":"polite","preemptionPolicy":"PreemptLowerPriority"}`, "",
			"denied: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name"},
		{"policy given without a class", classes, `{"preemptionPolicy":"Never"}`, "",
			"denied: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{pa.classes: tt.classes}}
			pod := registry.Object{"metadata": map[string]any{"name": "p"}, "spec": decodeJSON(t, tt.spec)}
			err := pa.admitPod(context.Background(), l, pod, nil)
			if got := admissionError(err); got != tt.err {
				t.Fatalf("error %q, want %q", got, tt.err)
			}
			if err != nil {
				return
			}
			got := map[string]any{}
			for _, f := range []string{"priority", "priorityClassName", "preemptionPolicy"} {
				if v, ok := mapOf(pod["spec"])[f]; ok {
					got[f] = v
				}
			}
			if g := canonicalJSON(t, got); g != tt.want {
				t.Errorf("spec %s, want %s", g, tt.want)
			}
		})
	}
	t.Run("update", func(t *testing.T) {
		old := registry.Object{"spec": decodeJSON(t, `{"priorityClassName":"high","priority":1000,"preemptionPolicy":"Never"}`)}
		for _, tt := range []struct{ name, spec, want string }{
			{"left out", `{"priorityClassName":"high"}`, `{"preemptionPolicy":"Never","priority":1000,"priorityClassName":"high"}`},
			// Validation refuses what changed.
			{"changed", `{"priority":5,"preemptionPolicy":"PreemptLowerPriority"}`, `{"preemptionPolicy":"PreemptLowerPriority","priority":5}`},
		} {
			pod := registry.Object{"spec": decodeJSON(t, tt.spec)}
			// No class is read: the lookup fails every read.
			if err := pa.admitPod(context.Background(), fakeLookup{err: errors.New("read")}, pod, old); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if got := canonicalJSON(t, pod["spec"]); got != tt.want {
				t.Errorf("%s: spec %s, want %s", tt.name, got, tt.want)
			}
		}
	})
	t.Run("lookup failure", func(t *testing.T) {
		l := fakeLookup{err: errors.New("boom")}
		pod := func(spec string) registry.Object { return registry.Object{"spec": decodeJSON(t, spec)} }
		if got := admissionError(pa.admitPod(context.Background(), l, pod(`{}`), nil)); got != "failed to get default priority class: boom" {
			t.Errorf("default: %q", got)
		}
		if got := admissionError(pa.admitPod(context.Background(), l, pod(`{"priorityClassName":"high"}`), nil)); got != "failed to get PriorityClass with name high: boom" {
			t.Errorf("named: %q", got)
		}
	})
}

func TestPriorityAdmissionOfClasses(t *testing.T) {
	t.Parallel()
	pa := priorityAdmission{classes: kindOf(schedulingV1(brand), "PriorityClass")}
	gdA := priorityClass("gd-a", 10, "PreemptLowerPriority", true)
	plain := priorityClass("plain", 20, "PreemptLowerPriority", false)
	tests := []struct {
		name     string
		stored   []registry.Object
		obj, old registry.Object
		want     string
	}{
		{"first default", []registry.Object{plain}, priorityClass("gd-b", 1, "", true), nil, ""},
		{"second default", []registry.Object{gdA, plain}, priorityClass("gd-b", 1, "", true), nil,
			"denied: PriorityClass gd-a is already marked as default. Only one default can exist"},
		{"second default of the same name", []registry.Object{gdA}, priorityClass("gd-a", 1, "", true), nil,
			"denied: PriorityClass gd-a is already marked as default. Only one default can exist"},
		{"not a default", []registry.Object{gdA}, priorityClass("other", 1, "", false), nil, ""},
		{"the default updated", []registry.Object{gdA, plain}, gdA, gdA, ""},
		{"another marked default", []registry.Object{gdA, plain}, priorityClass("plain", 20, "", true), plain,
			"denied: PriorityClass gd-a is already marked as default. Only one default can exist"},
	}
	for _, tt := range tests {
		l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{pa.classes: tt.stored}}
		if got := admissionError(pa.validateClass(context.Background(), l, tt.obj, tt.old)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

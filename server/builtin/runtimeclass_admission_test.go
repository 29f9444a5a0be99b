package builtin

import (
	"context"
	"errors"
	"testing"

	"platd/server/registry"
)

func TestRuntimeClassAdmissionOfPods(t *testing.T) {
	t.Parallel()
	a := runtimeClassAdmission{classes: kindOf(nodeV1(brand), "RuntimeClass")}
	classes := []registry.Object{
		decodeJSON(t, `{"metadata":{"name":"plain"},"handler":"runc"}`),
		decodeJSON(t, `{"metadata":{"name":"gvisor"},"handler":"runsc","overhead":{"podFixed":{"cpu":"250m","memory":"120Mi"}}}`),
		decodeJSON(t, `{"metadata":{"name":"empty-overhead"},"handler":"runsc","overhead":{}}`),
		decodeJSON(t, `{"metadata":{"name":"sandboxed"},"handler":"kata","scheduling":{
			"nodeSelector":{"sandbox":"kata","zone":"a"},
			"tolerations":[{"key":"sandbox","operator":"Exists","effect":"NoSchedule"},{"key":"dedicated","operator":"Equal","value":"kata"}]}}`),
	}
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{a.classes: classes}}
	tests := []struct {
		name, spec string
		// want is the spec after admission; err the admission's answer.
		want, err string
	}{
		{"no class", `{"overhead":{"cpu":"1"}}`, `{"overhead":{"cpu":"1"}}`, ""},
		{"missing class", `{"runtimeClassName":"gvisor2"}`, "", `denied: pod rejected: RuntimeClass "gvisor2" not found`},
		{"class without overhead or scheduling", `{"runtimeClassName":"plain","overhead":{"cpu":"1"}}`,
			`{"overhead":{"cpu":"1"},"runtimeClassName":"plain"}`, ""},
		{"overhead set", `{"runtimeClassName":"gvisor"}`,
			`{"overhead":{"cpu":"250m","memory":"120Mi"},"runtimeClassName":"gvisor"}`, ""},
		{"same overhead otherwise spelled", `{"runtimeClassName":"gvisor","overhead":{"cpu":"0.25","memory":"120Mi"}}`,
			`{"overhead":{"cpu":"250m","memory":"120Mi"},"runtimeClassName":"gvisor"}`, ""},
		{"other overhead", `{"runtimeClassName":"gvisor","overhead":{"cpu":"1","memory":"120Mi"}}`, "",
			"denied: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"},
		{"overhead the class lacks", `{"runtimeClassName":"gvisor","overhead":{"cpu":"250m","memory":"120Mi","pods":"1"}}`, "",
			"denied: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"},
		{"class of empty overhead", `{"runtimeClassName":"empty-overhead","overhead":{}}`, `{"runtimeClassName":"empty-overhead"}`, ""},
		{"scheduling into an empty pod", `{"runtimeClassName":"sandboxed"}`,
			`{"nodeSelector":{"sandbox":"kata","zone":"a"},"runtimeClassName":"sandboxed","tolerations":[` +
				`{"effect":"NoSchedule","key":"sandbox","operator":"Exists"},{"key":"dedicated","operator":"Equal","value":"kata"}]}`, ""},
		{"selectors merged", `{"runtimeClassName":"sandboxed","nodeSelector":{"disk":"ssd","zone":"a"}}`,
			`{"nodeSelector":{"disk":"ssd","sandbox":"kata","zone":"a"},"runtimeClassName":"sandboxed","tolerations":[` +
				`{"effect":"NoSchedule","key":"sandbox","operator":"Exists"},{"key":"dedicated","operator":"Equal","value":"kata"}]}`, ""},
		{"selector conflict", `{"runtimeClassName":"sandboxed","nodeSelector":{"zone":"b"}}`, "",
			"denied: conflict: runtimeClass.scheduling.nodeSelector[zone] = a; pod.spec.nodeSelector[zone] = b"},
		{"tolerations merged, pod's first, covered ones left out", `{"runtimeClassName":"sandboxed","tolerations":[
			{"key":"other","operator":"Exists"},{"key":"sandbox","operator":"Equal","value":"x","effect":"NoSchedule"},{"key":"dedicated","operator":"Equal","value":"kata"}]}`,
			`{"nodeSelector":{"sandbox":"kata","zone":"a"},"runtimeClassName":"sandboxed","tolerations":[` +
				`{"key":"other","operator":"Exists"},{"key":"dedicated","operator":"Equal","value":"kata"},{"effect":"NoSchedule","key":"sandbox","operator":"Exists"}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := registry.Object{"metadata": map[string]any{"name": "p"}, "spec": decodeJSON(t, tt.spec)}
			err := a.admitPod(context.Background(), l, pod, nil)
			if got := admissionError(err); got != tt.err {
				t.Fatalf("error %q, want %q", got, tt.err)
			}
			if err != nil {
				return
			}
			if got := canonicalJSON(t, pod["spec"]); got != tt.want {
				t.Errorf("spec %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("update", func(t *testing.T) {
		// No class is read: the lookup fails every read.
		pod := registry.Object{"spec": decodeJSON(t, `{"runtimeClassName":"gvisor"}`)}
		if err := a.admitPod(context.Background(), fakeLookup{err: errors.New("read")}, pod, pod); err != nil || has(mapOf(pod["spec"]), "overhead") {
			t.Errorf("update: %v %v", err, pod)
		}
	})
	t.Run("lookup failure", func(t *testing.T) {
		pod := registry.Object{"spec": decodeJSON(t, `{"runtimeClassName":"gvisor"}`)}
		if got := admissionError(a.admitPod(context.Background(), fakeLookup{err: errors.New("boom")}, pod, nil)); got != "boom" {
			t.Errorf("lookup failure: %q", got)
		}
	})
}

func TestRuntimeClassValidationOfPods(t *testing.T) {
	t.Parallel()
	a := runtimeClassAdmission{classes: kindOf(nodeV1(brand), "RuntimeClass")}
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{a.classes: {
		decodeJSON(t, `{"metadata":{"name":"plain"},"handler":"runc"}`),
		decodeJSON(t, `{"metadata":{"name":"gvisor"},"handler":"runsc","overhead":{"podFixed":{"cpu":"250m"}}}`),
	}}}
	const mismatch = "denied: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
	const noClass = "denied: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
	for _, tt := range []struct{ name, spec, err string }{
		{"no class, no overhead", `{}`, ""},
		{"no class, overhead", `{"overhead":{"cpu":"1"}}`, noClass},
		{"class without overhead, overhead", `{"runtimeClassName":"plain","overhead":{"cpu":"1"}}`, noClass},
		{"class without overhead, none", `{"runtimeClassName":"plain"}`, ""},
		{"matching overhead", `{"runtimeClassName":"gvisor","overhead":{"cpu":"0.25"}}`, ""},
		{"overhead left out", `{"runtimeClassName":"gvisor"}`, mismatch},
		{"other overhead", `{"runtimeClassName":"gvisor","overhead":{"cpu":"1"}}`, mismatch},
		{"missing class", `{"runtimeClassName":"gone"}`, `denied: pod rejected: RuntimeClass "gone" not found`},
	} {
		pod := registry.Object{"spec": decodeJSON(t, tt.spec)}
		if got := admissionError(a.validatePod(context.Background(), l, pod, nil)); got != tt.err {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.err)
		}
	}
	// Upstream's plugin checks creates only.
	pod := registry.Object{"spec": decodeJSON(t, `{"overhead":{"cpu":"1"}}`)}
	if err := a.validatePod(context.Background(), l, pod, pod); err != nil {
		t.Errorf("update: %v", err)
	}
}

func TestMergeTolerations(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, first, second, want string }{
		{"both empty", `[]`, `[]`, `null`},
		{"disjoint, first's first", `[{"key":"a","operator":"Exists"}]`, `[{"key":"b","operator":"Exists"}]`,
			`[{"key":"a","operator":"Exists"},{"key":"b","operator":"Exists"}]`},
		{"equal ones kept once", `[{"key":"a","operator":"Equal","value":"v"}]`, `[{"key":"a","operator":"Equal","value":"v"}]`,
			`[{"key":"a","operator":"Equal","value":"v"}]`},
		{"Exists covers Equal of the key", `[{"key":"a","operator":"Equal","value":"v","effect":"NoSchedule"}]`, `[{"key":"a","operator":"Exists"}]`,
			`[{"key":"a","operator":"Exists"}]`},
		{"empty key with Exists covers all", `[{"operator":"Exists"}]`, `[{"key":"a","operator":"Exists","effect":"NoExecute"}]`,
			`[{"operator":"Exists"}]`},
		{"other effect not covered", `[{"key":"a","operator":"Exists","effect":"NoSchedule"}]`, `[{"key":"a","operator":"Exists","effect":"NoExecute"}]`,
			`[{"effect":"NoSchedule","key":"a","operator":"Exists"},{"effect":"NoExecute","key":"a","operator":"Exists"}]`},
		{"longer stay covers shorter", `[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]`,
			`[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]`,
			`[{"effect":"NoExecute","key":"a","operator":"Exists","tolerationSeconds":300}]`},
		{"bounded stay does not cover unbounded", `[{"key":"a","operator":"Exists","effect":"NoExecute"}]`,
			`[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]`,
			`[{"effect":"NoExecute","key":"a","operator":"Exists"}]`},
		// An empty operator means Equal: it covers an Equal, and only an
		// Equal covers a toleration spelled so.
		{"empty operator covers Equal", `[{"key":"a","value":"v"}]`, `[{"key":"a","operator":"Equal","value":"v"}]`,
			`[{"key":"a","value":"v"}]`},
		{"Equal does not cover empty operator", `[{"key":"a","operator":"Equal","value":"v"}]`, `[{"key":"a","value":"v"}]`,
			`[{"key":"a","value":"v"}]`},
		{"Equal of another value not covered", `[{"key":"a","operator":"Equal","value":"v"}]`, `[{"key":"a","operator":"Equal","value":"w"}]`,
			`[{"key":"a","operator":"Equal","value":"v"},{"key":"a","operator":"Equal","value":"w"}]`},
	}
	for _, tt := range tests {
		list := func(s string) []map[string]any { return mapsOf(decodeJSON(t, `{"l":`+s+`}`)["l"]) }
		first, second := list(tt.first), list(tt.second)
		if got := canonicalJSON(t, mergeTolerations(first, second)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

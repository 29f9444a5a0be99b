package builtin

import (
	"context"
	"testing"

	"platd/server/registry"
)

func TestExtendedResourceToleration(t *testing.T) {
	t.Parallel()
	r := newPodRules(brand)
	native := brand.Label("native")
	// gpu and fpga are the tolerations of the extended resources
	// example.com/gpu and example.com/fpga.
	const (
		gpu  = `{"effect":"NoSchedule","key":"example.com/gpu","operator":"Exists"}`
		fpga = `{"effect":"NoSchedule","key":"example.com/fpga","operator":"Exists"}`
		c    = `{"name":"c","image":"x","resources":{"requests":{"cpu":"1","example.com/gpu":"1"}}}`
	)
	tests := []struct {
		name, spec string
		// want is the spec's tolerations after admission, "" for none.
		want string
	}{
		{"no extended resource", `{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1","memory":"1Gi","hugepages-2Mi":"2Mi"}}}]}`, ``},
		{"native and quota names are no extended resources",
			`{"containers":[{"name":"c","image":"x","resources":{"requests":{"` + native + `":"1","requests.example.com/gpu":"1"}}}]}`, ``},
		{"limits alone are not read", `{"containers":[{"name":"c","image":"x","resources":{"limits":{"example.com/gpu":"1"}}}]}`, ``},
		{"ephemeral containers are not read",
			`{"containers":[{"name":"c","image":"x"}],"ephemeralContainers":[{"name":"e","image":"x","resources":{"requests":{"example.com/gpu":"1"}}}]}`, ``},
		{"containers and init containers, in the order of names, after the pod's",
			`{"containers":[` + c + `,` + c + `],"initContainers":[{"name":"i","image":"x","resources":{"requests":{"example.com/fpga":"1"}}}],
			"tolerations":[{"key":"other","operator":"Exists"}]}`,
			`[{"key":"other","operator":"Exists"},` + fpga + `,` + gpu + `]`},
		{"the same toleration is not added twice", `{"containers":[` + c + `],"tolerations":[` + gpu + `]}`, `[` + gpu + `]`},
		{"one of other operator or effect is kept",
			`{"containers":[` + c + `],"tolerations":[{"key":"example.com/gpu","operator":"Equal","effect":"NoSchedule"},{"key":"example.com/gpu","operator":"Exists","effect":"NoExecute"}]}`,
			`[{"effect":"NoSchedule","key":"example.com/gpu","operator":"Equal"},{"effect":"NoExecute","key":"example.com/gpu","operator":"Exists"},` + gpu + `]`},
		{"matching ones with a time bound are replaced in place",
			`{"containers":[` + c + `],"tolerations":[{"key":"example.com/gpu","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5},{"key":"a","operator":"Exists"},
			{"key":"example.com/gpu","operator":"Exists","effect":"NoSchedule","tolerationSeconds":7}]}`,
			`[` + gpu + `,{"key":"a","operator":"Exists"},` + gpu + `]`},
		{"an equal one leaves the others matching as they were",
			`{"containers":[` + c + `],"tolerations":[{"key":"example.com/gpu","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5},` + gpu + `]}`,
			`[{"effect":"NoSchedule","key":"example.com/gpu","operator":"Exists","tolerationSeconds":5},` + gpu + `]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, update := range []bool{false, true} {
				pod := registry.Object{"metadata": map[string]any{"name": "p"}, "spec": decodeJSON(t, tt.spec)}
				var old registry.Object
				if update {
					old = registry.Object{"spec": decodeJSON(t, tt.spec)}
				}
				if err := r.admitExtendedResourceTolerations(context.Background(), nil, pod, old); err != nil {
					t.Fatal(err)
				}
				got := ""
				if tol, ok := mapOf(pod["spec"])["tolerations"]; ok {
					got = canonicalJSON(t, tol)
				}
				if got != tt.want {
					t.Errorf("update %v: tolerations %s\nwant %s", update, got, tt.want)
				}
			}
		})
	}
}

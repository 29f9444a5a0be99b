package builtin

import (
	"context"
	"errors"
	"testing"

	"platd/config"
	"platd/server/registry"
)

func TestPodTolerationRestrictionAdmission(t *testing.T) {
	t.Parallel()
	namespaces := kindOf(coreV1(brand), "Namespace")
	defaultsKey := "scheduler.alpha." + brand.Label("defaultTolerations")
	whitelistKey := "scheduler.alpha." + brand.Label("tolerationsWhitelist")
	ns := func(name string, annotations ...string) registry.Object {
		a := map[string]any{}
		for i := 0; i+1 < len(annotations); i += 2 {
			a[annotations[i]] = annotations[i+1]
		}
		return registry.Object{"metadata": map[string]any{"name": name, "annotations": a}}
	}
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{namespaces: {
		ns("plain"),
		ns("defaults", defaultsKey, `[{"key":"ns","operator":"Equal","value":"v","effect":"NoSchedule"}]`),
		// Upstream decodes the annotations with Go's decoder: names
		// match without regard to case.
		ns("capitals", defaultsKey, `[{"Key":"ns","Operator":"Exists"}]`),
		ns("no-defaults", defaultsKey, ""),
		ns("listed", whitelistKey, `[{"key":"ns","operator":"Exists"},{"key":"gpu","operator":"Equal","value":"yes"}]`),
		ns("anything", whitelistKey, ""),
		ns("broken", defaultsKey, `[{"key":`),
		ns("mistyped", defaultsKey, `[{"operator":1}]`),
		ns("object", defaultsKey, `{}`),
		ns("seconds", defaultsKey, `[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":"60"}]`),
	}}}
	seconds := int64(60)
	cluster := config.PodTolerationRestrictionConfiguration{
		Default:   []config.Toleration{{Key: "cluster", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: &seconds}},
		Whitelist: []config.Toleration{{Key: "cluster", Operator: "Exists"}, {Key: "ns", Operator: "Exists"}},
	}
	const (
		bestEffort = `{"containers":[{"name":"c"}]`
		burstable  = `{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"1"}}}]`
		guaranteed = `{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"1"}}}]`
		clusterTol = `{"effect":"NoExecute","key":"cluster","operator":"Exists","tolerationSeconds":60}`
		nsTol      = `{"effect":"NoSchedule","key":"ns","operator":"Equal","value":"v"}`
	)
	memory := `{"effect":"NoSchedule","key":"node.` + brand.Label("memory-pressure") + `","operator":"Exists"}`
	tests := []struct {
		name, ns string
		// spec is the pod's spec less its closing brace; status its
		// status, if any.
		spec, status string
		config       config.PodTolerationRestrictionConfiguration
		update       bool
		// want is the tolerations after admission; err the client's
		// answer.
		want, err string
	}{
		{name: "nothing to add", ns: "plain", spec: bestEffort, want: `null`},
		{name: "cluster default", ns: "plain", spec: bestEffort, config: cluster, want: `[` + clusterTol + `]`},
		{name: "namespace default instead", ns: "defaults", spec: bestEffort, config: cluster, want: `[` + nsTol + `]`},
		{name: "annotation names in capitals", ns: "capitals", spec: bestEffort, want: `[{"key":"ns","operator":"Exists"}]`},
		{name: "empty annotation: no default", ns: "no-defaults", spec: bestEffort, config: cluster, want: `null`},
		{name: "pod's first, equal kept once", ns: "defaults", spec: bestEffort + `,"tolerations":[{"key":"mine","operator":"Exists"},` + nsTol + `]`,
			want: `[{"key":"mine","operator":"Exists"},` + nsTol + `]`},
		// Upstream no longer refuses a pod whose toleration of a key
		// differs from the namespace's: both are kept.
		{name: "differing values both kept", ns: "defaults", spec: bestEffort + `,"tolerations":[{"key":"ns","operator":"Equal","value":"w","effect":"NoSchedule"}]`,
			want: `[{"effect":"NoSchedule","key":"ns","operator":"Equal","value":"w"},` + nsTol + `]`},
		{name: "covering toleration leaves the default out", ns: "defaults", spec: bestEffort + `,"tolerations":[{"key":"ns","operator":"Exists"}]`,
			want: `[{"key":"ns","operator":"Exists"}]`},
		{name: "burstable tolerates memory pressure", ns: "defaults", spec: burstable, want: `[` + nsTol + `,` + memory + `]`},
		{name: "guaranteed tolerates memory pressure", ns: "plain", spec: guaranteed, want: `[` + memory + `]`},
		{name: "a class in the status is believed", ns: "plain", spec: burstable, status: `{"qosClass":"BestEffort"}`, want: `null`},
		{name: "toleration of every taint covers memory pressure", ns: "plain", spec: burstable + `,"tolerations":[{"operator":"Exists"}]`,
			want: `[{"operator":"Exists"}]`},
		{name: "update: no defaults, memory pressure", ns: "defaults", spec: burstable, update: true, want: `[` + memory + `]`},
		{name: "namespace whitelist kept to", ns: "listed", spec: bestEffort + `,"tolerations":[{"key":"gpu","operator":"Equal","value":"yes"}]`,
			want: `[{"key":"gpu","operator":"Equal","value":"yes"}]`},
		{name: "cluster default outside the namespace whitelist", ns: "listed", spec: bestEffort, config: cluster,
			err: "500 : pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"},
		{name: "namespace whitelist left", ns: "listed", spec: bestEffort + `,"tolerations":[{"key":"gpu","operator":"Exists"}]`,
			err: "500 : pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"},
		{name: "memory pressure outside the namespace whitelist", ns: "listed", spec: burstable,
			err: "500 : pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"},
		{name: "cluster default within the cluster whitelist", ns: "plain", spec: bestEffort, config: cluster, want: `[` + clusterTol + `]`},
		{name: "namespace default outside the cluster whitelist", ns: "defaults", spec: burstable, config: cluster,
			err: "500 : pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist"},
		{name: "empty whitelist annotation: anything", ns: "anything", spec: burstable + `,"tolerations":[{"key":"x","operator":"Exists"}]`, config: cluster,
			want: `[{"key":"x","operator":"Exists"},` + clusterTol + `,` + memory + `]`},
		{name: "malformed annotation", ns: "broken", spec: bestEffort, err: "500 : unexpected end of JSON input"},
		{name: "mistyped annotation", ns: "mistyped", spec: bestEffort,
			err: "500 : json: cannot unmarshal number into Go struct field Toleration.operator of type v1.TolerationOperator"},
		{name: "annotation not a list", ns: "object", spec: bestEffort, err: "500 : json: cannot unmarshal object into Go value of type []v1.Toleration"},
		{name: "annotation seconds not a number", ns: "seconds", spec: bestEffort,
			err: "500 : json: cannot unmarshal string into Go struct field Toleration.tolerationSeconds of type int64"},
		{name: "missing namespace", ns: "gone", spec: bestEffort, err: `404 NotFound: namespaces "gone" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPodTolerationRestriction(brand, namespaces, tt.config)
			pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": tt.ns}, "spec": decodeJSON(t, tt.spec+"}")}
			if tt.status != "" {
				pod["status"] = decodeJSON(t, tt.status)
			}
			var old registry.Object
			if tt.update {
				old = pod
			}
			err := p.admitPod(context.Background(), l, pod, old)
			if got := statusText(err); got != tt.err {
				t.Fatalf("error %q\n want %q", got, tt.err)
			}
			if err != nil {
				return
			}
			if got := canonicalJSON(t, mapOf(pod["spec"])["tolerations"]); got != tt.want {
				t.Errorf("tolerations\n got  %s\n want %s", got, tt.want)
			}
			if err := p.validatePod(context.Background(), l, pod, old); err != nil {
				t.Errorf("validation of the admitted pod: %v", err)
			}
		})
	}
	t.Run("configured tolerations are not shared", func(t *testing.T) {
		p := newPodTolerationRestriction(brand, namespaces, cluster)
		pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": "plain"}, "spec": decodeJSON(t, bestEffort+"}")}
		if err := p.admitPod(context.Background(), l, pod, nil); err != nil {
			t.Fatal(err)
		}
		mapsOf(mapOf(pod["spec"])["tolerations"])[0]["key"] = "changed"
		if p.defaults[0]["key"] != "cluster" {
			t.Errorf("admitting a pod changed the configured default: %v", p.defaults)
		}
	})
	t.Run("failed read", func(t *testing.T) {
		p := newPodTolerationRestriction(brand, namespaces, cluster)
		pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": "plain"}, "spec": decodeJSON(t, bestEffort+"}")}
		if got := statusText(p.admitPod(context.Background(), fakeLookup{err: errors.New("read")}, pod, nil)); got != "500 InternalError: Internal error occurred: read" {
			t.Errorf("failed read: %q", got)
		}
	})
}

func TestPodTolerationRestrictionValidation(t *testing.T) {
	t.Parallel()
	namespaces := kindOf(coreV1(brand), "Namespace")
	whitelistKey := "scheduler.alpha." + brand.Label("tolerationsWhitelist")
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{namespaces: {
		{"metadata": map[string]any{"name": "listed", "annotations": map[string]any{whitelistKey: `[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]`}}},
	}}}
	p := newPodTolerationRestriction(brand, namespaces, config.PodTolerationRestrictionConfiguration{})
	const refused = "500 : pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"
	for _, tt := range []struct {
		name, tolerations, err string
		update                 bool
	}{
		{name: "no tolerations", tolerations: `[]`},
		{name: "shorter stay covered", tolerations: `[{"key":"a","operator":"Equal","value":"x","effect":"NoExecute","tolerationSeconds":60}]`},
		{name: "longer stay not", tolerations: `[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":600}]`, err: refused},
		{name: "unbounded stay not", tolerations: `[{"key":"a","operator":"Exists","effect":"NoExecute"}]`, err: refused},
		{name: "updates checked too", tolerations: `[{"key":"b","operator":"Exists"}]`, update: true, err: refused},
	} {
		pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": "listed"}, "spec": map[string]any{"tolerations": decodeJSON(t, `{"t":`+tt.tolerations+`}`)["t"]}}
		var old registry.Object
		if tt.update {
			old = pod
		}
		if got := statusText(p.validatePod(context.Background(), l, pod, old)); got != tt.err {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.err)
		}
	}
}

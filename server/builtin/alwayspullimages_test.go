package builtin

import (
	"context"
	"errors"
	"slices"
	"testing"

	"platd/server/registry"
)

func TestAlwaysPullImages(t *testing.T) {
	t.Parallel()
	// spec of three containers, one of each kind, with their images and
	// policies.
	spec := func(initImage, image, ephemeralImage, policy string) string {
		c := func(name, img string) string {
			s := `{"name":"` + name + `","image":"` + img + `"`
			if policy != "" {
				s += `,"imagePullPolicy":"` + policy + `"`
			}
			return s + `}`
		}
		return `{"initContainers":[` + c("i", initImage) + `],"containers":[` + c("c", image) + `],"ephemeralContainers":[` + c("e", ephemeralImage) + `]}`
	}
	tests := []struct {
		name, spec, old string
		// want is the spec after the mutating step; denied what the
		// validating step refuses of the spec as written.
		want   string
		denied []string
	}{
		{name: "create: every kind of container pulls always",
			spec: spec("a", "b", "c", "IfNotPresent"), want: spec("a", "b", "c", "Always"),
			denied: []string{
				`spec.initContainers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"`,
				`spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"`,
				`spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"`,
			}},
		{name: "create without policies", spec: spec("a", "b", "c", ""), want: spec("a", "b", "c", "Always"),
			denied: []string{
				`spec.initContainers[0].imagePullPolicy: Unsupported value: "": supported values: "Always"`,
				`spec.containers[0].imagePullPolicy: Unsupported value: "": supported values: "Always"`,
				`spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: "": supported values: "Always"`,
			}},
		{name: "create pulling always already", spec: spec("a", "b", "c", "Always"), want: spec("a", "b", "c", "Always")},
		{name: "update of the same images left alone",
			old: spec("a", "b", "c", "Never"), spec: spec("a", "b", "c", "Never"), want: spec("a", "b", "c", "Never")},
		{name: "update moving images among containers left alone",
			old: spec("a", "b", "c", "Never"), spec: spec("c", "a", "b", "Never"), want: spec("c", "a", "b", "Never")},
		{name: "update to a new image: all containers pull always",
			old: spec("a", "b", "c", "Never"), spec: spec("a", "new", "c", "Never"), want: spec("a", "new", "c", "Always"),
			denied: []string{
				`spec.initContainers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"`,
				`spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"`,
				`spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old registry.Object
			if tt.old != "" {
				old = registry.Object{"spec": decodeJSON(t, tt.old)}
			}
			err := validateAlwaysPull(context.Background(), nil, registry.Object{"spec": decodeJSON(t, tt.spec)}, old)
			var denials *registry.Denials
			if errors.As(err, &denials) {
				if !slices.Equal(denials.Reasons, tt.denied) {
					t.Errorf("refused for\n %q\nwant\n %q", denials.Reasons, tt.denied)
				}
			} else if err != nil || tt.denied != nil {
				t.Errorf("validation: %v, want refusals %q", err, tt.denied)
			}

			pod := registry.Object{"spec": decodeJSON(t, tt.spec)}
			if err := admitAlwaysPull(context.Background(), nil, pod, old); err != nil {
				t.Fatal(err)
			}
			if got, want := canonicalJSON(t, pod["spec"]), canonicalJSON(t, decodeJSON(t, tt.want)); got != want {
				t.Errorf("spec %s\nwant %s", got, want)
			}
			// What the mutating step leaves passes the validating one.
			if err := validateAlwaysPull(context.Background(), nil, pod, old); err != nil {
				t.Errorf("admitted pod refused: %v", err)
			}
		})
	}
}

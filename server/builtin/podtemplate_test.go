package builtin

import (
	"testing"

	"platd/server/validation"
)

func TestPodTemplateCreate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "PodTemplate")
	obj := decodeJSON(t, `{"metadata":{"name":"t","namespace":"ns"},"template":{"metadata":{"labels":{"app":"web"}},
		"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}}}]}}}`)
	checkStrings(t, "create", runCreate(t, d, obj), nil)
	// Only the PodSpec defaults: no account, tolerations, priority, service
	// links, requests or host ports, which pods get when they are made.
	want := `{"containers":[{"name":"c","image":"nginx:1","imagePullPolicy":"IfNotPresent",` + ctrDefaults + `,
		"ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"1"}}}],"hostNetwork":true,` + specDefaults + `}`
	if got, w := canonicalJSON(t, mapOf(obj["template"])["spec"]), canonicalJSON(t, decodeJSON(t, want)); got != w {
		t.Errorf("template spec:\n got  %s\n want %s", got, w)
	}
	if g := mapOf(obj["metadata"])["generation"]; g != int64(1) {
		t.Errorf("generation %v", g)
	}
}

func TestPodTemplateValidate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "PodTemplate")
	tests := []struct {
		name, obj string
		want      []string
	}{
		{"no template", `{"metadata":{"name":"t"}}`, []string{"template.spec.containers: Required value"}},
		{"labels and spec", `{"metadata":{"name":"t"},"template":{"metadata":{"labels":{"a b":"c"},"annotations":{"x/y/z":"v"}},
			"spec":{"containers":[{"name":"c","image":"x","ports":[{"containerPort":0}]}],"ephemeralContainers":[{"name":"e","image":"x"}]}}}`, cat(
			msgs("template.labels", "a b", validation.IsQualifiedName),
			msgs("template.annotations", "x/y/z", validation.IsQualifiedName),
			"template.spec.containers[0].ports[0].containerPort: Required value",
			"template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template",
		)},
		{"image whitespace is a pod rule", `{"metadata":{"name":"t"},"template":{"spec":{"containers":[{"name":"c","image":" x"}]}}}`, nil},
	}
	for _, tt := range tests {
		checkStrings(t, tt.name, runCreate(t, d, decodeJSON(t, tt.obj)), tt.want)
	}
}

func TestPodTemplateUpdateGeneration(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "PodTemplate")
	old := decodeJSON(t, `{"metadata":{"name":"t","namespace":"ns"},"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}`)
	checkStrings(t, "create", runCreate(t, d, old), nil)

	same := deepCopyMap(old)
	mapOf(same["metadata"])["labels"] = map[string]any{"a": "b"}
	checkStrings(t, "labels only", runUpdate(t, d, same, old, ""), nil)
	if g := mapOf(same["metadata"])["generation"]; g != int64(1) {
		t.Errorf("metadata change: generation %v", g)
	}

	changed := deepCopyMap(old)
	mapsOf(mapOf(mapOf(changed["template"])["spec"])["containers"])[0]["image"] = "y"
	checkStrings(t, "image", runUpdate(t, d, changed, old, ""), nil)
	if g := mapOf(changed["metadata"])["generation"]; g != int64(2) {
		t.Errorf("template change: generation %v", g)
	}

	bad := deepCopyMap(old)
	mapOf(mapOf(bad["template"])["spec"])["restartPolicy"] = "Sometimes"
	checkStrings(t, "invalid", runUpdate(t, d, bad, old, ""), []string{
		`template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
	})
}

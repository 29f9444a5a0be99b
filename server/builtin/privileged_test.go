package builtin

import (
	"strings"
	"testing"
)

// TestAllowPrivileged: with --allow-privileged=false every container of
// a pod or a pod template asking for privileged mode is refused with
// upstream's error; with true (platd's default) it is admitted.
func TestAllowPrivileged(t *testing.T) {
	t.Parallel()
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	const priv = `"securityContext":{"privileged":true}`
	ctr := `{"name":"c","image":"x",` + priv + `}`
	plain := `{"name":"c","image":"x"}`
	tmpl := func(spec string) string {
		return `{"metadata":{"labels":{"a":"b"}},"spec":` + spec + `}`
	}
	const refused = "securityContext.privileged: Forbidden: disallowed by cluster policy"
	for _, c := range []struct {
		kind, obj, want string
	}{
		{"Pod", `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[` + ctr + `]}}`,
			"spec.containers[0]." + refused},
		{"Pod", `{"metadata":{"name":"p","namespace":"ns"},"spec":{"initContainers":[{"name":"i","image":"x",` + priv + `}],"containers":[` + plain + `]}}`,
			"spec.initContainers[0]." + refused},
		{"PodTemplate", `{"metadata":{"name":"t","namespace":"ns"},"template":` + tmpl(`{"containers":[`+ctr+`]}`) + `}`,
			"template.spec.containers[0]." + refused},
		{"ReplicationController", `{"metadata":{"name":"r","namespace":"ns"},"spec":{"selector":{"a":"b"},"template":` + tmpl(`{"containers":[`+ctr+`]}`) + `}}`,
			"spec.template.spec.containers[0]." + refused},
		{"Deployment", `{"metadata":{"name":"d","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":` + tmpl(`{"containers":[`+ctr+`]}`) + `}}`,
			"spec.template.spec.containers[0]." + refused},
		{"DaemonSet", `{"metadata":{"name":"d","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":` + tmpl(`{"containers":[`+ctr+`]}`) + `}}`,
			"spec.template.spec.containers[0]." + refused},
		{"ReplicaSet", `{"metadata":{"name":"d","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":` + tmpl(`{"containers":[`+ctr+`]}`) + `}}`,
			"spec.template.spec.containers[0]." + refused},
		// Upstream checks no more of a stateful set's template than its
		// labels and annotations.
		{"StatefulSet", `{"metadata":{"name":"d","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":` + tmpl(`{"containers":[`+ctr+`]}`) + `}}`, ""},
		{"Job", `{"metadata":{"name":"j","namespace":"ns","uid":"u"},"spec":{"template":` + tmpl(`{"restartPolicy":"Never","containers":[`+ctr+`]}`) + `}}`,
			"spec.template.spec.containers[0]." + refused},
		{"CronJob", `{"metadata":{"name":"j","namespace":"ns"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":` + tmpl(`{"restartPolicy":"Never","containers":[`+ctr+`]}`) + `}}}}`,
			"spec.jobTemplate.spec.template.spec.containers[0]." + refused},
	} {
		for _, forbid := range []bool{false, true} {
			d := kindOf(all(brand, DefaultServiceRanges(), Services{ForbidPrivileged: forbid}), c.kind)
			d.Schema = cat.ByGVK(d.Group, d.Version, d.Kind)
			_, errs := create(d, decodeJSON(t, c.obj))
			var want []string
			if forbid && c.want != "" {
				want = []string{c.want}
			}
			if got := errStrings(errs); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s, privileged forbidden %v: %q, want %q", c.kind, forbid, got, want)
			}
		}
	}

	// Ephemeral containers are added through their subresource.
	for _, forbid := range []bool{false, true} {
		d := kindOf(all(brand, DefaultServiceRanges(), Services{ForbidPrivileged: forbid}), "Pod")
		d.Schema = cat.ByGVK(d.Group, d.Version, d.Kind)
		old := storedPod(t, brand, minimalPod)
		obj := deepCopyMap(old)
		mapOf(obj["spec"])["ephemeralContainers"] = []any{decodeJSON(t, `{"name":"e","image":"x","imagePullPolicy":"Always","terminationMessagePolicy":"File",`+priv+`}`)}
		var want []string
		if forbid {
			want = []string{"spec.ephemeralContainers[0]." + refused}
		}
		if got := runUpdate(t, d, obj, old, "ephemeralcontainers"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("ephemeral container, privileged forbidden %v: %q, want %q", forbid, got, want)
		}
	}
}

package builtin

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"platd/server/apierr"
)

// TestFieldPath: a path reads as upstream prints it however it was made,
// however deep (past the steps it holds unjoined), and a path a step was
// added to is left as it was.
func TestFieldPath(t *testing.T) {
	t.Parallel()
	deep, deepText := pathOf("spec"), "spec"
	for i := range 10 {
		deep = deep.child("m").index(i)
		deepText += ".m[" + strconv.Itoa(i) + "]"
	}
	tests := []struct {
		p    fieldPath
		want string
	}{
		{pathOf(""), ""},
		{pathOf("").child("spec"), "spec"},
		{pathOf("").index(2), "[2]"},
		{pathOf("").key("k"), "[k]"},
		{pathOf("metadata.labels").key("a/b"), "metadata.labels[a/b]"},
		{pathOf("spec").child("containers").index(0).child("ports").index(1).child("name"), "spec.containers[0].ports[1].name"},
		{pathOf("spec").child("lifecycle", "postStart"), "spec.lifecycle.postStart"},
		{pathOf("").child("a", "b", "c"), "a.b.c"},
		{pathOf("spec").child("volumes").index(2).child("projected", "sources").index(1).child("configMap", "items").index(0).child("path"),
			"spec.volumes[2].projected.sources[1].configMap.items[0].path"},
		{pathOf("spec").index(-1), "spec[-1]"},
		{deep, deepText},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("path %q, want %q", got, tt.want)
		}
	}
	// Paths share nothing: extending one in two ways, at and past the
	// steps held unjoined, leaves each as it was.
	base := pathOf("spec")
	for range pathSteps - 1 {
		base = base.child("x")
	}
	var got []string
	for _, p := range []fieldPath{base, base.child("a"), base.child("b"), base.child("a").child("c"), base.child("b").index(1), base} {
		got = append(got, p.String())
	}
	x := "spec" + strings.Repeat(".x", pathSteps-1)
	if want := []string{x, x + ".a", x + ".b", x + ".a.c", x + ".b[1]", x}; !slices.Equal(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
}

// TestPodSpecErrorPaths: errors deep in a pod's spec name their fields
// in full.
func TestPodSpecErrorPaths(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, spec, want string }{
		{"container port", `{"containers":[{"name":"c","image":"x"},{"name":"d","image":"x","ports":[{"containerPort":1},{"containerPort":0}]}]}`,
			"spec.containers[1].ports[1].containerPort: Required value"},
		{"probe port", `{"containers":[{"name":"c","image":"x","livenessProbe":{"httpGet":{"port":0}}}]}`,
			"spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"hook", `{"containers":[{"name":"c","image":"x","lifecycle":{"postStart":{}}}]}`,
			"spec.containers[0].lifecycle.postStart: Required value: must specify a handler type"},
		{"projected item path", `{"containers":[{"name":"c","image":"x"}],"volumes":[{"name":"v","projected":{"sources":[{"configMap":{"name":"m","items":[{"key":"k","path":"../x"}]}}]}}]}`,
			"spec.volumes[0].projected.sources[0].configMap.items[0].path: Invalid value: \"../x\": must not contain '..'"},
		{"env value from", `{"containers":[{"name":"c","image":"x","env":[{"name":"A","value":"v"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"spec.bogus"}}}]}]}`,
			"spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: Invalid value: \"spec.bogus\": error converting fieldPath: field label not supported: spec.bogus"},
		{"resource request", `{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"-1"}}}]}`,
			"spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"},
		{"node affinity", `{"containers":[{"name":"c","image":"x"}],"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In"}]}]}}}}`,
			"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
		{"resource name", `{"containers":[{"name":"c","image":"x","resources":{"limits":{"bogus":"1"}}}]}`,
			"spec.containers[0].resources.limits[bogus]: Invalid value: \"bogus\": must be a standard resource type or fully qualified"},
		{"pod affinity namespace selector", `{"containers":[{"name":"c","image":"x"}],"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"k","namespaceSelector":{"matchLabels":{"-":"v"}}}]}}}`,
			"spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector.matchLabels: Invalid value: \"-\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
		{"topology spread selector", `{"containers":[{"name":"c","image":"x"}],"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"k","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]}}]}`,
			"spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: Invalid value: \"Bogus\": not a valid selector operator"},
	}
	for _, tt := range tests {
		got := specErrs(t, tt.spec, podSpecOptions{})
		found := false
		for _, e := range got {
			if e == tt.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: errors %q, want one %q", tt.name, got, tt.want)
		}
	}
}

// TestValidNameChecksAllocate: checking a valid name at a path allocates
// nothing (neither the path's text nor the boxed value is made), and an
// invalid one is reported at the path's full text.
func TestValidNameChecksAllocate(t *testing.T) {
	p := pathOf("spec").child("containers").index(3).child("name")
	checks := []struct {
		name  string
		check func(string, fieldPath) apierr.FieldErrors
	}{{"dnsLabel", dnsLabel}, {"dnsSubdomain", dnsSubdomain}, {"qualifiedName", qualifiedName}}
	for _, c := range checks {
		var errs apierr.FieldErrors
		if n := testing.AllocsPerRun(100, func() { errs = c.check("valid", p) }); n != 0 || len(errs) != 0 {
			t.Errorf("%s of a valid name: %v allocations, errors %v", c.name, n, errs)
		}
		errs = c.check("Not Valid", p)
		if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), `spec.containers[3].name: Invalid value: "Not Valid": `) {
			t.Errorf("%s of an invalid name: %v", c.name, errs)
		}
	}
}

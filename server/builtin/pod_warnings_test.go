package builtin

import (
	"slices"
	"strings"
	"testing"

	"platd/config"
	"platd/server/registry"
)

func TestPodWarnings(t *testing.T) {
	t.Parallel()
	b := config.Brands["plat"]
	r := newPodRules(b)
	d := b.LongDomain
	pod := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"scheduler.alpha." + d + "/critical-pod": ""}},
		"spec": map[string]any{
			"nodeSelector": map[string]any{"beta." + d + "/os": "linux", "failure-domain.beta." + d + "/zone": "a", "disk": "ssd"},
			"volumes": []any{
				map[string]any{"name": "a", "emptyDir": map[string]any{}},
				map[string]any{"name": "b", "gitRepo": map[string]any{"repository": "r"}},
				map[string]any{"name": "c", "storageos": map[string]any{"volumeName": "v"}},
			},
			"hostAliases":      []any{map[string]any{"ip": "10.0.0.1"}, map[string]any{"ip": "10.0.0.1"}},
			"imagePullSecrets": []any{map[string]any{"name": "s"}, map[string]any{"name": "s"}, map[string]any{}},
			"initContainers": []any{map[string]any{"name": "i", "env": []any{
				map[string]any{"name": "X", "value": "1"}, map[string]any{"name": "X", "value": "$(X)-2"},
			}}},
			"containers": []any{map[string]any{"name": "c", "env": []any{
				map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "1"},
				map[string]any{"name": "A", "value": "2"}, map[string]any{"name": "B", "valueFrom": map[string]any{}},
				map[string]any{"name": "A", "value": "$(A)"},
			}}},
			"terminationGracePeriodSeconds": int64(-5),
		},
	}
	want := strings.ReplaceAll(`spec.nodeSelector[beta.D/os]: deprecated since v1.14; use "D/os" instead
spec.nodeSelector[failure-domain.beta.D/zone]: deprecated since v1.17; use "topology.D/zone" instead
metadata.annotations[scheduler.alpha.D/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead
spec.volumes[1].gitRepo: deprecated in v1.11
spec.volumes[2].storageOS: deprecated in v1.22, non-functional in v1.25+
spec.hostAliases[1].ip: duplicate ip "10.0.0.1"
spec.imagePullSecrets[1].name: duplicate name "s"
spec.imagePullSecrets[2].name: invalid empty name ""
spec.containers[0].env[2]: hides previous definition of "A", which may be dropped when using apply
spec.containers[0].env[3]: hides previous definition of "B", which may be dropped when using apply
spec.containers[0].env[4]: hides previous definition of "A", which may be dropped when using apply
spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1`, "D", d)
	if got := strings.Join(r.podWarningsHook(pod, nil), "\n"); got != want {
		t.Errorf("pod warnings:\n%s\nwant:\n%s", got, want)
	}
	deploy := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"volumes": []any{map[string]any{"name": "v", "rbd": map[string]any{}}},
	}}}}
	if got := strings.Join(r.templateWarnings("spec", "template")(deploy, nil), "\n"); got != "spec.template.spec.volumes[0].rbd: deprecated in v1.28, non-functional in v1.31+" {
		t.Errorf("template warnings: %s", got)
	}
	cron := map[string]any{"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"security.alpha." + d + "/sysctls": "x"}}}}}}}
	if got := strings.Join(r.templateWarnings("spec", "jobTemplate", "spec", "template")(cron, nil), "\n"); got != "spec.jobTemplate.spec.template.metadata.annotations[security.alpha."+d+`/sysctls]: non-functional in v1.11+; use the "sysctls" field instead` {
		t.Errorf("cron job warnings: %s", got)
	}
	if got := r.podWarningsHook(map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c"}}}}, nil); len(got) != 0 {
		t.Errorf("a plain pod warns: %v", got)
	}
}

// TestWorkloadNameWarnings checks the warning a create earns whose name is
// not a DNS label, for the kinds upstream warns about, before the
// template's warnings; updates and other kinds earn none.
func TestWorkloadNameWarnings(t *testing.T) {
	t.Parallel()
	b := config.Brands["plat"]
	kinds := map[string]*registry.Descriptor{}
	for _, d := range slices.Concat(coreV1(b), appsV1(b, Services{}), batchV1(b, Services{})) {
		kinds[d.Kind] = d
	}
	const workload = "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: "
	const pod = "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: "
	long := strings.Repeat("a", 60) + ".bcd"
	for _, c := range []struct {
		kind, name string
		want       []string
	}{
		{"Deployment", "web.v1", []string{workload + "[must not contain dots]"}},
		{"ReplicaSet", "web.v1", []string{workload + "[must not contain dots]"}},
		{"ReplicationController", "web.v1", []string{workload + "[must not contain dots]"}},
		{"Job", long, []string{workload + "[must be no more than 63 characters must not contain dots]"}},
		{"CronJob", "web.v1", []string{workload + "[must not contain dots]"}},
		{"Pod", "web.v1", []string{pod + "[must not contain dots]"}},
		{"Pod", "web", nil},
		{"Deployment", "web-1", nil},
		// Daemon sets are named as pods are not: upstream does not warn.
		{"DaemonSet", "web.v1", nil},
	} {
		obj := registry.Object{"metadata": map[string]any{"name": c.name}}
		got := kinds[c.kind].Strategy.Warnings(obj, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %q: %q, want %q", c.kind, c.name, got, c.want)
		}
		if got := kinds[c.kind].Strategy.Warnings(obj, obj); len(got) > 0 {
			t.Errorf("%s %q update: %q", c.kind, c.name, got)
		}
	}
	// The name's warning comes before the template's.
	deploy := registry.Object{"metadata": map[string]any{"name": "Web"}, "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"volumes": []any{map[string]any{"name": "v", "gitRepo": map[string]any{"repository": "r"}}},
	}}}}
	want := []string{
		workload + "[a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]",
		"spec.template.spec.volumes[0].gitRepo: deprecated in v1.11",
	}
	if got := kinds["Deployment"].Strategy.Warnings(deploy, nil); !slices.Equal(got, want) {
		t.Errorf("deployment warnings:\n%q\nwant:\n%q", got, want)
	}
}

package builtin

import (
	"context"
	"testing"

	"platd/server/registry"
)

// limitRangeObj is a LimitRange called name with the items of limits, a
// JSON list.
func limitRangeObj(t *testing.T, name, limits string) registry.Object {
	t.Helper()
	return registry.Object{
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"spec":     decodeJSON(t, `{"limits":`+limits+`}`),
	}
}

func testLimitRanger(t *testing.T, ranges ...registry.Object) (limitRanger, fakeLookup) {
	t.Helper()
	lr := newLimitRanger(brand, kindOf(coreV1(brand), "LimitRange"))
	return lr, fakeLookup{objs: map[*registry.Descriptor][]registry.Object{lr.ranges: ranges}}
}

func TestLimitRangerDefaultsPods(t *testing.T) {
	t.Parallel()
	const cpuMemory = `[{"type":"Container","default":{"cpu":"500m","memory":"256Mi"},"defaultRequest":{"cpu":"100m","memory":"128Mi"}}]`
	tests := []struct {
		name   string
		ranges []string
		spec   string
		update bool
		// want is the spec's containers and init containers after
		// admission, note the annotation ("" for none), qos the class.
		want, note, qos string
	}{
		{"no resources", []string{cpuMemory},
			`{"containers":[{"name":"web"}]}`, false,
			`{"containers":[{"name":"web","resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}}}]}`,
			"LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web", qosBurstable},
		{"named resources stay", []string{cpuMemory},
			`{"containers":[{"name":"web","resources":{"requests":{"memory":"64Mi"}}}]}`, false,
			`{"containers":[{"name":"web","resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}]}`,
			"LimitRanger plugin set: cpu request for container web; cpu, memory limit for container web", qosBurstable},
		{"init containers", []string{cpuMemory},
			`{"containers":[{"name":"web","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}}],"initContainers":[{"name":"setup","resources":{"limits":{"cpu":"1"},"requests":{"cpu":"1"}}}]}`, false,
			`{"containers":[{"name":"web","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}}],"initContainers":[{"name":"setup","resources":{"limits":{"cpu":"1","memory":"256Mi"},"requests":{"cpu":"1","memory":"128Mi"}}}]}`,
			"LimitRanger plugin set: memory request for init container setup; memory limit for init container setup", qosBurstable},
		{"equal defaults make a guaranteed pod", []string{`[{"type":"Container","max":{"cpu":"1","memory":"1Gi"},"default":{"cpu":"1","memory":"1Gi"},"defaultRequest":{"cpu":"1","memory":"1Gi"}}]`},
			`{"containers":[{"name":"a"},{"name":"b"}]}`, false,
			`{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}},{"name":"b","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}}]}`,
			"LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a; cpu, memory request for container b; cpu, memory limit for container b", qosGuaranteed},
		{"all named", []string{cpuMemory},
			`{"containers":[{"name":"web","resources":{"limits":{"cpu":"2","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}}]}`, false,
			`{"containers":[{"name":"web","resources":{"limits":{"cpu":"2","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}}]}`,
			"", ""},
		{"the last range to set a default is noted", []string{
			`[{"type":"Container","defaultRequest":{"cpu":"100m"}}]`,
			`[{"type":"Container","defaultRequest":{"cpu":"300m","memory":"64Mi"}}]`},
			`{"containers":[{"name":"web"}]}`, false,
			`{"containers":[{"name":"web","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}`,
			"LimitRanger plugin set: memory request for container web", qosBurstable},
		{"ranges without container defaults", []string{`[{"type":"Pod","max":{"cpu":"2"}},{"type":"Container","min":{"cpu":"1m"}}]`},
			`{"containers":[{"name":"web"}]}`, false,
			`{"containers":[{"name":"web"}]}`,
			"", ""},
		{"updates are left alone", []string{cpuMemory},
			`{"containers":[{"name":"web"}]}`, true,
			`{"containers":[{"name":"web"}]}`,
			"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ranges []registry.Object
			for i, r := range tt.ranges {
				ranges = append(ranges, limitRangeObj(t, string(rune('a'+i)), r))
			}
			lr, l := testLimitRanger(t, ranges...)
			pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": decodeJSON(t, tt.spec)}
			var old registry.Object
			if tt.update {
				old = copyObj(pod)
			}
			if err := lr.admitPod(context.Background(), l, pod, old); err != nil {
				t.Fatal(err)
			}
			if got := canonicalJSON(t, pod["spec"]); got != tt.want {
				t.Errorf("spec\n got  %s\n want %s", got, tt.want)
			}
			if got := str(pod, "metadata", "annotations", lr.annotation); got != tt.note {
				t.Errorf("annotation %q, want %q", got, tt.note)
			}
			if got := str(pod, "status", "qosClass"); got != tt.qos {
				t.Errorf("qosClass %q, want %q", got, tt.qos)
			}
		})
	}
}

func TestLimitRangerBoundsPods(t *testing.T) {
	t.Parallel()
	container := func(limits string) string { return `[{"type":"Container",` + limits + `}]` }
	pod := func(limits string) string { return `[{"type":"Pod",` + limits + `}]` }
	tests := []struct {
		name   string
		ranges []string
		spec   string
		update bool
		// err is what admission answered (see admissionError).
		err string
	}{
		{"within bounds", []string{container(`"min":{"cpu":"100m"},"max":{"cpu":"1"},"maxLimitRequestRatio":{"cpu":"4"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"},"limits":{"cpu":"1"}}}]}`, false, ""},
		{"request below min", []string{container(`"min":{"cpu":"100m"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"50m"}}}]}`, false,
			"denied: minimum cpu usage per Container is 100m, but request is 50m"},
		{"no request for a min", []string{container(`"min":{"cpu":"100m"}`)},
			`{"containers":[{"name":"c"}]}`, false,
			"denied: minimum cpu usage per Container is 100m.  No request is specified"},
		{"limit below min", []string{container(`"min":{"memory":"1Gi"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"memory":"2Gi"},"limits":{"memory":"512Mi"}}}]}`, false,
			"denied: minimum memory usage per Container is 1Gi, but limit is 512Mi"},
		{"no limit for a max", []string{container(`"max":{"memory":"1Gi"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"memory":"1Gi"}}}]}`, false,
			"denied: maximum memory usage per Container is 1Gi.  No limit is specified"},
		{"limit above max", []string{container(`"max":{"memory":"1Gi"}`)},
			`{"containers":[{"name":"c","resources":{"limits":{"memory":"2Gi"}}}]}`, false,
			"denied: maximum memory usage per Container is 1Gi, but limit is 2Gi"},
		{"request above max", []string{container(`"max":{"memory":"1Gi"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"memory":"1536Mi"},"limits":{"memory":"1Gi"}}}]}`, false,
			"denied: maximum memory usage per Container is 1Gi, but request is 1536Mi"},
		{"ratio above max", []string{container(`"maxLimitRequestRatio":{"cpu":"2"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"},"limits":{"cpu":"1"}}}]}`, false,
			"denied: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000"},
		{"fractional ratio", []string{container(`"maxLimitRequestRatio":{"cpu":"1500m"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"500m"}}}]}`, false,
			"denied: cpu max limit to request ratio per Container is 1500m, but provided ratio is 1.666667"},
		{"ratio at max", []string{container(`"maxLimitRequestRatio":{"cpu":"1500m"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"300m"}}}]}`, false, ""},
		{"ratio without request", []string{container(`"maxLimitRequestRatio":{"cpu":"2"}`)},
			`{"containers":[{"name":"c"}]}`, false,
			"denied: cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"},
		{"ratio without limit", []string{container(`"maxLimitRequestRatio":{"cpu":"2"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}`, false,
			"denied: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0"},
		{"init containers are bounded", []string{container(`"max":{"cpu":"1"}`)},
			`{"containers":[{"name":"c","resources":{"limits":{"cpu":"1"}}}],"initContainers":[{"name":"i","resources":{"limits":{"cpu":"2"}}}]}`, false,
			"denied: maximum cpu usage per Container is 1, but limit is 2"},
		{"every bound broken, min then max then ratio", []string{container(`"min":{"cpu":"100m","memory":"64Mi"},"max":{"cpu":"1"},"maxLimitRequestRatio":{"cpu":"2"}`)},
			`{"containers":[{"name":"a","resources":{"requests":{"cpu":"50m"},"limits":{"cpu":"2"}}},{"name":"b","resources":{"requests":{"cpu":"50m"},"limits":{"cpu":"2"}}}]}`, false,
			"denied: [minimum cpu usage per Container is 100m, but request is 50m, minimum memory usage per Container is 64Mi.  No request is specified, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 2, but provided ratio is 40.000000]"},
		{"pod limits summed", []string{pod(`"max":{"memory":"1Gi"}`)},
			`{"containers":[{"name":"a","resources":{"limits":{"memory":"768Mi"}}},{"name":"b","resources":{"limits":{"memory":"768Mi"}}}]}`, false,
			"denied: maximum memory usage per Pod is 1Gi, but limit is 1536Mi"},
		{"pod sum spelled in the first amount's format", []string{pod(`"max":{"memory":"1Gi"}`)},
			`{"containers":[{"name":"a","resources":{"limits":{"memory":"1G"}}},{"name":"b","resources":{"limits":{"memory":"1Gi"}}}]}`, false,
			"denied: maximum memory usage per Pod is 1Gi, but limit is 2073741824"},
		{"pod requests below min", []string{pod(`"min":{"cpu":"1"}`)},
			`{"containers":[{"name":"a","resources":{"requests":{"cpu":"250m"}}},{"name":"b","resources":{"requests":{"cpu":"250m"}}}]}`, false,
			"denied: minimum cpu usage per Pod is 1, but request is 500m"},
		{"pod counts its largest init container", []string{pod(`"max":{"cpu":"1"}`)},
			`{"containers":[{"name":"a","resources":{"limits":{"cpu":"300m"}}},{"name":"b","resources":{"limits":{"cpu":"300m"}}}],"initContainers":[{"name":"i","resources":{"limits":{"cpu":"2"}}},{"name":"j","resources":{"limits":{"cpu":"1"}}}]}`, false,
			"denied: maximum cpu usage per Pod is 1, but limit is 2"},
		{"pod counts its sidecars", []string{pod(`"max":{"cpu":"1"}`)},
			`{"containers":[{"name":"a","resources":{"limits":{"cpu":"600m"}}}],"initContainers":[{"name":"side","restartPolicy":"Always","resources":{"limits":{"cpu":"500m"}}}]}`, false,
			"denied: maximum cpu usage per Pod is 1, but limit is 1100m"},
		{"init containers run beside earlier sidecars", []string{pod(`"max":{"cpu":"1"}`)},
			`{"containers":[{"name":"a","resources":{"limits":{"cpu":"100m"}}}],"initContainers":[{"name":"side","restartPolicy":"Always","resources":{"limits":{"cpu":"400m"}}},{"name":"i","resources":{"limits":{"cpu":"800m"}}}]}`, false,
			"denied: maximum cpu usage per Pod is 1, but limit is 1200m"},
		{"pod ratio", []string{pod(`"maxLimitRequestRatio":{"memory":"2"}`)},
			`{"containers":[{"name":"a","resources":{"requests":{"memory":"100Mi"},"limits":{"memory":"300Mi"}}}]}`, false,
			"denied: memory max limit to request ratio per Pod is 2, but provided ratio is 3.000000"},
		{"the first range broken answers", []string{container(`"max":{"cpu":"1"}`), container(`"min":{"cpu":"3"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"2"}}}]}`, false,
			"denied: maximum cpu usage per Container is 1, but limit is 2"},
		{"a later range is checked", []string{container(`"max":{"cpu":"4"}`), container(`"min":{"cpu":"3"}`)},
			`{"containers":[{"name":"c","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"2"}}}]}`, false,
			"denied: minimum cpu usage per Container is 3, but request is 2"},
		{"claim items do not bound pods", []string{`[{"type":"PersistentVolumeClaim","min":{"storage":"1Gi"}}]`},
			`{"containers":[{"name":"c"}]}`, false, ""},
		{"updates are not bounded", []string{container(`"max":{"cpu":"1"}`)},
			`{"containers":[{"name":"c","resources":{"limits":{"cpu":"2"}}}]}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ranges []registry.Object
			for i, r := range tt.ranges {
				ranges = append(ranges, limitRangeObj(t, string(rune('a'+i)), r))
			}
			lr, l := testLimitRanger(t, ranges...)
			pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": decodeJSON(t, tt.spec)}
			var old registry.Object
			if tt.update {
				old = copyObj(pod)
			}
			if got := admissionError(lr.validatePod(context.Background(), l, pod, old)); got != tt.err {
				t.Errorf("got  %q\nwant %q", got, tt.err)
			}
		})
	}
}

func TestLimitRangerBoundsClaims(t *testing.T) {
	t.Parallel()
	const bounds = `[{"type":"PersistentVolumeClaim","min":{"storage":"1Gi"},"max":{"storage":"10Gi"}},{"type":"Container","max":{"cpu":"1"}}]`
	deleting := registry.Object{"metadata": map[string]any{"name": "c", "deletionTimestamp": "2024-01-01T00:00:00Z"}}
	stored := registry.Object{"metadata": map[string]any{"name": "c"}}
	tests := []struct {
		name     string
		requests string
		old      registry.Object
		err      string
	}{
		{"within bounds", `{"storage":"5Gi"}`, nil, ""},
		{"at the bounds", `{"storage":"1Gi"}`, nil, ""},
		{"below min", `{"storage":"500Mi"}`, nil,
			"denied: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"},
		{"above max", `{"storage":"20Gi"}`, nil,
			"denied: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"},
		{"no request", `{}`, nil,
			"denied: [minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]"},
		{"updates are bounded", `{"storage":"20Gi"}`, stored,
			"denied: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"},
		{"a claim being deleted is not", `{"storage":"20Gi"}`, deleting, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr, l := testLimitRanger(t, limitRangeObj(t, "a", bounds))
			claim := registry.Object{
				"metadata": map[string]any{"name": "c", "namespace": "ns"},
				"spec":     map[string]any{"resources": map[string]any{"requests": decodeJSON(t, tt.requests)}},
			}
			if got := admissionError(lr.validateClaim(context.Background(), l, claim, tt.old)); got != tt.err {
				t.Errorf("got  %q\nwant %q", got, tt.err)
			}
		})
	}
}

package builtin

import (
	"reflect"
	"testing"

	"platd/server/registry"
)

// workload is an object of a workload type named w, selecting app=w with
// a matching template of one container, plus the spec members given.
func workload(extra map[string]any) registry.Object {
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": "w"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "w"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		},
	}
	for k, v := range extra {
		if v == nil {
			delete(spec, k)
			continue
		}
		spec[k] = v
	}
	return registry.Object{"metadata": map[string]any{"name": "w", "namespace": "ns", "uid": "u-1"}, "spec": spec}
}

// wantAt checks values at paths of nested maps.
func wantAt(t *testing.T, name string, obj registry.Object, want map[string]any) {
	t.Helper()
	for p, w := range want {
		var got any = obj
		for _, k := range splitDots(p) {
			m, _ := got.(map[string]any)
			got = m[k]
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %s = %#v, want %#v", name, p, got, w)
		}
	}
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

func TestWorkloadDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind  string
		extra map[string]any
		want  map[string]any
	}{
		{"Deployment", nil, map[string]any{
			"spec.replicas": int64(1), "spec.revisionHistoryLimit": int64(10), "spec.progressDeadlineSeconds": int64(600),
			"spec.strategy":                    map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": "25%", "maxSurge": "25%"}},
			"spec.template.spec.restartPolicy": "Always", "metadata.generation": int64(1), "spec.minReadySeconds": nil,
		}},
		{"Deployment", map[string]any{"strategy": map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(2)}}, "replicas": int64(0)}, map[string]any{
			"spec.replicas": int64(0),
			"spec.strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": "25%", "maxSurge": int64(2)}},
		}},
		{"ReplicaSet", nil, map[string]any{"spec.replicas": int64(1), "metadata.generation": int64(1)}},
		{"StatefulSet", map[string]any{"updateStrategy": map[string]any{"type": "OnDelete"}}, map[string]any{
			"spec.updateStrategy": map[string]any{"type": "OnDelete"}, "spec.podManagementPolicy": "OrderedReady",
		}},
		{"StatefulSet", map[string]any{"volumeClaimTemplates": []any{map[string]any{"spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1.0001m"}}}}}}, map[string]any{
			"spec.updateStrategy":                       map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(0)}},
			"spec.persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"},
			"spec.replicas":                             int64(1), "spec.revisionHistoryLimit": int64(10),
			"spec.volumeClaimTemplates": []any{map[string]any{
				"metadata": map[string]any{},
				"spec":     map[string]any{"volumeMode": "Filesystem", "resources": map[string]any{"requests": map[string]any{"storage": "2m"}}},
				"status":   map[string]any{"phase": "Pending"},
			}},
		}},
		{"StatefulSet", map[string]any{"updateStrategy": map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": int64(2)}}}, map[string]any{
			"spec.updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(0)}},
		}},
		{"DaemonSet", nil, map[string]any{
			"spec.updateStrategy":       map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": int64(1), "maxSurge": int64(0)}},
			"spec.revisionHistoryLimit": int64(10), "metadata.annotations": map[string]any{deprecatedTemplateGeneration: "1"},
		}},
		{"DaemonSet", map[string]any{"updateStrategy": map[string]any{"type": "OnDelete"}}, map[string]any{
			"spec.updateStrategy": map[string]any{"type": "OnDelete"},
		}},
		{"ReplicationController", map[string]any{"selector": nil}, map[string]any{
			"spec.replicas": int64(1), "spec.selector": map[string]any{"app": "w"}, "metadata.labels": map[string]any{"app": "w"},
		}},
	}
	for _, tt := range tests {
		d := typeDescriptor(t, tt.kind)
		obj := workload(tt.extra)
		if tt.kind == "ReplicationController" {
			obj["spec"].(map[string]any)["selector"] = nil
			delete(obj["spec"].(map[string]any), "selector")
		}
		got := mustCreate(t, d, obj)
		wantAt(t, tt.kind, got, tt.want)
	}
}

func TestWorkloadValidation(t *testing.T) {
	t.Parallel()
	badTemplate := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "other"}},
		"spec": map[string]any{
			"restartPolicy": "OnFailure", "activeDeadlineSeconds": int64(5),
			"containers": []any{map[string]any{"name": "c", "image": "nginx"}},
		},
	}
	mismatch := "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`"
	tests := []struct {
		kind, name string
		extra      map[string]any
		want       []string
	}{
		{"Deployment", "valid", nil, nil},
		{"Deployment", "template", map[string]any{"template": badTemplate}, []string{
			mismatch,
			`spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`,
			"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
		}},
		{"Deployment", "no selector", map[string]any{"selector": nil, "template": map[string]any{
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		}}, []string{
			"spec.selector: Required value",
			"spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`",
		}},
		{"Deployment", "bad operator", map[string]any{"selector": map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "Near"}}}}, []string{
			`spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`,
			`spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Near", Values:[]string(nil)}}}: invalid label selector`,
		}},
		{"Deployment", "rolling", map[string]any{"strategy": map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": "120%", "maxSurge": "x"}}}, []string{
			`spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"x"}: ` + percentMsgText,
			`spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%`,
		}},
		{"Deployment", "deadline", map[string]any{"progressDeadlineSeconds": int64(-1), "revisionHistoryLimit": int64(-2)}, []string{
			"spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
			"spec.progressDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
			"spec.progressDeadlineSeconds: Invalid value: -1: must be greater than minReadySeconds",
		}},
		{"ReplicaSet", "negative", map[string]any{"replicas": int64(-1), "minReadySeconds": int64(-1)}, []string{
			"spec.replicas: Invalid value: -1: must be greater than or equal to 0",
			"spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
		}},
		{"StatefulSet", "template rules", map[string]any{"template": badTemplate}, []string{
			mismatch,
			`spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`,
			"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
		}},
		{"StatefulSet", "strategy", map[string]any{
			"updateStrategy":                       map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(-1), "maxUnavailable": int64(0)}},
			"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Keep"},
			"ordinals":                             map[string]any{"start": int64(-3)},
		}, []string{
			// maxUnavailable is dropped: its feature is off.
			"spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0",
			`spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"`,
			"spec.ordinals.start: Invalid value: -3: must be greater than or equal to 0",
		}},
		{"StatefulSet", "unknown strategy", map[string]any{"updateStrategy": map[string]any{"type": "Sometimes"}}, []string{
			`spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'`,
		}},
		{"DaemonSet", "empty selector", map[string]any{"selector": map[string]any{}}, []string{
			"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset",
		}},
		{"DaemonSet", "strategy", map[string]any{"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": "0%", "maxSurge": int64(0)}}}, []string{
			"spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
		}},
		{"DaemonSet", "unknown strategy", map[string]any{"updateStrategy": map[string]any{"type": "Blue"}}, []string{
			`spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Blue", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"`,
		}},
		{"ReplicationController", "template", map[string]any{"selector": map[string]any{"app": "w"}, "template": badTemplate}, []string{
			"spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`",
			`spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`,
			"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
		}},
		{"ReplicationController", "shared disk", map[string]any{"selector": map[string]any{"app": "w"}, "replicas": int64(2), "template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "w"}},
			"spec": map[string]any{
				"containers": []any{map[string]any{"name": "c", "image": "nginx"}},
				"volumes":    []any{map[string]any{"name": "d", "gcePersistentDisk": map[string]any{"pdName": "disk"}}},
			},
		}}, []string{
			"spec.template.spec.volumes[0].gcePersistentDisk.readOnly: Invalid value: false: must be true for replicated pods > 1; GCE PD can only be mounted on multiple machines if it is read-only",
		}},
		{"ReplicationController", "no template", map[string]any{"selector": map[string]any{"app": "w"}, "template": nil}, []string{
			"spec.template: Required value",
		}},
	}
	for _, tt := range tests {
		d := typeDescriptor(t, tt.kind)
		_, errs := create(d, workload(tt.extra))
		checkErrs(t, tt.kind+" "+tt.name, errs, tt.want)
	}
}

// percentMsgText is the problem of a string that is no percentage.
const percentMsgText = `a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`

func TestWorkloadUpdates(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"} {
		d := typeDescriptor(t, kind)
		stored := mustCreate(t, d, workload(nil))
		stored["status"] = map[string]any{"replicas": int64(1)}

		// A spec change bumps the generation; status is the stored one.
		next := copyObj(stored)
		next["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:2"
		next["status"] = map[string]any{}
		got, errs := update(d, next, stored, "")
		checkErrs(t, kind+" update", errs, nil)
		wantAt(t, kind+" update", got, map[string]any{"metadata.generation": int64(2), "status.replicas": int64(1)})

		// A status write keeps the generation.
		st := copyObj(stored)
		st["status"] = map[string]any{"replicas": int64(3)}
		got, _ = update(d, st, stored, "status")
		wantAt(t, kind+" status", got, map[string]any{"metadata.generation": int64(1)})

		// The selector of apps/v1 is fixed.
		moved := copyObj(stored)
		moved["spec"].(map[string]any)["selector"] = map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "Exists"}}}
		_, errs = update(d, moved, stored, "")
		want := `spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Exists", Values:[]string(nil)}}}: field is immutable`
		if g := errStrings(errs); len(g) == 0 || g[len(g)-1] != want {
			t.Errorf("%s selector change: %q", kind, g)
		}
	}

	// Deployments count annotation changes as a new generation too.
	d := typeDescriptor(t, "Deployment")
	stored := mustCreate(t, d, workload(nil))
	next := copyObj(stored)
	next["metadata"].(map[string]any)["annotations"] = map[string]any{"note": "x"}
	got, _ := update(d, next, stored, "")
	wantAt(t, "deployment annotation", got, map[string]any{"metadata.generation": int64(2)})

	// A daemon set's template generation follows its template.
	d = typeDescriptor(t, "DaemonSet")
	stored = mustCreate(t, d, workload(nil))
	next = copyObj(stored)
	next["metadata"].(map[string]any)["annotations"] = map[string]any{deprecatedTemplateGeneration: "5"}
	_, errs := update(d, next, stored, "")
	checkErrs(t, "template generation", errs, []string{"spec.templateGeneration: Invalid value: 5: must not be incremented without template update"})
	delete(next["metadata"].(map[string]any), "annotations")
	_, errs = update(d, next, stored, "")
	checkErrs(t, "template generation dropped", errs, []string{"spec.templateGeneration: Invalid value: 0: must not be decremented"})
	next["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"] = map[string]any{"a": "b"}
	got, errs = update(d, next, stored, "")
	checkErrs(t, "template change", errs, nil)
	wantAt(t, "template change", got, map[string]any{"metadata.annotations": map[string]any{deprecatedTemplateGeneration: "2"}, "metadata.generation": int64(2)})

	// A stateful set's spec is fixed but for a few members.
	d = typeDescriptor(t, "StatefulSet")
	stored = mustCreate(t, d, workload(nil))
	next = copyObj(stored)
	next["spec"].(map[string]any)["replicas"] = int64(3)
	next["spec"].(map[string]any)["minReadySeconds"] = int64(3)
	_, errs = update(d, next, stored, "")
	checkErrs(t, "sts replicas", errs, nil)
	next["spec"].(map[string]any)["serviceName"] = "svc"
	_, errs = update(d, next, stored, "")
	checkErrs(t, "sts serviceName", errs, []string{
		"spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
	})
}

func TestWorkloadStatusRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind   string
		status map[string]any
		want   []string
	}{
		{"Deployment", map[string]any{"replicas": int64(2), "readyReplicas": int64(3), "availableReplicas": int64(4), "unavailableReplicas": int64(-1)}, []string{
			"status.unavailableReplicas: Invalid value: -1: must be greater than or equal to 0",
			"status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas",
			"status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas",
			"status.availableReplicas: Invalid value: 4: cannot be greater than readyReplicas",
		}},
		{"ReplicaSet", map[string]any{"replicas": int64(1), "fullyLabeledReplicas": int64(2)}, []string{
			"status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas",
		}},
		{"StatefulSet", map[string]any{"replicas": int64(1), "currentReplicas": int64(2), "collisionCount": int64(-1)}, []string{
			"status.collisionCount: Invalid value: -1: must be greater than or equal to 0",
			"status.currentReplicas: Invalid value: 2: cannot be greater than status.replicas",
		}},
		{"DaemonSet", map[string]any{"numberReady": int64(-1)}, []string{
			"status.numberReady: Invalid value: -1: must be greater than or equal to 0",
		}},
		// Zero counts are then above the negative replicas, as upstream
		// reports them.
		{"ReplicationController", map[string]any{"replicas": int64(-1)}, []string{
			"status.replicas: Invalid value: -1: must be greater than or equal to 0",
			"status.fullyLabeledReplicas: Invalid value: 0: cannot be greater than status.replicas",
			"status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
			"status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas",
		}},
	}
	for _, tt := range tests {
		d := typeDescriptor(t, tt.kind)
		obj := workload(nil)
		if tt.kind == "ReplicationController" {
			obj["spec"].(map[string]any)["selector"] = map[string]any{"app": "w"}
		}
		stored := mustCreate(t, d, obj)
		next := copyObj(stored)
		next["status"] = tt.status
		checkErrs(t, tt.kind+" status", d.Subresource("status").Validate(next, stored), tt.want)
	}
	// A collision count never goes down.
	d := typeDescriptor(t, "Deployment")
	old := registry.Object{"status": map[string]any{"collisionCount": int64(2)}}
	checkErrs(t, "decremented", d.Subresource("status").Validate(registry.Object{"status": map[string]any{"collisionCount": int64(1)}}, old), []string{
		"status.collisionCount: Invalid value: 1: cannot be decremented",
	})
}

func TestControllerRevisions(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "ControllerRevision")
	_, errs := create(d, registry.Object{"metadata": map[string]any{"name": "r"}, "revision": int64(-1)})
	checkErrs(t, "revision", errs, []string{"data: Required value: data is mandatory", "revision: Invalid value: -1: must be greater than or equal to 0"})
	stored := mustCreate(t, d, registry.Object{"metadata": map[string]any{"name": "r"}, "revision": int64(1), "data": map[string]any{"a": "b"}})
	next := copyObj(stored)
	next["data"] = map[string]any{"a": "c"}
	_, errs = update(d, next, stored, "")
	checkErrs(t, "data", errs, []string{"data: Invalid value: runtime.RawExtension{...}: field is immutable"})
}

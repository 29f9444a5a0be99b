package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// owned is one managedFields entry a test expects: its identity and its
// fieldsV1 as compact JSON, byte for byte (members sorted as upstream).
type owned struct {
	manager, operation, apiVersion, subresource, fields string
}

// checkManaged asserts that obj's managedFields are exactly want, in
// order, each with a time and the FieldsV1 type.
func checkManaged(t *testing.T, what string, obj metav1.Object, want ...owned) {
	t.Helper()
	checkManagedUntimed(t, what, obj, nil, want...)
}

// checkManagedUntimed is checkManaged where the entries of the untimed
// managers have no time: they changed nothing when they last wrote, so
// upstream never stamped them.
func checkManagedUntimed(t *testing.T, what string, obj metav1.Object, untimed []string, want ...owned) {
	t.Helper()
	got := obj.GetManagedFields()
	if len(got) != len(want) {
		t.Errorf("%s: %d managedFields entries, want %d: %s", what, len(got), len(want), managedString(got))
		return
	}
	for i, e := range got {
		var raw string
		if e.FieldsV1 != nil {
			raw = string(e.FieldsV1.Raw)
		}
		g := owned{e.Manager, string(e.Operation), e.APIVersion, e.Subresource, raw}
		if g != want[i] {
			t.Errorf("%s: managedFields[%d] = %+v, want %+v", what, i, g, want[i])
		}
		if hasTime := e.Time != nil && !e.Time.IsZero(); hasTime == slices.Contains(untimed, e.Manager) {
			t.Errorf("%s: managedFields[%d] of %s has time %v, want a time: %t", what, i, e.Manager, e.Time, !hasTime)
		}
		if e.FieldsType != "FieldsV1" {
			t.Errorf("%s: managedFields[%d] fieldsType %q", what, i, e.FieldsType)
		}
	}
}

func managedString(mf []metav1.ManagedFieldsEntry) string {
	var b strings.Builder
	for _, e := range mf {
		b.WriteString("\n  " + e.Manager + " " + string(e.Operation) + " " + e.APIVersion + " [" + e.Subresource + "] ")
		if e.FieldsV1 != nil {
			b.Write(e.FieldsV1.Raw)
		}
	}
	return b.String()
}

// statusOf returns err's Status, failing the test when err is not an API
// error.
func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not an API status", err, err)
	}
	return se.Status()
}

// Fields of the configurations the tests apply, as upstream records them.
const (
	webDeploymentFields = `{"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},` +
		`"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
)

// webDeployment is an apply configuration of a one-container Deployment.
func webDeployment(ns string, replicas int32, image string) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(replicas).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(map[string]string{"app": "web"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage(image)))))
}

func TestApplyTypedConfigMap(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			cms := cs.CoreV1().ConfigMaps(ns)

			created, err := cms.Apply(ctx, corev1ac.ConfigMap("settings", ns).
				WithLabels(map[string]string{"app": "web"}).
				WithData(map[string]string{"mode": "fast", "size": "3"}), metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatalf("apply (create): %v", err)
			}
			if created.UID == "" || created.ResourceVersion == "" || created.Labels["app"] != "web" ||
				!reflect.DeepEqual(created.Data, map[string]string{"mode": "fast", "size": "3"}) {
				t.Errorf("created %+v", created)
			}
			checkManaged(t, "created", created,
				owned{"x", "Apply", "v1", "", `{"f:data":{"f:mode":{},"f:size":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`})

			// Applying again with fewer fields removes those the manager
			// alone owned.
			updated, err := cms.Apply(ctx, corev1ac.ConfigMap("settings", ns).
				WithData(map[string]string{"mode": "slow"}), metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatalf("apply (update): %v", err)
			}
			if updated.UID != created.UID || updated.ResourceVersion == created.ResourceVersion ||
				len(updated.Labels) != 0 || !reflect.DeepEqual(updated.Data, map[string]string{"mode": "slow"}) {
				t.Errorf("updated %+v", updated)
			}
			checkManaged(t, "updated", updated, owned{"x", "Apply", "v1", "", `{"f:data":{"f:mode":{}}}`})

			got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion != updated.ResourceVersion || !reflect.DeepEqual(got.Data, updated.Data) ||
				!reflect.DeepEqual(got.ManagedFields, updated.ManagedFields) {
				t.Errorf("stored %+v, returned %+v", got, updated)
			}

			// Applying the same configuration again changes nothing.
			same, err := cms.Apply(ctx, corev1ac.ConfigMap("settings", ns).
				WithData(map[string]string{"mode": "slow"}), metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatalf("apply (no-op): %v", err)
			}
			if same.ResourceVersion != updated.ResourceVersion {
				t.Errorf("a no-op apply wrote: resourceVersion %s -> %s", updated.ResourceVersion, same.ResourceVersion)
			}
		})
	}
}

func TestApplyTypedDeployment(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			deps := cs.AppsV1().Deployments(ns)

			created, err := deps.Apply(ctx, webDeployment(ns, 2, "nginx:1.27"), metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatalf("apply (create): %v", err)
			}
			// Defaults are stored but owned by nobody.
			if created.Generation != 1 || *created.Spec.Replicas != 2 ||
				created.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
				created.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent ||
				created.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
				t.Errorf("created %+v", created.Spec)
			}
			checkManaged(t, "created", created, owned{"x", "Apply", "apps/v1", "", webDeploymentFields})

			next := webDeployment(ns, 3, "nginx:1.28")
			next.Spec.Template.Spec.WithContainers(corev1ac.Container().WithName("sidecar").WithImage("busybox"))
			updated, err := deps.Apply(ctx, next, metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatalf("apply (update): %v", err)
			}
			cs0 := updated.Spec.Template.Spec.Containers
			if updated.Generation != 2 || *updated.Spec.Replicas != 3 || len(cs0) != 2 ||
				cs0[0].Name != "web" || cs0[0].Image != "nginx:1.28" || cs0[1].Name != "sidecar" ||
				cs0[1].TerminationMessagePath != "/dev/termination-log" {
				t.Errorf("updated generation %d spec %+v", updated.Generation, updated.Spec)
			}
			checkManaged(t, "updated", updated, owned{"x", "Apply", "apps/v1", "",
				`{"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},` +
					`"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}},` +
					`"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`})

			// Dropping the sidecar from the configuration removes it.
			back, err := deps.Apply(ctx, webDeployment(ns, 3, "nginx:1.28"), metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatalf("apply (drop sidecar): %v", err)
			}
			if n := len(back.Spec.Template.Spec.Containers); n != 1 {
				t.Errorf("%d containers after dropping the sidecar", n)
			}
			checkManaged(t, "dropped", back, owned{"x", "Apply", "apps/v1", "", webDeploymentFields})
		})
	}
}

// nextSecond waits until the clock is past the second of ts, the
// granularity of managedFields times.
func nextSecond(t *testing.T, ts *metav1.Time) {
	t.Helper()
	if ts == nil {
		t.Fatal("no time to wait past")
	}
	eventually(t, "the next second", func() bool { return time.Now().Unix() > ts.Unix() })
}

func TestApplyAgainChangesNothing(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	deps := cs.AppsV1().Deployments(ns)
	config := corev1ac.ConfigMap("again", ns).WithData(map[string]string{"k": "v"})
	first, err := cms.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	dep, err := deps.Apply(ctx, webDeployment(ns, 2, "nginx:1.27"), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	nextSecond(t, first.ManagedFields[0].Time)

	// The same configuration again: no write, the time stays.
	again, err := cms.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != first.ResourceVersion || !reflect.DeepEqual(again.ManagedFields, first.ManagedFields) {
		t.Errorf("applying the same configuration wrote: resourceVersion %s -> %s, managedFields %s -> %s",
			first.ResourceVersion, again.ResourceVersion, managedString(first.ManagedFields), managedString(again.ManagedFields))
	}
	depAgain, err := deps.Apply(ctx, webDeployment(ns, 2, "nginx:1.27"), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if depAgain.ResourceVersion != dep.ResourceVersion || depAgain.Generation != 1 || !reflect.DeepEqual(depAgain.ManagedFields, dep.ManagedFields) {
		t.Errorf("applying the same Deployment wrote: resourceVersion %s -> %s, generation %d", dep.ResourceVersion, depAgain.ResourceVersion, depAgain.Generation)
	}

	// An update that changes nothing: no write, no entry.
	same, err := cms.Update(ctx, again, metav1.UpdateOptions{FieldManager: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != first.ResourceVersion || !reflect.DeepEqual(same.ManagedFields, first.ManagedFields) {
		t.Errorf("an update changing nothing wrote: resourceVersion %s -> %s, managedFields %s", first.ResourceVersion, same.ResourceVersion, managedString(same.ManagedFields))
	}

	// Another manager applying the same configuration: the object is
	// unchanged but its ownership is, so it is written; the new entry has
	// no time, which sorts it first.
	shared, err := cms.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if shared.ResourceVersion == first.ResourceVersion {
		t.Errorf("a new co-owner was not recorded")
	}
	checkManagedUntimed(t, "co-owned", shared, []string{"y"},
		owned{"y", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`},
		owned{"x", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`})
	if len(shared.ManagedFields) == 2 && !shared.ManagedFields[1].Time.Equal(first.ManagedFields[0].Time) {
		t.Errorf("x's time changed to %v, was %v", shared.ManagedFields[1].Time, first.ManagedFields[0].Time)
	}

	// A changed value is a change: the time moves on, and the co-owner
	// forced out of its only field disappears.
	changed, err := cms.Apply(ctx, corev1ac.ConfigMap("again", ns).WithData(map[string]string{"k": "w"}), metav1.ApplyOptions{FieldManager: "x", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "changed", changed, owned{"x", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`})
	if len(changed.ManagedFields) == 1 && !changed.ManagedFields[0].Time.After(first.ManagedFields[0].Time.Time) {
		t.Errorf("x's time %v did not move past %v", changed.ManagedFields[0].Time, first.ManagedFields[0].Time)
	}
}

func TestApplyRequiresFieldManager(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	_, err := cs.CoreV1().ConfigMaps(ns).Apply(context.Background(),
		corev1ac.ConfigMap("nomanager", ns).WithData(map[string]string{"k": "v"}), metav1.ApplyOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("apply without a manager: %v, want invalid", err)
	}
	const want = `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`
	if st := statusOf(t, err); st.Message != want || st.Code != 422 {
		t.Errorf("status %d %q, want 422 %q", st.Code, st.Message, want)
	}
}

func TestApplyConflicts(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			cms := cs.CoreV1().ConfigMaps(ns)

			if _, err := cms.Apply(ctx, corev1ac.ConfigMap("ssa", ns).
				WithLabels(map[string]string{"owner": "a"}).
				WithData(map[string]string{"shared": "from-a", "only-a": "1"}), metav1.ApplyOptions{FieldManager: "a"}); err != nil {
				t.Fatalf("apply a: %v", err)
			}
			b := corev1ac.ConfigMap("ssa", ns).WithData(map[string]string{"shared": "from-b", "only-b": "2"})
			_, err := cms.Apply(ctx, b, metav1.ApplyOptions{FieldManager: "b"})
			if !apierrors.IsConflict(err) {
				t.Fatalf("apply b: %v, want a conflict", err)
			}
			st := statusOf(t, err)
			if want := `Apply failed with 1 conflict: conflict with "a": .data.shared`; st.Message != want || st.Code != 409 || st.Reason != metav1.StatusReasonConflict {
				t.Errorf("conflict %d %s %q, want 409 Conflict %q", st.Code, st.Reason, st.Message, want)
			}
			wantCauses := []metav1.StatusCause{{Type: "FieldManagerConflict", Message: `conflict with "a"`, Field: ".data.shared"}}
			if st.Details == nil || !reflect.DeepEqual(st.Details.Causes, wantCauses) ||
				st.Details.Name != "" || st.Details.Kind != "" || st.Details.Group != "" {
				t.Errorf("conflict details %+v, want causes %+v and no name", st.Details, wantCauses)
			}
			got, err := cms.Get(ctx, "ssa", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Data["shared"] != "from-a" || got.Data["only-b"] != "" {
				t.Errorf("a conflicting apply changed the object: %v", got.Data)
			}

			forced, err := cms.Apply(ctx, b, metav1.ApplyOptions{FieldManager: "b", Force: true})
			if err != nil {
				t.Fatalf("forced apply b: %v", err)
			}
			if !reflect.DeepEqual(forced.Data, map[string]string{"shared": "from-b", "only-a": "1", "only-b": "2"}) || forced.Labels["owner"] != "a" {
				t.Errorf("forced %v %v", forced.Labels, forced.Data)
			}
			checkManaged(t, "forced", forced,
				owned{"a", "Apply", "v1", "", `{"f:data":{"f:only-a":{}},"f:metadata":{"f:labels":{"f:owner":{}}}}`},
				owned{"b", "Apply", "v1", "", `{"f:data":{"f:only-b":{},"f:shared":{}}}`})

			// A field an Update wrote conflicts with its manager and
			// version.
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made"}, Data: map[string]string{"k": "v"}},
				metav1.CreateOptions{FieldManager: "creator"}); err != nil {
				t.Fatal(err)
			}
			_, err = cms.Apply(ctx, corev1ac.ConfigMap("made", ns).WithData(map[string]string{"k": "w"}), metav1.ApplyOptions{FieldManager: "c"})
			if !apierrors.IsConflict(err) {
				t.Fatalf("apply over an update: %v, want a conflict", err)
			}
			st = statusOf(t, err)
			wantCauses = []metav1.StatusCause{{Type: "FieldManagerConflict", Message: `conflict with "creator" using v1`, Field: ".data.k"}}
			if want := `Apply failed with 1 conflict: conflict with "creator" using v1: .data.k`; st.Message != want ||
				st.Details == nil || !reflect.DeepEqual(st.Details.Causes, wantCauses) {
				t.Errorf("conflict %q %+v, want %q %+v", st.Message, st.Details, want, wantCauses)
			}
			// Applying the value the other manager set shares the field;
			// the object is unchanged, so the new entry has no time.
			shared, err := cms.Apply(ctx, corev1ac.ConfigMap("made", ns).WithData(map[string]string{"k": "v"}), metav1.ApplyOptions{FieldManager: "c"})
			if err != nil {
				t.Fatalf("apply of the same value: %v", err)
			}
			checkManagedUntimed(t, "shared", shared, []string{"c"},
				owned{"c", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`},
				owned{"creator", "Update", "v1", "", `{"f:data":{".":{},"f:k":{}}}`})
		})
	}
}

func TestApplyConflictsManyFields(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	deps := cs.AppsV1().Deployments(ns)
	if _, err := deps.Apply(ctx, webDeployment(ns, 2, "nginx:1.27"), metav1.ApplyOptions{FieldManager: "a"}); err != nil {
		t.Fatal(err)
	}
	// b agrees on the selector, labels and container name, and differs
	// on the replicas and the image.
	b := webDeployment(ns, 5, "nginx:1.28")
	_, err := deps.Apply(ctx, b, metav1.ApplyOptions{FieldManager: "b"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply b: %v, want a conflict", err)
	}
	st := statusOf(t, err)
	const image = `.spec.template.spec.containers[name="web"].image`
	if want := "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.replicas\n- " + image; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	wantCauses := []metav1.StatusCause{
		{Type: "FieldManagerConflict", Message: `conflict with "a"`, Field: ".spec.replicas"},
		{Type: "FieldManagerConflict", Message: `conflict with "a"`, Field: image},
	}
	if st.Details == nil || !reflect.DeepEqual(st.Details.Causes, wantCauses) {
		t.Errorf("causes %+v, want %+v", st.Details, wantCauses)
	}

	forced, err := deps.Apply(ctx, b, metav1.ApplyOptions{FieldManager: "b", Force: true})
	if err != nil {
		t.Fatalf("forced: %v", err)
	}
	if *forced.Spec.Replicas != 5 || forced.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" {
		t.Errorf("forced spec %+v", forced.Spec)
	}
	checkManaged(t, "forced", forced,
		owned{"a", "Apply", "apps/v1", "", `{"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},` +
			`"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{}}}}}}}`},
		owned{"b", "Apply", "apps/v1", "", webDeploymentFields})
}

func TestApplyExtract(t *testing.T) {
	cs := clientset(t, protobufConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)

	applied := corev1ac.ConfigMap("extract", ns).
		WithLabels(map[string]string{"app": "web"}).
		WithAnnotations(map[string]string{"note": "x"}).
		WithData(map[string]string{"mode": "fast"})
	if _, err := cms.Apply(ctx, applied, metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	// Another manager's apply and an update add fields x does not own.
	if _, err := cms.Apply(ctx, corev1ac.ConfigMap("extract", ns).WithData(map[string]string{"other": "1"}),
		metav1.ApplyOptions{FieldManager: "y"}); err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Get(ctx, "extract", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["edited"] = "yes"
	cm.Labels["tier"] = "front"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "editor"}); err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "after update", cm,
		owned{"x", "Apply", "v1", "", `{"f:data":{"f:mode":{}},"f:metadata":{"f:annotations":{"f:note":{}},"f:labels":{"f:app":{}}}}`},
		owned{"y", "Apply", "v1", "", `{"f:data":{"f:other":{}}}`},
		owned{"editor", "Update", "v1", "", `{"f:data":{"f:edited":{}},"f:metadata":{"f:labels":{"f:tier":{}}}}`})

	got, err := corev1ac.ExtractConfigMap(cm, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, applied) {
		t.Errorf("extracted for x:\n%s\nwant\n%s", acString(got), acString(applied))
	}
	gotY, err := corev1ac.ExtractConfigMap(cm, "y")
	if err != nil {
		t.Fatal(err)
	}
	if want := corev1ac.ConfigMap("extract", ns).WithData(map[string]string{"other": "1"}); !reflect.DeepEqual(gotY, want) {
		t.Errorf("extracted for y:\n%s\nwant\n%s", acString(gotY), acString(want))
	}
	// Extraction reads only Apply entries.
	gotEditor, err := corev1ac.ExtractConfigMap(cm, "editor")
	if err != nil {
		t.Fatal(err)
	}
	if want := corev1ac.ConfigMap("extract", ns); !reflect.DeepEqual(gotEditor, want) {
		t.Errorf("extracted for an updater:\n%s\nwant\n%s", acString(gotEditor), acString(want))
	}

	// The extract, change, apply cycle keeps what x does not mention.
	got.WithData(map[string]string{"mode": "slow"})
	cycled, err := cms.Apply(ctx, got, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	wantData := map[string]string{"mode": "slow", "other": "1", "edited": "yes"}
	if !reflect.DeepEqual(cycled.Data, wantData) || cycled.Labels["app"] != "web" || cycled.Annotations["note"] != "x" {
		t.Errorf("after the extract cycle: %v %v %v", cycled.Labels, cycled.Annotations, cycled.Data)
	}

	deps := cs.AppsV1().Deployments(ns)
	dep := webDeployment(ns, 2, "nginx:1.27")
	created, err := deps.Apply(ctx, dep, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	gotDep, err := appsv1ac.ExtractDeployment(created, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotDep, dep) {
		t.Errorf("extracted deployment:\n%s\nwant\n%s", acString(gotDep), acString(dep))
	}
}

// acString renders an apply configuration for a failure message.
func acString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestApplyStatus(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			deps := cs.AppsV1().Deployments(ns)

			// The status of an object that does not exist is not found.
			status := appsv1ac.Deployment("web", ns).WithStatus(appsv1ac.DeploymentStatus().
				WithReplicas(2).WithReadyReplicas(1).
				WithConditions(appsv1ac.DeploymentCondition().WithType(appsv1.DeploymentAvailable).
					WithStatus(corev1.ConditionTrue).WithReason("MinimumReplicasAvailable")))
			if _, err := deps.ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: "x-status"}); !apierrors.IsNotFound(err) {
				t.Fatalf("status apply before create: %v, want not found", err)
			}

			// Status in a main-resource apply is dropped.
			withStatus := webDeployment(ns, 2, "nginx:1.27")
			withStatus.WithStatus(appsv1ac.DeploymentStatus().WithReplicas(7))
			created, err := deps.Apply(ctx, withStatus, metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if created.Status.Replicas != 0 {
				t.Errorf("status written through the main resource: %+v", created.Status)
			}
			checkManaged(t, "created", created, owned{"x", "Apply", "apps/v1", "", webDeploymentFields})

			// Spec in a status apply is dropped.
			status.WithSpec(appsv1ac.DeploymentSpec().WithReplicas(9))
			got, err := deps.ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: "x-status"})
			if err != nil {
				t.Fatalf("status apply: %v", err)
			}
			if got.Status.Replicas != 2 || got.Status.ReadyReplicas != 1 || len(got.Status.Conditions) != 1 ||
				got.Status.Conditions[0].Type != appsv1.DeploymentAvailable || got.Status.Conditions[0].Reason != "MinimumReplicasAvailable" {
				t.Errorf("status %+v", got.Status)
			}
			if *got.Spec.Replicas != 2 || got.Generation != 1 {
				t.Errorf("a status apply changed the spec: generation %d replicas %d", got.Generation, *got.Spec.Replicas)
			}
			statusFields := `{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{".":{},"f:reason":{},"f:status":{},"f:type":{}}},` +
				`"f:readyReplicas":{},"f:replicas":{}}}`
			checkManaged(t, "status applied", got,
				owned{"x", "Apply", "apps/v1", "", webDeploymentFields},
				owned{"x-status", "Apply", "apps/v1", "status", statusFields})

			extracted, err := appsv1ac.ExtractDeploymentStatus(got, "x-status")
			if err != nil {
				t.Fatal(err)
			}
			want := appsv1ac.Deployment("web", ns).WithStatus(status.Status)
			if !reflect.DeepEqual(extracted, want) {
				t.Errorf("extracted status:\n%s\nwant\n%s", acString(extracted), acString(want))
			}
			if main, err := appsv1ac.ExtractDeployment(got, "x-status"); err != nil || !reflect.DeepEqual(main, appsv1ac.Deployment("web", ns)) {
				t.Errorf("main-resource extract of the status manager: %v %s", err, acString(main))
			}

			// A spec apply leaves the status and its owner alone.
			again, err := deps.Apply(ctx, webDeployment(ns, 4, "nginx:1.27"), metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if again.Status.Replicas != 2 || *again.Spec.Replicas != 4 || again.Generation != 2 {
				t.Errorf("after a spec apply: generation %d spec replicas %d status %+v", again.Generation, *again.Spec.Replicas, again.Status)
			}
			// (x's time moved on: the order depends on the second.)
			checkEntries(t, "spec re-applied", again,
				owned{"x", "Apply", "apps/v1", "", webDeploymentFields},
				owned{"x-status", "Apply", "apps/v1", "status", statusFields})
		})
	}
}

func TestApplyDryRun(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	dry := metav1.ApplyOptions{FieldManager: "x", DryRun: []string{metav1.DryRunAll}}

	// A dry-run create answers with the object, stores nothing.
	got, err := cms.Apply(ctx, corev1ac.ConfigMap("dry", ns).WithData(map[string]string{"x": "value"}), dry)
	if err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if got.Data["x"] != "value" || got.UID == "" || got.CreationTimestamp.IsZero() || got.ResourceVersion != "" {
		t.Errorf("dry-run created %+v", got)
	}
	checkManaged(t, "dry-run created", got, owned{"x", "Apply", "v1", "", `{"f:data":{"f:x":{}}}`})
	if _, err := cms.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after a dry-run create: %v, want not found", err)
	}
	if list, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=dry"}); err != nil || len(list.Items) != 0 {
		t.Errorf("list after a dry-run create: %v %+v", err, list)
	}

	// A dry-run update of an existing object answers with the change,
	// stores nothing: not the data, not the version, not the ownership.
	stored, err := cms.Apply(ctx, corev1ac.ConfigMap("real", ns).WithData(map[string]string{"k": "1"}), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := cms.Apply(ctx, corev1ac.ConfigMap("real", ns).WithData(map[string]string{"k": "2"}),
		metav1.ApplyOptions{FieldManager: "y", Force: true, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run update: %v", err)
	}
	if changed.Data["k"] != "2" {
		t.Errorf("dry-run update answered %v", changed.Data)
	}
	checkManaged(t, "dry-run update", changed, owned{"y", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`})
	// A dry run still conflicts.
	_, err = cms.Apply(ctx, corev1ac.ConfigMap("real", ns).WithData(map[string]string{"k": "3"}),
		metav1.ApplyOptions{FieldManager: "y", DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsConflict(err) || statusOf(t, err).Message != `Apply failed with 1 conflict: conflict with "x": .data.k` {
		t.Errorf("dry-run conflicting apply: %v", err)
	}
	after, err := cms.Get(ctx, "real", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != stored.ResourceVersion || after.Data["k"] != "1" || !reflect.DeepEqual(after.ManagedFields, stored.ManagedFields) {
		t.Errorf("a dry-run apply changed the stored object: %+v", after)
	}
}

func TestControllerRuntimeApply(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	c, err := client.New(config(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// An unstructured apply configuration.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cr", "namespace": ns, "labels": map[string]any{"app": "cr"}},
		"data":     map[string]any{"a": "1"},
	}}
	if err := c.Patch(ctx, u, client.Apply, client.FieldOwner("y"), client.ForceOwnership); err != nil {
		t.Fatalf("unstructured apply: %v", err)
	}
	if u.GetUID() == "" || u.GetResourceVersion() == "" {
		t.Errorf("the applied object was not read back: %v", u.Object)
	}
	checkManaged(t, "unstructured apply", u, owned{"y", "Apply", "v1", "", `{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`})

	// A typed object marshals with "creationTimestamp": null, which is no
	// field of anyone's.
	typed := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: ns},
		Data:       map[string]string{"a": "2", "b": "3"},
	}
	if err := c.Patch(ctx, typed, client.Apply, client.FieldOwner("z"), client.ForceOwnership); err != nil {
		t.Fatalf("typed apply: %v", err)
	}
	if !reflect.DeepEqual(typed.Data, map[string]string{"a": "2", "b": "3"}) || typed.Labels["app"] != "cr" {
		t.Errorf("typed apply read back %v %v", typed.Labels, typed.Data)
	}
	checkManaged(t, "typed apply", typed,
		owned{"y", "Apply", "v1", "", `{"f:metadata":{"f:labels":{"f:app":{}}}}`},
		owned{"z", "Apply", "v1", "", `{"f:data":{"f:a":{},"f:b":{}}}`})

	// A plain Update is recorded as its user agent's Update.
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cr"}, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["extra"] = "e"
	if err := c.Update(ctx, &cm); err != nil {
		t.Fatalf("update: %v", err)
	}
	agent := strings.SplitN(rest.DefaultKubernetesUserAgent(), "/", 2)[0]
	checkManaged(t, "update", &cm,
		owned{"y", "Apply", "v1", "", `{"f:metadata":{"f:labels":{"f:app":{}}}}`},
		owned{"z", "Apply", "v1", "", `{"f:data":{"f:a":{},"f:b":{}}}`},
		owned{agent, "Update", "v1", "", `{"f:data":{"f:extra":{}}}`})

	// An Update with an owner takes a field it changes from its applier.
	cm.Data["b"] = "changed"
	if err := c.Update(ctx, &cm, client.FieldOwner("w")); err != nil {
		t.Fatalf("owned update: %v", err)
	}
	checkManaged(t, "owned update", &cm,
		owned{"y", "Apply", "v1", "", `{"f:metadata":{"f:labels":{"f:app":{}}}}`},
		owned{"z", "Apply", "v1", "", `{"f:data":{"f:a":{}}}`},
		owned{agent, "Update", "v1", "", `{"f:data":{"f:extra":{}}}`},
		owned{"w", "Update", "v1", "", `{"f:data":{"f:b":{}}}`})
	if got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cr", metav1.GetOptions{}); err != nil || !reflect.DeepEqual(got.ManagedFields, cm.ManagedFields) {
		t.Errorf("stored managedFields differ from the answer: %v %s", err, managedString(got.ManagedFields))
	}
}

func TestApplyListTypes(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()

	// Set items are owned by value, map items by their keys; an owner
	// reference is atomic. The owner exists, lest the collector delete
	// its dependent.
	parent, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "parent"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := parent.UID
	cmConfig := corev1ac.ConfigMap("lists", ns).
		WithFinalizers("example.com/keep").
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").WithName("parent").WithUID(uid)).
		WithData(map[string]string{"k": "v"})
	cm, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, cmConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Finalizers) != 1 || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != uid {
		t.Errorf("applied %+v", cm.ObjectMeta)
	}
	checkManaged(t, "lists", cm, owned{"x", "Apply", "v1", "",
		`{"f:data":{"f:k":{}},"f:metadata":{"f:finalizers":{"v:\"example.com/keep\"":{}},` +
			`"f:ownerReferences":{"k:{\"uid\":\"` + string(uid) + `\"}":{}}}}`})
	if got, err := corev1ac.ExtractConfigMap(cm, "x"); err != nil || !reflect.DeepEqual(got, cmConfig) {
		t.Errorf("extracted %v:\n%s\nwant\n%s", err, acString(got), acString(cmConfig))
	}
	// Another manager adds a finalizer of its own: the set merges.
	cm, err = cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("lists", ns).WithFinalizers("example.com/other"), metav1.ApplyOptions{FieldManager: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cm.Finalizers, []string{"example.com/keep", "example.com/other"}) {
		t.Errorf("finalizers %v", cm.Finalizers)
	}
	// Removing them lets the namespace go.
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("lists", ns), metav1.ApplyOptions{FieldManager: "y"}); err != nil {
		t.Fatal(err)
	}
	cm, err = cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("lists", ns).WithData(map[string]string{"k": "v"}), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Finalizers) != 0 || len(cm.OwnerReferences) != 0 {
		t.Errorf("after the managers dropped them: %+v", cm.ObjectMeta)
	}

	// A key member left out takes its default in the key.
	svcConfig := corev1ac.Service("web", ns).WithSpec(corev1ac.ServiceSpec().
		WithSelector(map[string]string{"app": "web"}).
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80)))
	svc, err := cs.CoreV1().Services(ns).Apply(ctx, svcConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}
	checkManaged(t, "service", svc, owned{"x", "Apply", "v1", "",
		`{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{}}},"f:selector":{}}}`})
	if got, err := corev1ac.ExtractService(svc, "x"); err != nil || !reflect.DeepEqual(got, svcConfig) {
		t.Errorf("extracted %v:\n%s\nwant\n%s", err, acString(got), acString(svcConfig))
	}
}

func TestApplyBeforeFirstApply(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			cms := cs.CoreV1().ConfigMaps(ns)
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Data: map[string]string{"k": "v"}},
				metav1.CreateOptions{FieldManager: "creator"})
			if err != nil {
				t.Fatal(err)
			}
			checkManaged(t, "created", cm, owned{"creator", "Update", "v1", "", `{"f:data":{".":{},"f:k":{}}}`})
			// One empty entry resets the ownership: this update is not
			// tracked either.
			cm.ManagedFields = []metav1.ManagedFieldsEntry{{}}
			cm.Labels = map[string]string{"a": "b"}
			if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "resetter"}); err != nil {
				t.Fatal(err)
			}
			checkManaged(t, "reset", cm)

			// The first apply finds the object's fields attributed to a
			// manager of their own.
			_, err = cms.Apply(ctx, corev1ac.ConfigMap("old", ns).WithData(map[string]string{"k": "w"}), metav1.ApplyOptions{FieldManager: "x"})
			if !apierrors.IsConflict(err) {
				t.Fatalf("first apply: %v, want a conflict", err)
			}
			if st := statusOf(t, err); st.Message != `Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.k` {
				t.Errorf("conflict %q", st.Message)
			}
			cm, err = cms.Apply(ctx, corev1ac.ConfigMap("old", ns).WithData(map[string]string{"k": "v"}), metav1.ApplyOptions{FieldManager: "x"})
			if err != nil {
				t.Fatal(err)
			}
			// The object did not change: x gets no time.
			checkManagedUntimed(t, "first apply", cm, []string{"x"},
				owned{"x", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`},
				owned{"before-first-apply", "Update", "v1", "", `{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`})
		})
	}
}

func TestApplyCapsUpdateManagers(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "many"}, Data: map[string]string{"base": "x"}},
		metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	if cm, err = cms.Apply(ctx, corev1ac.ConfigMap("many", ns).WithData(map[string]string{"applied": "x"}), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	// Ten more updaters: the two oldest fold into one bucket of their
	// version, leaving ten Update entries; the Apply entry is not counted.
	for i := 1; i <= 10; i++ {
		key := fmt.Sprintf("k%02d", i)
		cm.Data[key] = "v"
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "m" + key[1:]}); err != nil {
			t.Fatal(err)
		}
	}
	want := []owned{
		{"x", "Apply", "v1", "", `{"f:data":{"f:applied":{}}}`},
		{"ancient-changes", "Update", "v1", "", `{"f:data":{".":{},"f:base":{},"f:k01":{}}}`},
	}
	for i := 2; i <= 10; i++ {
		want = append(want, owned{fmt.Sprintf("m%02d", i), "Update", "v1", "", fmt.Sprintf(`{"f:data":{"f:k%02d":{}}}`, i)})
	}
	checkManaged(t, "after eleven updaters", cm, want...)
}

func TestControllerRuntimeApplyTypedDeployment(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	c, err := client.New(config(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A typed object marshals its zero members too: "creationTimestamp":
	// null in the template, "resources": {}, "strategy": {}, "status": {}.
	// They are applied fields like any other, except the status, which
	// the main resource does not own.
	desired := func() *appsv1.Deployment {
		replicas := int32(2)
		return &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
				},
			},
		}
	}
	dep := desired()
	if err := c.Patch(ctx, dep, client.Apply, client.FieldOwner("op"), client.ForceOwnership); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || dep.Generation != 1 || !dep.Spec.Template.CreationTimestamp.IsZero() {
		t.Errorf("applied %+v", dep.Spec)
	}
	const fields = `{"f:spec":{"f:replicas":{},"f:selector":{},"f:strategy":{},"f:template":{"f:metadata":{"f:creationTimestamp":{},"f:labels":{"f:app":{}}},` +
		`"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}}}}}}`
	checkManaged(t, "typed deployment", dep, owned{"op", "Apply", "apps/v1", "", fields})

	// The reconcile loop applies the same object again: the spec is
	// unchanged. (Its "creationTimestamp": null replaces the object's
	// timestamp in the merge, so upstream, and this server, may stamp a
	// new time: the resourceVersion is not asserted.)
	again := desired()
	if err := c.Patch(ctx, again, client.Apply, client.FieldOwner("op"), client.ForceOwnership); err != nil {
		t.Fatalf("apply again: %v", err)
	}
	if again.Generation != 1 || !again.CreationTimestamp.Equal(&dep.CreationTimestamp) {
		t.Errorf("applying the same typed Deployment: generation %d, creationTimestamp %v (was %v)", again.Generation, again.CreationTimestamp, dep.CreationTimestamp)
	}
	checkManaged(t, "typed deployment again", again, owned{"op", "Apply", "apps/v1", "", fields})
}

// entryOf returns obj's managedFields entry of manager, failing the test
// when there is none.
func entryOf(t *testing.T, obj metav1.Object, manager string) owned {
	t.Helper()
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager {
			var raw string
			if e.FieldsV1 != nil {
				raw = string(e.FieldsV1.Raw)
			}
			return owned{e.Manager, string(e.Operation), e.APIVersion, e.Subresource, raw}
		}
	}
	t.Errorf("no managedFields entry of %s in %s", manager, managedString(obj.GetManagedFields()))
	return owned{}
}

func TestApplyScale(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			deps := cs.AppsV1().Deployments(ns)
			if _, err := deps.Apply(ctx, webDeployment(ns, 2, "nginx:1.27"), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
				t.Fatal(err)
			}
			scale := autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(5))
			_, err := deps.ApplyScale(ctx, "web", scale, metav1.ApplyOptions{FieldManager: "hpa"})
			if !apierrors.IsConflict(err) {
				t.Fatalf("scale apply: %v, want a conflict", err)
			}
			st := statusOf(t, err)
			wantCauses := []metav1.StatusCause{{Type: "FieldManagerConflict", Message: `conflict with "x"`, Field: ".spec.replicas"}}
			if want := `Apply failed with 1 conflict: conflict with "x": .spec.replicas`; st.Message != want || st.Details == nil || !reflect.DeepEqual(st.Details.Causes, wantCauses) {
				t.Errorf("conflict %q %+v, want %q %+v", st.Message, st.Details, want, wantCauses)
			}

			got, err := deps.ApplyScale(ctx, "web", scale, metav1.ApplyOptions{FieldManager: "hpa", Force: true})
			if err != nil {
				t.Fatalf("forced scale apply: %v", err)
			}
			dep, err := deps.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The answer is the Scale of the object, without ownership.
			if got.Spec.Replicas != 5 || got.Status.Selector != "app=web" || got.Name != "web" || got.UID != dep.UID ||
				got.ResourceVersion != dep.ResourceVersion || len(got.ManagedFields) != 0 {
				t.Errorf("scale answered %+v", got)
			}
			if *dep.Spec.Replicas != 5 || dep.Generation != 2 {
				t.Errorf("deployment after the scale apply: generation %d replicas %d", dep.Generation, *dep.Spec.Replicas)
			}
			// The count moved from x's entry to hpa's, recorded in the
			// object's own version under the scale subresource.
			if n := len(dep.ManagedFields); n != 2 {
				t.Errorf("%d entries: %s", n, managedString(dep.ManagedFields))
			}
			if e, want := entryOf(t, dep, "hpa"), (owned{"hpa", "Apply", "apps/v1", "scale", `{"f:spec":{"f:replicas":{}}}`}); e != want {
				t.Errorf("hpa's entry %+v, want %+v", e, want)
			}
			if e, want := entryOf(t, dep, "x"), (owned{"x", "Apply", "apps/v1", "",
				`{"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},` +
					`"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`}); e != want {
				t.Errorf("x's entry %+v, want %+v", e, want)
			}

			// Now x conflicts with the scale subresource's manager.
			_, err = deps.Apply(ctx, webDeployment(ns, 2, "nginx:1.27"), metav1.ApplyOptions{FieldManager: "x"})
			if !apierrors.IsConflict(err) {
				t.Fatalf("apply of the replicas: %v, want a conflict", err)
			}
			if st, want := statusOf(t, err), `Apply failed with 1 conflict: conflict with "hpa" with subresource "scale": .spec.replicas`; st.Message != want {
				t.Errorf("conflict %q, want %q", st.Message, want)
			}
		})
	}
}

func TestApplyAcrossVersions(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	v2 := autoscalingv2ac.HorizontalPodAutoscaler("web", ns).WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().
		WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName("web")).
		WithMinReplicas(1).WithMaxReplicas(5))
	created, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Apply(ctx, v2, metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	aFields := `{"f:spec":{"f:maxReplicas":{},"f:minReplicas":{},"f:scaleTargetRef":{"f:apiVersion":{},"f:kind":{},"f:name":{}}}}`
	checkManaged(t, "v2 apply", created, owned{"a", "Apply", "autoscaling/v2", "", aFields})

	// Read in v1, the entry keeps the version it was written in.
	v1hpas := cs.AutoscalingV1().HorizontalPodAutoscalers(ns)
	old, err := v1hpas.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "read in v1", old, owned{"a", "Apply", "autoscaling/v2", "", aFields})
	if got, err := autoscalingv2ac.ExtractHorizontalPodAutoscaler(created, "a"); err != nil || !reflect.DeepEqual(got, v2) {
		t.Errorf("extracted %v:\n%s\nwant\n%s", err, acString(got), acString(v2))
	}

	// A v1 apply of the same field conflicts with the v2 owner.
	v1 := autoscalingv1ac.HorizontalPodAutoscaler("web", ns).WithSpec(autoscalingv1ac.HorizontalPodAutoscalerSpec().WithMaxReplicas(7))
	_, err = v1hpas.Apply(ctx, v1, metav1.ApplyOptions{FieldManager: "b"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("v1 apply: %v, want a conflict", err)
	}
	if st, want := statusOf(t, err), `Apply failed with 1 conflict: conflict with "a": .spec.maxReplicas`; st.Message != want {
		t.Errorf("conflict %q, want %q", st.Message, want)
	}
	forced, err := v1hpas.Apply(ctx, v1, metav1.ApplyOptions{FieldManager: "b", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if forced.Spec.MaxReplicas != 7 || *forced.Spec.MinReplicas != 1 || forced.Spec.ScaleTargetRef.Name != "web" {
		t.Errorf("forced %+v", forced.Spec)
	}
	checkManaged(t, "forced in v1", forced,
		owned{"a", "Apply", "autoscaling/v2", "", `{"f:spec":{"f:minReplicas":{},"f:scaleTargetRef":{"f:apiVersion":{},"f:kind":{},"f:name":{}}}}`},
		owned{"b", "Apply", "autoscaling/v1", "", `{"f:spec":{"f:maxReplicas":{}}}`})

	// An update in v1 conflicts with a v2 apply, named with its version.
	if _, err := v1hpas.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "made"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	}, metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Apply(ctx, autoscalingv2ac.HorizontalPodAutoscaler("made", ns).
		WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().WithMaxReplicas(4)), metav1.ApplyOptions{FieldManager: "a"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("v2 apply over a v1 update: %v, want a conflict", err)
	}
	if st, want := statusOf(t, err), `Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: .spec.maxReplicas`; st.Message != want {
		t.Errorf("conflict %q, want %q", st.Message, want)
	}
	// Forced, the field moves; the updater keeps the rest in its version.
	made, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Apply(ctx, autoscalingv2ac.HorizontalPodAutoscaler("made", ns).
		WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().WithMaxReplicas(4)), metav1.ApplyOptions{FieldManager: "a", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "forced in v2", made,
		owned{"a", "Apply", "autoscaling/v2", "", `{"f:spec":{"f:maxReplicas":{}}}`},
		owned{"creator", "Update", "autoscaling/v1", "", `{"f:spec":{"f:minReplicas":{},"f:scaleTargetRef":{}}}`})
}

func TestApplyPodAndStatus(t *testing.T) {
	cs := clientset(t, protobufConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	pods := cs.CoreV1().Pods(ns)
	pod := corev1ac.Pod("p", ns).WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().
		WithName("web").WithImage("nginx:1.27").WithArgs("a", "b").
		WithPorts(corev1ac.ContainerPort().WithContainerPort(80))))
	created, err := pods.Apply(ctx, pod, metav1.ApplyOptions{FieldManager: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if c := created.Spec.Containers[0]; c.Ports[0].Protocol != corev1.ProtocolTCP || c.TerminationMessagePath != "/dev/termination-log" || created.Status.Phase != corev1.PodPending {
		t.Errorf("created %+v %+v", created.Spec, created.Status)
	}
	// Atomic lists are owned whole; the port's key takes its defaulted
	// protocol.
	specFields := `{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},` +
		`"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}`
	checkManaged(t, "pod", created, owned{"admin", "Apply", "v1", "", specFields})
	if got, err := corev1ac.ExtractPod(created, "admin"); err != nil || !reflect.DeepEqual(got, pod) {
		t.Errorf("extracted %v:\n%s\nwant\n%s", err, acString(got), acString(pod))
	}

	ready := func(status corev1.ConditionStatus) *corev1ac.PodApplyConfiguration {
		return corev1ac.Pod("p", ns).WithStatus(corev1ac.PodStatus().WithPhase(corev1.PodRunning).
			WithConditions(corev1ac.PodCondition().WithType(corev1.PodReady).WithStatus(status)))
	}
	if _, err := pods.ApplyStatus(ctx, ready(corev1.ConditionTrue), metav1.ApplyOptions{FieldManager: "kubelet"}); err != nil {
		t.Fatalf("status apply: %v", err)
	}
	// A condition of another type merges into the keyed list.
	scheduled := corev1ac.Pod("p", ns).WithStatus(corev1ac.PodStatus().
		WithConditions(corev1ac.PodCondition().WithType(corev1.PodScheduled).WithStatus(corev1.ConditionTrue)))
	got, err := pods.ApplyStatus(ctx, scheduled, metav1.ApplyOptions{FieldManager: "scheduler"})
	if err != nil {
		t.Fatalf("second status apply: %v", err)
	}
	if got.Status.Phase != corev1.PodRunning || len(got.Status.Conditions) != 2 {
		t.Errorf("status %+v", got.Status)
	}
	checkManaged(t, "status", got,
		owned{"admin", "Apply", "v1", "", specFields},
		owned{"kubelet", "Apply", "v1", "status", `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:phase":{}}}`},
		owned{"scheduler", "Apply", "v1", "status", `{"f:status":{"f:conditions":{"k:{\"type\":\"PodScheduled\"}":{".":{},"f:status":{},"f:type":{}}}}}`})

	// Another status manager flipping kubelet's condition conflicts with
	// it, named with its subresource.
	_, err = pods.ApplyStatus(ctx, ready(corev1.ConditionFalse), metav1.ApplyOptions{FieldManager: "other"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("conflicting status apply: %v", err)
	}
	st := statusOf(t, err)
	const path = `.status.conditions[type="Ready"].status`
	if want := `Apply failed with 1 conflict: conflict with "kubelet" with subresource "status": ` + path; st.Message != want {
		t.Errorf("conflict %q, want %q", st.Message, want)
	}
	if want := []metav1.StatusCause{{Type: "FieldManagerConflict", Message: `conflict with "kubelet" with subresource "status"`, Field: path}}; st.Details == nil || !reflect.DeepEqual(st.Details.Causes, want) {
		t.Errorf("causes %+v, want %+v", st.Details, want)
	}

	// The image is the one mutable member of the spec: its owner changes
	// it.
	if _, err := pods.Apply(ctx, corev1ac.Pod("p", ns).WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().
		WithName("web").WithImage("nginx:1.28").WithArgs("a", "b").
		WithPorts(corev1ac.ContainerPort().WithContainerPort(80)))), metav1.ApplyOptions{FieldManager: "admin"}); err != nil {
		t.Fatalf("image change: %v", err)
	}
	// Dropping the ports from the configuration would change them: refused
	// as any pod update is.
	_, err = pods.Apply(ctx, corev1ac.Pod("p", ns).WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().
		WithName("web").WithImage("nginx:1.28").WithArgs("a", "b"))), metav1.ApplyOptions{FieldManager: "admin"})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec: Forbidden: pod updates may not change fields other than") {
		t.Errorf("apply removing the ports: %v, want the pod update refusal", err)
	}
}

func TestApplyClusterScoped(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	roles := cs.RbacV1().ClusterRoles()
	name := ns + "-reader"
	t.Cleanup(func() { _ = roles.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	role := rbacv1ac.ClusterRole(name).WithRules(rbacv1ac.PolicyRule().
		WithAPIGroups("").WithResources("configmaps").WithVerbs("get", "list"))
	created, err := roles.Apply(ctx, role, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Namespace != "" || len(created.Rules) != 1 || len(created.Rules[0].Verbs) != 2 {
		t.Errorf("created %+v", created)
	}
	// The rules are an atomic list: owned whole.
	checkManaged(t, "cluster role", created, owned{"x", "Apply", "rbac.authorization.k8s.io/v1", "", `{"f:rules":{}}`})
	if got, err := rbacv1ac.ExtractClusterRole(created, "x"); err != nil || !reflect.DeepEqual(got, role) {
		t.Errorf("extracted %v:\n%s\nwant\n%s", err, acString(got), acString(role))
	}
	_, err = roles.Apply(ctx, rbacv1ac.ClusterRole(name).WithRules(rbacv1ac.PolicyRule().
		WithAPIGroups("").WithResources("configmaps").WithVerbs("get")), metav1.ApplyOptions{FieldManager: "y"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply of other rules: %v, want a conflict", err)
	}
	if st, want := statusOf(t, err), `Apply failed with 1 conflict: conflict with "x": .rules`; st.Message != want {
		t.Errorf("conflict %q, want %q", st.Message, want)
	}
}

func TestApplyRefusedRequests(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	configMaps := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)

	_, err = cs.CoreV1().ConfigMaps("missing-"+ns).Apply(ctx, corev1ac.ConfigMap("c", "missing-"+ns), metav1.ApplyOptions{FieldManager: "x"})
	if !apierrors.IsNotFound(err) || statusOf(t, err).Message != `namespaces "missing-`+ns+`" not found` {
		t.Errorf("apply into a missing namespace: %v", err)
	}

	first, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("r", ns).WithData(map[string]string{"k": "v"}), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("r", ns).WithData(map[string]string{"k": "w"}), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("r", ns).WithResourceVersion(first.ResourceVersion).
		WithData(map[string]string{"k": "z"}), metav1.ApplyOptions{FieldManager: "x"})
	if want := `Operation cannot be fulfilled on configmaps "r": the object has been modified; please apply your changes to the latest version and try again`; !apierrors.IsConflict(err) || statusOf(t, err).Message != want {
		t.Errorf("apply with a stale resourceVersion: %v, want %q", err, want)
	}

	// Bodies client-go would not send, through the REST client.
	cases := []struct {
		name, body string
		code       int32
		reason     metav1.StatusReason
		msg        string
	}{
		{"unknown field", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r","namespace":"` + ns + `"},"spec":{"x":1}}`,
			500, metav1.StatusReasonUnknown, "failed to create typed patch object (" + ns + "/r; /v1, Kind=ConfigMap): .spec: field not declared in schema"},
		{"managedFields in the body", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r","managedFields":[{"manager":"z"}]}}`,
			400, metav1.StatusReasonBadRequest, "metadata.managedFields must be nil"},
		{"empty managedFields in the body", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r","managedFields":[]}}`,
			400, metav1.StatusReasonBadRequest, "metadata.managedFields must be nil"},
		{"another version", `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"r"}}`,
			400, metav1.StatusReasonBadRequest, "invalid object type: /v2, Kind=ConfigMap"},
		{"another name", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`,
			400, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (r)"},
		{"another namespace", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r","namespace":"other"}}`,
			400, metav1.StatusReasonBadRequest, "the namespace of the provided object does not match the namespace sent on the request"},
		{"a uid for a new object", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new","uid":"abc"}}`,
			409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on configmaps "new": uid mismatch: the provided object specified uid abc, and no existing object was found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := "r"
			if strings.Contains(c.body, `"name":"new"`) {
				target = "new"
			}
			err := cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace(ns).Resource("configmaps").Name(target).
				Param("fieldManager", "x").Body([]byte(c.body)).Do(ctx).Error()
			if err == nil {
				t.Fatal("applied")
			}
			if st := statusOf(t, err); st.Code != c.code || st.Reason != c.reason || st.Message != c.msg {
				t.Errorf("status %d %q %q, want %d %q %q", st.Code, st.Reason, st.Message, c.code, c.reason, c.msg)
			}
		})
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "r", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "w" {
		t.Errorf("refused applies changed the object: %v %v", err, got.Data)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "new", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused apply created an object: %v", err)
	}
	// A null list is no list.
	if err := cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace(ns).Resource("configmaps").Name("r").Param("fieldManager", "x").
		Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r","managedFields":null},"data":{"k":"w"}}`)).Do(ctx).Error(); err != nil {
		t.Errorf("apply with null managedFields: %v", err)
	}

	// The dynamic client applies as the typed one does.
	u, err := configMaps.Apply(ctx, "d", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "d"}, "data": map[string]any{"k": "v"}}}, metav1.ApplyOptions{FieldManager: "dyn"})
	if err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "dynamic", u, owned{"dyn", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`})
}

func TestControllerRuntimeApplyStatusAndDryRun(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	c, err := client.New(config(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// desired is the configuration the operator applies.
	desired := func(labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": ns, "labels": labels},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}},
				},
			},
		}}
	}
	dep := desired(nil)
	unstructured.RemoveNestedField(dep.Object, "metadata", "labels")

	// A dry run answers and stores nothing.
	dry := dep.DeepCopy()
	if err := c.Patch(ctx, dry, client.Apply, client.FieldOwner("op"), client.DryRunAll); err != nil {
		t.Fatalf("dry-run apply: %v", err)
	}
	if dry.GetUID() == "" || dry.GetResourceVersion() != "" || len(dry.GetManagedFields()) != 1 {
		t.Errorf("dry run answered %v", dry.Object["metadata"])
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after a dry run: %v, want not found", err)
	}

	if err := c.Patch(ctx, dep, client.Apply, client.FieldOwner("op")); err != nil {
		t.Fatalf("apply: %v", err)
	}
	// The status through the status client.
	status := &unstructured.Unstructured{}
	status.SetAPIVersion("apps/v1")
	status.SetKind("Deployment")
	status.SetName("web")
	status.SetNamespace(ns)
	_ = unstructured.SetNestedField(status.Object, map[string]any{"observedGeneration": int64(1), "replicas": int64(1)}, "status")
	if err := c.Status().Patch(ctx, status, client.Apply, client.FieldOwner("op-status"), client.ForceOwnership); err != nil {
		t.Fatalf("status apply: %v", err)
	}
	if got, _, _ := unstructured.NestedInt64(status.Object, "status", "observedGeneration"); got != 1 {
		t.Errorf("status answered %v", status.Object["status"])
	}
	checkManaged(t, "status apply", status,
		owned{"op", "Apply", "apps/v1", "", `{"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},` +
			`"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`},
		owned{"op-status", "Apply", "apps/v1", "status", `{"f:status":{"f:observedGeneration":{},"f:replicas":{}}}`})

	// A change of labels alone is no change of the spec: the generation
	// stays.
	dep = desired(map[string]any{"tier": "front"})
	if err := c.Patch(ctx, dep, client.Apply, client.FieldOwner("op")); err != nil {
		t.Fatalf("label apply: %v", err)
	}
	if dep.GetGeneration() != 1 || dep.GetLabels()["tier"] != "front" {
		t.Errorf("after a label apply: generation %d labels %v", dep.GetGeneration(), dep.GetLabels())
	}
}

func TestApplyAgainNoOpServiceAndNamespace(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	svcs := cs.CoreV1().Services(ns)
	svcConfig := corev1ac.Service("web", ns).WithLabels(map[string]string{"app": "web"}).WithSpec(corev1ac.ServiceSpec().
		WithSelector(map[string]string{"app": "web"}).WithPorts(corev1ac.ServicePort().WithPort(80)))
	svc, err := svcs.Apply(ctx, svcConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("service %+v", svc.Spec)
	}
	nsName := ns + "-applied"
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), nsName, metav1.DeleteOptions{}) })
	nsConfig := corev1ac.Namespace(nsName).WithLabels(map[string]string{"team": "a"})
	created, err := cs.CoreV1().Namespaces().Apply(ctx, nsConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// The name label comes from defaulting: nobody's.
	if created.Labels["kubernetes.io/metadata.name"] != nsName || created.Spec.Finalizers[0] != "kubernetes" {
		t.Errorf("namespace %+v", created)
	}
	checkManaged(t, "namespace", created, owned{"x", "Apply", "v1", "", `{"f:metadata":{"f:labels":{"f:team":{}}}}`})

	nextSecond(t, svc.ManagedFields[0].Time)
	again, err := svcs.Apply(ctx, svcConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != svc.ResourceVersion || again.Spec.ClusterIP != svc.Spec.ClusterIP {
		t.Errorf("applying the same Service wrote: resourceVersion %s -> %s, clusterIP %s -> %s", svc.ResourceVersion, again.ResourceVersion, svc.Spec.ClusterIP, again.Spec.ClusterIP)
	}
	nsAgain, err := cs.CoreV1().Namespaces().Apply(ctx, nsConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if nsAgain.ResourceVersion != created.ResourceVersion {
		t.Errorf("applying the same Namespace wrote: resourceVersion %s -> %s", created.ResourceVersion, nsAgain.ResourceVersion)
	}
}

func TestApplyFieldManagerTooLong(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	_, err := cs.CoreV1().ConfigMaps(ns).Apply(context.Background(), corev1ac.ConfigMap("long", ns),
		metav1.ApplyOptions{FieldManager: strings.Repeat("m", 129)})
	const want = `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes`
	if !apierrors.IsInvalid(err) || statusOf(t, err).Message != want {
		t.Errorf("apply with a long manager: %v, want %q", err, want)
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Apply(context.Background(), corev1ac.ConfigMap("bell", ns),
		metav1.ApplyOptions{FieldManager: "a\ab"})
	const bell = `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\ab": invalid character U+0007 (at position 1)`
	if !apierrors.IsInvalid(err) || statusOf(t, err).Message != bell {
		t.Errorf("apply with a non-printable manager: %v, want %q", err, bell)
	}
}

func TestApplySecretsKeysAndFinalizers(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()

	// stringData is written into data; the applier owns what it sent.
	s, err := cs.CoreV1().Secrets(ns).Apply(ctx, corev1ac.Secret("s", ns).WithType(corev1.SecretTypeOpaque).
		WithStringData(map[string]string{"k": "v"}), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["k"]) != "v" || len(s.StringData) != 0 {
		t.Errorf("secret data %v stringData %v", s.Data, s.StringData)
	}
	checkManaged(t, "secret", s, owned{"x", "Apply", "v1", "", `{"f:stringData":{"f:k":{}},"f:type":{}}`})

	// A configuration repeating a key of a keyed list is malformed: the
	// server's error, as upstream, not a Status of its own.
	dup := webDeployment(ns, 1, "nginx")
	dup.Spec.Template.Spec.WithContainers(corev1ac.Container().WithName("web").WithImage("busybox"))
	_, err = cs.AppsV1().Deployments(ns).Apply(ctx, dup, metav1.ApplyOptions{FieldManager: "x"})
	want := "failed to create typed patch object (" + ns + "/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name=\"web\"]"
	if st := statusOf(t, err); st.Code != 500 || st.Reason != metav1.StatusReasonUnknown || st.Message != want {
		t.Errorf("duplicate keys: %d %q %q, want 500 %q", st.Code, st.Reason, st.Message, want)
	}

	// Deletion does not touch ownership; the applier dropping its
	// finalizer lets the object go.
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("f", ns).WithFinalizers("example.com/f").WithData(map[string]string{"a": "b"}),
		metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "f", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting, err := cms.Get(ctx, "f", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if deleting.DeletionTimestamp == nil || !reflect.DeepEqual(deleting.ManagedFields, cm.ManagedFields) {
		t.Errorf("after delete: deletionTimestamp %v, managedFields %s (were %s)", deleting.DeletionTimestamp, managedString(deleting.ManagedFields), managedString(cm.ManagedFields))
	}
	if _, err := cms.Apply(ctx, corev1ac.ConfigMap("f", ns).WithData(map[string]string{"a": "b"}), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatalf("apply without the finalizer: %v", err)
	}
	if _, err := cms.Get(ctx, "f", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after the last finalizer went: %v, want not found", err)
	}
}

func TestControllerRuntimePatchOwnership(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	base, err := client.New(config(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every write of this client is recorded as "owner"'s.
	c := client.WithFieldOwner(base, "owner")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "create", cm, owned{"owner", "Update", "v1", "", `{"f:data":{".":{},"f:k":{}}}`})

	// A merge patch by the plain client: its user agent's entry.
	orig := cm.DeepCopy()
	cm.Labels = map[string]string{"l": "v"}
	if err := base.Patch(ctx, cm, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	agent := strings.SplitN(rest.DefaultKubernetesUserAgent(), "/", 2)[0]
	// (Entries of one second are ordered by name, else by time: the
	// order is not asserted.)
	checkEntries(t, "merge patch", cm,
		owned{"owner", "Update", "v1", "", `{"f:data":{".":{},"f:k":{}}}`},
		owned{agent, "Update", "v1", "", `{"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`})

	// A strategic merge patch through the owner client changes its value
	// of k and adds another: both its.
	orig = cm.DeepCopy()
	cm.Data["k"] = "w"
	cm.Data["k2"] = "v2"
	if err := c.Patch(ctx, cm, client.StrategicMergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, "strategic patch", cm,
		owned{"owner", "Update", "v1", "", `{"f:data":{".":{},"f:k":{},"f:k2":{}}}`},
		owned{agent, "Update", "v1", "", `{"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`})
}

// checkEntries asserts that obj's managedFields are want in any order.
func checkEntries(t *testing.T, what string, obj metav1.Object, want ...owned) {
	t.Helper()
	if n := len(obj.GetManagedFields()); n != len(want) {
		t.Errorf("%s: %d managedFields entries, want %d: %s", what, n, len(want), managedString(obj.GetManagedFields()))
	}
	for _, w := range want {
		if got := entryOf(t, obj, w.manager); got != w {
			t.Errorf("%s: entry %+v, want %+v", what, got, w)
		}
	}
}

func TestApplyServerFilledFields(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()

	// A field its applier stops setting goes, and its default comes back.
	deps := cs.AppsV1().Deployments(ns)
	if _, err := deps.Apply(ctx, webDeployment(ns, 3, "nginx"), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	noReplicas := webDeployment(ns, 0, "nginx")
	noReplicas.Spec.Replicas = nil
	dep, err := deps.Apply(ctx, noReplicas, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 1 || dep.Generation != 2 {
		t.Errorf("replicas %d generation %d, want the default 1 and 2", *dep.Spec.Replicas, dep.Generation)
	}

	// Fields the server fills in (a Job's selector and template labels, a
	// Service's node port) are nobody's: applying again keeps them and
	// writes nothing.
	job := batchv1ac.Job("j", ns).WithSpec(batchv1ac.JobSpec().WithTemplate(corev1ac.PodTemplateSpec().
		WithSpec(corev1ac.PodSpec().WithRestartPolicy(corev1.RestartPolicyNever).
			WithContainers(corev1ac.Container().WithName("c").WithImage("busybox")))))
	j, err := cs.BatchV1().Jobs(ns).Apply(ctx, job, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if j.Spec.Selector == nil || len(j.Spec.Template.Labels) == 0 {
		t.Errorf("job selector %v template labels %v", j.Spec.Selector, j.Spec.Template.Labels)
	}
	svcConfig := corev1ac.Service("np", ns).WithSpec(corev1ac.ServiceSpec().WithType(corev1.ServiceTypeNodePort).
		WithSelector(map[string]string{"app": "web"}).WithPorts(corev1ac.ServicePort().WithPort(80)))
	svc, err := cs.CoreV1().Services(ns).Apply(ctx, svcConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Ports[0].NodePort == 0 {
		t.Errorf("no node port allocated: %+v", svc.Spec.Ports)
	}
	checkManaged(t, "node port service", svc, owned{"x", "Apply", "v1", "",
		`{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:selector":{},"f:type":{}}}`})

	nextSecond(t, svc.ManagedFields[0].Time)
	j2, err := cs.BatchV1().Jobs(ns).Apply(ctx, job, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatalf("job again: %v", err)
	}
	if j2.ResourceVersion != j.ResourceVersion || !reflect.DeepEqual(j2.Spec.Selector, j.Spec.Selector) {
		t.Errorf("applying the same Job wrote: resourceVersion %s -> %s", j.ResourceVersion, j2.ResourceVersion)
	}
	svc2, err := cs.CoreV1().Services(ns).Apply(ctx, svcConfig, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatalf("service again: %v", err)
	}
	if svc2.ResourceVersion != svc.ResourceVersion || svc2.Spec.Ports[0].NodePort != svc.Spec.Ports[0].NodePort {
		t.Errorf("applying the same Service wrote: resourceVersion %s -> %s, node port %d -> %d",
			svc.ResourceVersion, svc2.ResourceVersion, svc.Spec.Ports[0].NodePort, svc2.Spec.Ports[0].NodePort)
	}
}

func TestOwnershipAcrossEventGroups(t *testing.T) {
	cs := clientset(t, protobufConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}, Reason: "R", Message: "m", Type: corev1.EventTypeNormal},
		metav1.CreateOptions{FieldManager: "core"}); err != nil {
		t.Fatal(err)
	}
	// The events group serves the same objects: a write there keeps the
	// core group's entry, recorded in its own version.
	ev, err := cs.EventsV1().Events(ns).Get(ctx, "e", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev.Labels = map[string]string{"l": "v"}
	if ev, err = cs.EventsV1().Events(ns).Update(ctx, ev, metav1.UpdateOptions{FieldManager: "grp"}); err != nil {
		t.Fatal(err)
	}
	coreFields := `{"f:involvedObject":{},"f:message":{},"f:reason":{},"f:type":{}}`
	checkManaged(t, "events group update", ev,
		owned{"core", "Update", "v1", "", coreFields},
		owned{"grp", "Update", "events.k8s.io/v1", "", `{"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`})
	// And the other way round.
	core, err := cs.CoreV1().Events(ns).Get(ctx, "e", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core.Annotations = map[string]string{"a": "b"}
	if core, err = cs.CoreV1().Events(ns).Update(ctx, core, metav1.UpdateOptions{FieldManager: "core2"}); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, "core update", core,
		owned{"core", "Update", "v1", "", coreFields},
		owned{"grp", "Update", "events.k8s.io/v1", "", `{"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`},
		owned{"core2", "Update", "v1", "", `{"f:metadata":{"f:annotations":{".":{},"f:a":{}}}}`})
}

func TestUpdateWithoutManagedFieldsKeepsThem(t *testing.T) {
	cs := clientset(t, protobufConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("kept", ns).WithData(map[string]string{"a": "1"}), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// A controller whose cache strips managedFields updates what it read.
	cm.ManagedFields = nil
	cm.Data["b"] = "2"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "ctrl"}); err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "update without managedFields", cm,
		owned{"x", "Apply", "v1", "", `{"f:data":{"f:a":{}}}`},
		owned{"ctrl", "Update", "v1", "", `{"f:data":{"f:b":{}}}`})
}

func TestUpdateReplacesManagedFields(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Apply(ctx, corev1ac.ConfigMap("own", ns).WithData(map[string]string{"a": "1"}), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("own", ns).WithData(map[string]string{"b": "2"}), metav1.ApplyOptions{FieldManager: "y"})
	if err != nil {
		t.Fatal(err)
	}
	// An update sending a list without y's entry releases y's fields:
	// the list sent replaces the stored one.
	cm.ManagedFields = cm.ManagedFields[:1]
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "editor"}); err != nil {
		t.Fatal(err)
	}
	checkManaged(t, "replaced", cm, owned{"x", "Apply", "v1", "", `{"f:data":{"f:a":{}}}`})
	// y no longer owns b: another manager may set it without a conflict.
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("own", ns).WithData(map[string]string{"b": "3"}), metav1.ApplyOptions{FieldManager: "z"})
	if err != nil {
		t.Fatalf("apply of a released field: %v", err)
	}
	checkManaged(t, "taken", cm,
		owned{"x", "Apply", "v1", "", `{"f:data":{"f:a":{}}}`},
		owned{"z", "Apply", "v1", "", `{"f:data":{"f:b":{}}}`})
}

func TestApplyAgainSendsNoWatchEvent(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cms := cs.CoreV1().ConfigMaps(ns)
	config := corev1ac.ConfigMap("w", ns).WithData(map[string]string{"k": "v"})
	first, err := cms.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion, FieldSelector: "metadata.name=w"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	nextSecond(t, first.ManagedFields[0].Time)
	if _, err := cms.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Apply(ctx, corev1ac.ConfigMap("w", ns).WithData(map[string]string{"k": "changed"}), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	// The first event after the first apply is the change: the apply that
	// changed nothing sent none.
	select {
	case ev, ok := <-w.ResultChan():
		cm, _ := ev.Object.(*corev1.ConfigMap)
		if !ok || ev.Type != watch.Modified || cm == nil || cm.Data["k"] != "changed" {
			t.Errorf("first event %s %+v, want the change", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no event")
	}
}

func TestApplyInTerminatingNamespace(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	// A finalizer holds the namespace in Terminating.
	if _, err := cms.Apply(ctx, corev1ac.ConfigMap("hold", ns).WithFinalizers("example.com/hold"), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the namespace to terminate", func() bool {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err == nil && n.Status.Phase == corev1.NamespaceTerminating
	})
	// An apply that would create is refused; one that changes an object
	// already there is not.
	_, err := cms.Apply(ctx, corev1ac.ConfigMap("new", ns), metav1.ApplyOptions{FieldManager: "x"})
	st := statusOf(t, err)
	wantCauses := []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "namespace " + ns + " is being terminated", Field: "metadata.namespace"}}
	if want := `configmaps "new" is forbidden: unable to create new content in namespace ` + ns + ` because it is being terminated`; !apierrors.IsForbidden(err) ||
		st.Message != want || st.Details == nil || !reflect.DeepEqual(st.Details.Causes, wantCauses) {
		t.Errorf("create by apply in a terminating namespace: %v %+v, want %q %+v", err, st.Details, want, wantCauses)
	}
	if _, err := cms.Apply(ctx, corev1ac.ConfigMap("hold", ns), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Errorf("apply releasing the finalizer: %v", err)
	}
	eventually(t, "the namespace to go", func() bool {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func TestApplyAgainWritesNothingAcrossTypes(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	opts := metav1.ApplyOptions{FieldManager: "x"}
	podSpec := func() *corev1ac.PodSpecApplyConfiguration {
		return corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage("busybox").
			WithPorts(corev1ac.ContainerPort().WithContainerPort(8080)).
			WithEnv(corev1ac.EnvVar().WithName("A").WithValue("1")).
			WithResources(corev1ac.ResourceRequirements().WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")})))
	}
	labels := map[string]string{"app": "a"}
	selector := metav1ac.LabelSelector().WithMatchLabels(labels)
	template := func() *corev1ac.PodTemplateSpecApplyConfiguration {
		return corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(podSpec())
	}
	// Each applies its configuration and returns the resourceVersion.
	// (Not a StatefulSet's volumeClaimTemplates: an atomic list whose
	// items the server fills in differs from its configuration at every
	// apply, here as upstream.)
	appliers := map[string]func() (string, error){
		"pod": func() (string, error) {
			o, err := cs.CoreV1().Pods(ns).Apply(ctx, corev1ac.Pod("p", ns).WithSpec(podSpec()), opts)
			return rvOf(o, err)
		},
		"statefulset": func() (string, error) {
			o, err := cs.AppsV1().StatefulSets(ns).Apply(ctx, appsv1ac.StatefulSet("s", ns).WithSpec(appsv1ac.StatefulSetSpec().
				WithSelector(selector).WithServiceName("s").WithTemplate(template())), opts)
			return rvOf(o, err)
		},
		"daemonset": func() (string, error) {
			o, err := cs.AppsV1().DaemonSets(ns).Apply(ctx, appsv1ac.DaemonSet("d", ns).WithSpec(appsv1ac.DaemonSetSpec().
				WithSelector(selector).WithTemplate(template())), opts)
			return rvOf(o, err)
		},
		"cronjob": func() (string, error) {
			o, err := cs.BatchV1().CronJobs(ns).Apply(ctx, batchv1ac.CronJob("c", ns).WithSpec(batchv1ac.CronJobSpec().
				WithSchedule("*/5 * * * *").WithJobTemplate(batchv1ac.JobTemplateSpec().WithSpec(batchv1ac.JobSpec().
				WithTemplate(corev1ac.PodTemplateSpec().WithSpec(podSpec().WithRestartPolicy(corev1.RestartPolicyNever)))))), opts)
			return rvOf(o, err)
		},
		"hpa v2": func() (string, error) {
			o, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Apply(ctx, autoscalingv2ac.HorizontalPodAutoscaler("h", ns).
				WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().WithMaxReplicas(3).
					WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName("d"))), opts)
			return rvOf(o, err)
		},
		"hpa v1": func() (string, error) {
			o, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Apply(ctx, autoscalingv1ac.HorizontalPodAutoscaler("h1", ns).
				WithSpec(autoscalingv1ac.HorizontalPodAutoscalerSpec().WithMaxReplicas(3).WithTargetCPUUtilizationPercentage(50).
					WithScaleTargetRef(autoscalingv1ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName("d"))), opts)
			return rvOf(o, err)
		},
		"cluster role": func() (string, error) {
			o, err := cs.RbacV1().ClusterRoles().Apply(ctx, rbacv1ac.ClusterRole(ns+"-r").WithRules(rbacv1ac.PolicyRule().
				WithAPIGroups("").WithResources("pods").WithVerbs("get")), opts)
			return rvOf(o, err)
		},
		"role binding": func() (string, error) {
			o, err := cs.RbacV1().RoleBindings(ns).Apply(ctx, rbacv1ac.RoleBinding("rb", ns).
				WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("ClusterRole").WithName("view")).
				WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName("default").WithNamespace(ns)), opts)
			return rvOf(o, err)
		},
		"service account": func() (string, error) {
			o, err := cs.CoreV1().ServiceAccounts(ns).Apply(ctx, corev1ac.ServiceAccount("sa", ns).WithLabels(labels), opts)
			return rvOf(o, err)
		},
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), ns+"-r", metav1.DeleteOptions{}) })
	first := map[string]string{}
	for name, apply := range appliers {
		rv, err := apply()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		first[name] = rv
	}
	nextSecond(t, &metav1.Time{Time: time.Now()})
	for name, apply := range appliers {
		rv, err := apply()
		if err != nil {
			t.Errorf("%s again: %v", name, err)
		} else if rv != first[name] {
			t.Errorf("%s: applying the same configuration wrote: resourceVersion %s -> %s", name, first[name], rv)
		}
	}
}

// rvOf is the resourceVersion of an object a typed client returned.
func rvOf(obj metav1.Object, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return obj.GetResourceVersion(), nil
}

func TestApplyConflictsWithManyManagers(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Apply(ctx, corev1ac.ConfigMap("m", ns).WithData(map[string]string{"x": "1"}), metav1.ApplyOptions{FieldManager: "a"}); err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Get(ctx, "m", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["y"] = "1"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "b"}); err != nil {
		t.Fatal(err)
	}
	_, err = cms.Apply(ctx, corev1ac.ConfigMap("m", ns).WithData(map[string]string{"x": "2", "y": "2"}), metav1.ApplyOptions{FieldManager: "c"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply: %v, want a conflict", err)
	}
	st := statusOf(t, err)
	// Managers in order, each with its paths.
	if want := "Apply failed with 2 conflicts: conflicts with \"a\":\n- .data.x\nconflicts with \"b\" using v1:\n- .data.y"; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	// One cause a field, in no promised order.
	want := []metav1.StatusCause{
		{Type: "FieldManagerConflict", Message: `conflict with "a"`, Field: ".data.x"},
		{Type: "FieldManagerConflict", Message: `conflict with "b" using v1`, Field: ".data.y"},
	}
	var got []metav1.StatusCause
	if st.Details != nil {
		got = slices.Clone(st.Details.Causes)
	}
	slices.SortFunc(got, func(p, q metav1.StatusCause) int { return strings.Compare(p.Field, q.Field) })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("causes %+v, want %+v", got, want)
	}
}

func TestApplyScaleAndStatusOtherKinds(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	labels := map[string]string{"app": "a"}
	template := corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
		WithContainers(corev1ac.Container().WithName("c").WithImage("busybox")))
	if _, err := cs.AppsV1().StatefulSets(ns).Apply(ctx, appsv1ac.StatefulSet("s", ns).WithSpec(appsv1ac.StatefulSetSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).WithServiceName("s").WithTemplate(template)), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().ReplicaSets(ns).Apply(ctx, appsv1ac.ReplicaSet("r", ns).WithSpec(appsv1ac.ReplicaSetSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).WithTemplate(template)), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	scale := autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3))
	// Neither configuration set the count: no conflict.
	sts, err := cs.AppsV1().StatefulSets(ns).ApplyScale(ctx, "s", scale, metav1.ApplyOptions{FieldManager: "scaler"})
	if err != nil || sts.Spec.Replicas != 3 || sts.Status.Selector != "app=a" {
		t.Errorf("statefulset scale apply: %v %+v", err, sts)
	}
	rs, err := cs.AppsV1().ReplicaSets(ns).ApplyScale(ctx, "r", scale, metav1.ApplyOptions{FieldManager: "scaler"})
	if err != nil || rs.Spec.Replicas != 3 {
		t.Errorf("replicaset scale apply: %v %+v", err, rs)
	}
	got, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 3 {
		t.Errorf("statefulset replicas %d", *got.Spec.Replicas)
	}
	if e := entryOf(t, got, "scaler"); e != (owned{"scaler", "Apply", "apps/v1", "scale", `{"f:spec":{"f:replicas":{}}}`}) {
		t.Errorf("scaler's entry %+v", e)
	}

	// A cluster-scoped object's status.
	name := ns + "-node"
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := cs.CoreV1().Nodes().Apply(ctx, corev1ac.Node(name).WithLabels(labels), metav1.ApplyOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	node, err := cs.CoreV1().Nodes().ApplyStatus(ctx, corev1ac.Node(name).WithStatus(corev1ac.NodeStatus().
		WithConditions(corev1ac.NodeCondition().WithType(corev1.NodeReady).WithStatus(corev1.ConditionTrue))), metav1.ApplyOptions{FieldManager: "kubelet"})
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, "node", node,
		owned{"x", "Apply", "v1", "", `{"f:metadata":{"f:labels":{"f:app":{}}}}`},
		owned{"kubelet", "Apply", "v1", "status", `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}}}}`})
}

func TestApplyConflictsWithOwnUpdate(t *testing.T) {
	cs := clientset(t, jsonConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "self"}, Data: map[string]string{"k": "v"}},
		metav1.CreateOptions{FieldManager: "x"}); err != nil {
		t.Fatal(err)
	}
	// A manager's updates and its applies are two entries: the apply
	// conflicts with the update.
	_, err := cms.Apply(ctx, corev1ac.ConfigMap("self", ns).WithData(map[string]string{"k": "w"}), metav1.ApplyOptions{FieldManager: "x"})
	if !apierrors.IsConflict(err) || statusOf(t, err).Message != `Apply failed with 1 conflict: conflict with "x" using v1: .data.k` {
		t.Fatalf("apply over the manager's own update: %v", err)
	}
	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("self", ns).WithData(map[string]string{"k": "w"}), metav1.ApplyOptions{FieldManager: "x", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	// The update entry kept only the map it created: a member without
	// children is a leaf.
	checkManaged(t, "forced", cm,
		owned{"x", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`},
		owned{"x", "Update", "v1", "", `{"f:data":{}}`})
}

func TestUntimedEntryRoundTrips(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			cs := clientset(t, answeredIn(t, enc.config(t), enc.mediaType))
			ns := namespace(t, clientset(t, config(t)))
			ctx := context.Background()
			cms := cs.CoreV1().ConfigMaps(ns)
			config := corev1ac.ConfigMap("rt", ns).WithData(map[string]string{"k": "v"})
			if _, err := cms.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "x"}); err != nil {
				t.Fatal(err)
			}
			cm, err := cms.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "w"})
			if err != nil {
				t.Fatal(err)
			}
			// The entries read back, untimed one included, go back whole
			// with an update and are stored as they were.
			cm.Data["other"] = "1"
			updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "editor"})
			if err != nil {
				t.Fatal(err)
			}
			checkManagedUntimed(t, "round trip", updated, []string{"w"},
				owned{"w", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`},
				owned{"x", "Apply", "v1", "", `{"f:data":{"f:k":{}}}`},
				owned{"editor", "Update", "v1", "", `{"f:data":{"f:other":{}}}`})
		})
	}
}

func TestWritesKeepCreationTimestamp(t *testing.T) {
	cs := clientset(t, protobufConfig(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(ns)
	created, err := cms.Apply(ctx, corev1ac.ConfigMap("ts", ns).WithData(map[string]string{"k": "v"}), metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// An object rebuilt by a client with another creation time updates;
	// the stored time stays.
	other := metav1.NewTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	cm := created.DeepCopy()
	cm.CreationTimestamp = other
	cm.Data["k"] = "w"
	updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "x"})
	if err != nil {
		t.Fatalf("update with another creationTimestamp: %v", err)
	}
	applied, err := cms.Apply(ctx, corev1ac.ConfigMap("ts", ns).WithCreationTimestamp(other).WithData(map[string]string{"k": "v"}),
		metav1.ApplyOptions{FieldManager: "x", Force: true})
	if err != nil {
		t.Fatalf("apply with another creationTimestamp: %v", err)
	}
	for _, got := range []*corev1.ConfigMap{updated, applied} {
		if !got.CreationTimestamp.Equal(&created.CreationTimestamp) {
			t.Errorf("creationTimestamp %v, want the stored %v", got.CreationTimestamp, created.CreationTimestamp)
		}
	}
}

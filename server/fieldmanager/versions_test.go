package fieldmanager

import (
	"errors"
	"testing"

	"platd/server/schema"
)

// hpaTracker tracks writes of autoscaling/v1 HorizontalPodAutoscalers
// whose managers may have recorded their fields in autoscaling/v2. The
// conversion relabels the object; fails, when fail is set, for any
// version but v9, which is unknown.
func hpaTracker(t *testing.T, c *clock, fail *bool) *Resource {
	v1 := kindSchema(t, "autoscaling", "v1", "HorizontalPodAutoscaler")
	v2 := kindSchema(t, "autoscaling", "v2", "HorizontalPodAutoscaler")
	convert := func(obj map[string]any, from, to string) (map[string]any, error) {
		if *fail {
			return nil, errors.New("conversion failed")
		}
		out := schema.DeepCopy(obj).(map[string]any)
		out["apiVersion"] = to
		return out, nil
	}
	return New(Options{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Schema: v1,
		Reset: []string{"status"}, Versions: map[string]*schema.Schema{"autoscaling/v2": v2}, Convert: convert, Now: c.now})
}

func TestUpdateAcrossVersions(t *testing.T) {
	c := &clock{}
	c.set(1)
	fail := false
	r := hpaTracker(t, c, &fail)
	v2 := mfEntry("m2", "Update", "autoscaling/v2", "", 0, `{"f:spec":{"f:maxReplicas":{},"f:minReplicas":{}}}`)
	gone := mfEntry("old", "Update", "autoscaling/v9", "", 0, `{"f:spec":{"f:scaleTargetRef":{}}}`)
	live := object(t, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h","managedFields":`+mfList(v2, gone)+`},`+
		`"spec":{"minReplicas":1,"maxReplicas":3,"scaleTargetRef":{"kind":"Deployment","name":"d"}}}`)

	// Another version's manager loses what a write changes; a manager of
	// a version no longer served loses its entry.
	next := update(t, r, live, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},`+
		`"spec":{"minReplicas":1,"maxReplicas":5,"scaleTargetRef":{"kind":"Deployment","name":"d"}}}`, "m1")
	want := mfList(mfEntry("m2", "Update", "autoscaling/v2", "", 0, `{"f:spec":{"f:minReplicas":{}}}`),
		mfEntry("m1", "Update", "autoscaling/v1", "", 1, `{"f:spec":{"f:maxReplicas":{}}}`))
	if got := managedOf(t, next); got != want {
		t.Fatalf("managedFields\n got %s\nwant %s", got, want)
	}

	// An apply conflicts with a manager of another version.
	_, err := r.Apply(next, object(t, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"minReplicas":2}}`), "a", false)
	checkStatus(t, err, 409, `Apply failed with 1 conflict: conflict with "m2" using autoscaling/v2: .spec.minReplicas`, "")

	// A write whose ownership cannot be worked out keeps the entries it
	// found.
	fail = true
	c.set(2)
	failed := update(t, r, next, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},`+
		`"spec":{"minReplicas":4,"maxReplicas":5,"scaleTargetRef":{"kind":"Deployment","name":"d"}}}`, "m1")
	if got := managedOf(t, failed); got != want {
		t.Fatalf("after a failed conversion: managedFields\n got %s\nwant %s", got, want)
	}
}

package rest

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"platd/server/apierr"
)

func TestMatchesStored(t *testing.T) {
	t.Parallel()
	_, d := configMapHandler(t)
	pred, err := parsePredicate(d, "app=web", "metadata.name=a")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value        string
		want, failed bool
	}{
		{`{"metadata":{"name":"a","labels":{"app":"web"}},"data":{"k":"}{\"x"}}`, true, false},
		{`{"metadata":{"name":"b","labels":{"app":"web"}},"data":{}}`, false, false},
		{`{"metadata":{"name":"a","labels":{"app":"db"}}}`, false, false},
		// Metadata not first: the whole object is read.
		{`{"data":{},"metadata":{"name":"a","labels":{"app":"web"}}}`, true, false},
		// Unreadable objects fail the selection.
		{`{"metadata":{"name":1}}`, false, true},
		{`nonsense`, false, true},
	} {
		got, err := pred.matchesStored([]byte(c.value))
		if got != c.want || (err != nil) != c.failed {
			t.Errorf("%s: %v %v, want %v (failing %v)", c.value, got, err, c.want, c.failed)
		}
	}
}

// TestFieldLabelConversion checks which labels each kind's field selector
// accepts and how it refuses the others, kind by kind as upstream's
// conversions word it, and what an accepted label selects.
func TestFieldLabelConversion(t *testing.T) {
	t.Parallel()
	_, reg, br := tablePinHandler(t)
	pods := []string{
		`{"metadata":{"name":"a","namespace":"ns1"},"spec":{"nodeName":"n1"},"status":{"podIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.1"}]}}`,
		`{"metadata":{"name":"b","namespace":"ns1"},"spec":{"nodeName":"n2"},"status":{}}`,
	}
	notKnown := func(f string) string {
		return `"` + f + `" is not a known field selector: only "metadata.name", "metadata.namespace"`
	}
	for _, c := range []struct {
		key, selector, refusal string
		// objects are stored forms; match lists those the selector
		// matches, by name.
		objects []string
		match   []string
	}{
		// apps/v1 converts no labels of its own: a replica set's
		// status is not selectable.
		{key: "apps/v1/replicasets", selector: "status.replicas=0", refusal: notKnown("status.replicas")},
		{key: "apps/v1/replicasets", selector: "metadata.namespace=ns1",
			objects: []string{`{"metadata":{"name":"a","namespace":"ns1"}}`, `{"metadata":{"name":"b","namespace":"ns2"}}`}, match: []string{"a"}},
		{key: "core/v1/configmaps", selector: "data.k=v", refusal: notKnown("data.k")},
		{key: "batch/v1/jobs", selector: "status.active=1", refusal: `field label "status.active" not supported for batchv1.Job`},
		{key: "batch/v1/jobs", selector: "status.successful=3",
			objects: []string{`{"metadata":{"name":"a","namespace":"ns1"},"status":{"succeeded":3}}`, `{"metadata":{"name":"b","namespace":"ns1"},"status":{}}`}, match: []string{"a"}},
		{key: "core/v1/replicationcontrollers", selector: "spec.replicas=1", refusal: "field label not supported: spec.replicas"},
		{key: "core/v1/replicationcontrollers", selector: "status.replicas=0,metadata.namespace=ns1",
			objects: []string{`{"metadata":{"name":"a","namespace":"ns1"},"status":{"replicas":2}}`, `{"metadata":{"name":"b","namespace":"ns1"},"status":{"replicas":0}}`}, match: []string{"b"}},
		// Certificate signing requests live in no namespace: their
		// conversion knows no metadata.namespace.
		{key: "certificates/v1/certificatesigningrequests", selector: "metadata.namespace=", refusal: "field label not supported: metadata.namespace"},
		{key: "certificates/v1/certificatesigningrequests", selector: "spec.username=x", refusal: "field label not supported: spec.username"},
		{key: "certificates/v1/certificatesigningrequests", selector: "spec.signerName=example.com/s,metadata.name!=b",
			objects: []string{`{"metadata":{"name":"a"},"spec":{"signerName":"example.com/s"}}`, `{"metadata":{"name":"b"},"spec":{"signerName":"example.com/s"}}`, `{"metadata":{"name":"c"},"spec":{"signerName":"example.com/t"}}`},
			match:   []string{"a"}},
		// Pods: spec.host is spec.nodeName for older clients;
		// status.podIPs is accepted and reads empty on every pod.
		{key: "core/v1/pods", selector: "spec.host=n1", objects: pods, match: []string{"a"}},
		{key: "core/v1/pods", selector: "status.podIPs=", objects: pods, match: []string{"a", "b"}},
		{key: "core/v1/pods", selector: "status.podIPs=10.0.0.1", objects: pods, match: nil},
		{key: "core/v1/pods", selector: "status.podIPs!=10.0.0.1,spec.host!=n1", objects: pods, match: []string{"b"}},
		{key: "core/v1/pods", selector: "spec.hostName=n1", refusal: "field label not supported: spec.hostName"},
	} {
		d := tablePinDescriptor(t, reg, br, c.key)
		p, err := parsePredicate(d, "", c.selector)
		if c.refusal != "" {
			var se *apierr.Error
			if !errors.As(err, &se) || se.Status.Code != 400 || se.Status.Message != c.refusal {
				t.Errorf("%s ?%s: %v, want 400 %q", c.key, c.selector, err, c.refusal)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s ?%s: %v", c.key, c.selector, err)
			continue
		}
		var got []string
		for _, o := range c.objects {
			if selected(p.matchesStored([]byte(o))) {
				var obj Object
				if err := json.Unmarshal([]byte(o), &obj); err != nil {
					t.Fatal(err)
				}
				got = append(got, metaString(obj, "name"))
			}
		}
		if !slices.Equal(got, c.match) {
			t.Errorf("%s ?%s matches %q, want %q", c.key, c.selector, got, c.match)
		}
	}
}

// TestFieldSelectorsHaveConversion keeps every built-in kind with
// selectable fields beyond the metadata declaring its own field-label
// conversion: without one no label reaches them.
func TestFieldSelectorsHaveConversion(t *testing.T) {
	t.Parallel()
	_, reg, _ := tablePinHandler(t)
	for _, d := range reg.All() {
		if len(d.FieldSelectors) > 0 && d.FieldLabels.Refusal == "" {
			t.Errorf("%s/%s %s: selectable fields but no field-label conversion", d.Group, d.Version, d.Resource)
		}
	}
}

// selected is the verdict of matchesStored, failures as not selected.
func selected(ok bool, _ error) bool { return ok }

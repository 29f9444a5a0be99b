package clients

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
)

func TestEventRecorderWritesEventsV1(t *testing.T) {
	requireServed(t, "events.k8s.io/v1", "events")
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, "clients-test")
	recorder.Eventf(pod, nil, corev1.EventTypeNormal, "Tested", "Test", "pod %s was tested", pod.Name)

	eventually(t, "the event in the events group", func() bool {
		list, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=web"})
		if err != nil || len(list.Items) != 1 {
			return false
		}
		ev := list.Items[0]
		return ev.Reason == "Tested" && ev.Action == "Test" && ev.Note == "pod web was tested" &&
			ev.ReportingController == "clients-test" && ev.Regarding.UID == pod.UID
	})
	// The core group serves the same event under its own names.
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Message != "pod web was tested" || list.Items[0].ReportingController != "clients-test" {
		t.Errorf("core events: %+v", list.Items)
	}
}

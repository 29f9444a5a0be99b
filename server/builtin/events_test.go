package builtin

import (
	"testing"
)

const coreEventJSON = `{"metadata":{"name":"e","namespace":"ns"},
"involvedObject":{"kind":"Pod","namespace":"ns","name":"p","uid":"u1"},
"reason":"Started","message":"hello","source":{"component":"kubelet","host":"n1"},
"firstTimestamp":"2024-01-02T03:04:05Z","lastTimestamp":"2024-01-02T03:04:06Z","count":3,"type":"Normal",
"eventTime":"2024-01-02T03:04:05.000001Z","series":{"count":2,"lastObservedTime":"2024-01-02T03:04:07.000000Z"},
"action":"Start","related":{"kind":"Node","name":"n1"},"reportingComponent":"ctl","reportingInstance":"i1"}`

func TestEventConversionRoundTrip(t *testing.T) {
	v1 := coreEventToEventsV1(decodeObj(t, coreEventJSON))
	jsonEqual(t, "events v1", v1, decodeObj(t, `{"metadata":{"name":"e","namespace":"ns"},
"regarding":{"kind":"Pod","namespace":"ns","name":"p","uid":"u1"},
"reason":"Started","note":"hello","deprecatedSource":{"component":"kubelet","host":"n1"},
"deprecatedFirstTimestamp":"2024-01-02T03:04:05Z","deprecatedLastTimestamp":"2024-01-02T03:04:06Z","deprecatedCount":3,"type":"Normal",
"eventTime":"2024-01-02T03:04:05.000001Z","series":{"count":2,"lastObservedTime":"2024-01-02T03:04:07.000000Z"},
"action":"Start","related":{"kind":"Node","name":"n1"},"reportingController":"ctl","reportingInstance":"i1"}`))
	jsonEqual(t, "core -> v1 -> core", eventsV1ToCoreEvent(v1), decodeObj(t, coreEventJSON))
	// Absent members stay absent both ways.
	jsonEqual(t, "sparse", eventsV1ToCoreEvent(coreEventToEventsV1(decodeObj(t, `{"reason":"x"}`))), decodeObj(t, `{"reason":"x"}`))
}

func TestEventSourceSelector(t *testing.T) {
	core := eventSource("source", "reportingComponent")
	for _, c := range []struct{ obj, want string }{
		{`{"source":{"component":"kubelet"},"reportingComponent":"ctl"}`, "kubelet"},
		{`{"reportingComponent":"ctl"}`, "ctl"},
		{`{}`, ""},
	} {
		if got := core.Get(decodeObj(t, c.obj)); got != c.want {
			t.Errorf("source of %s = %q, want %q", c.obj, got, c.want)
		}
	}
}

func TestValidateEventsV1(t *testing.T) {
	newEvent := `{"metadata":{"name":"e","namespace":"ns"},"involvedObject":{"kind":"Pod","namespace":"ns","name":"p"},
		"eventTime":"2024-01-02T03:04:05.000000Z","type":"Normal","reason":"R","action":"A","reportingComponent":"c","reportingInstance":"i"}`
	checkErrs(t, "complete", validateEventCreateV1(decodeObj(t, newEvent), nil, brand.SystemNamespace), nil)
	checkErrs(t, "legacy fields set", validateEventCreateV1(decodeObj(t, `{"metadata":{"namespace":"ns"},
		"involvedObject":{"namespace":"ns"},"eventTime":"2024-01-02T03:04:05.000000Z","type":"Warning","reason":"R","action":"A",
		"reportingComponent":"c","reportingInstance":"i","count":1,"lastTimestamp":"2024-01-02T03:04:05Z","source":{"host":"h"},
		"series":{"count":1}}`), nil, brand.SystemNamespace), []string{
		`series.count: Invalid value: "": should be at least 2`,
		"series.lastObservedTime: Required value",
		`lastTimestamp: Invalid value: "": needs to be unset`,
		`count: Invalid value: "": needs to be unset`,
		`source: Invalid value: "": needs to be unset`,
	})

	old := decodeObj(t, newEvent)
	changed := decodeObj(t, newEvent)
	changed["involvedObject"] = map[string]any{"kind": "Pod", "namespace": "ns", "name": "q"}
	changed["eventTime"] = "2024-01-02T03:04:06.000000Z"
	changed["related"] = map[string]any{"kind": "Node", "name": "n"}
	changed["reportingComponent"] = "d"
	checkErrs(t, "update", validateEventUpdateV1(changed, old, brand.SystemNamespace), []string{
		`involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"q", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable`,
		"eventTime: Invalid value: 2024-01-02 03:04:06 +0000 UTC: field is immutable",
		`related: Invalid value: core.ObjectReference{Kind:"Node", Namespace:"", Name:"n", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable`,
		`reportingController: Invalid value: "d": field is immutable`,
	})
	// Members compare as the Go values upstream holds: an empty string
	// is an absent one and a timestamp an instant, but a set related
	// reference, however empty, is not an absent one.
	for _, c := range []struct {
		name     string
		old, new map[string]any
		want     []string
	}{
		{"empty members", nil, map[string]any{"message": "", "involvedObject": map[string]any{"kind": "Pod", "namespace": "ns", "name": "p", "uid": ""},
			"source": map[string]any{}, "count": 0}, nil},
		{"same instants", nil, map[string]any{"eventTime": "2024-01-02T04:04:05+01:00"}, nil},
		{"same related", map[string]any{"related": map[string]any{"kind": "Node"}}, map[string]any{"related": map[string]any{"kind": "Node", "name": ""}}, nil},
		{"related added empty", nil, map[string]any{"related": map[string]any{}}, []string{
			`related: Invalid value: core.ObjectReference{Kind:"", Namespace:"", Name:"", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable`,
		}},
		{"related removed", map[string]any{"related": map[string]any{}}, map[string]any{"related": nil}, []string{
			`related: Invalid value: "null": field is immutable`,
		}},
	} {
		o, n := decodeObj(t, newEvent), decodeObj(t, newEvent)
		for k, v := range c.old {
			o[k] = v
		}
		for k, v := range c.new {
			n[k] = v
		}
		checkErrs(t, c.name, validateEventUpdateV1(n, o, brand.SystemNamespace), c.want)
	}
	// Reason is checked twice upstream, so it is reported twice.
	changed = decodeObj(t, newEvent)
	changed["reason"] = "S"
	checkErrs(t, "reason", validateEventUpdateV1(changed, old, brand.SystemNamespace), []string{
		`reason: Invalid value: "S": field is immutable`, `reason: Invalid value: "S": field is immutable`,
	})
}

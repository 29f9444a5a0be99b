package builtin

import (
	"fmt"
	"time"

	"platd/config"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
)

// The events group serves the core group's events under other field
// names: one stored event, two shapes. Upstream converts both to one
// internal form, which is the core shape under the core names, so rules
// and their error paths speak the core names whichever group is written.

// eventRenames pairs each core v1 member with its events v1 name.
var eventRenames = [][2]string{
	{"involvedObject", "regarding"},
	{"message", "note"},
	{"source", "deprecatedSource"},
	{"firstTimestamp", "deprecatedFirstTimestamp"},
	{"lastTimestamp", "deprecatedLastTimestamp"},
	{"count", "deprecatedCount"},
	{"reportingComponent", "reportingController"},
}

// coreEventToEventsV1 renames a core v1 event's members in place to the
// events group's.
func coreEventToEventsV1(obj registry.Object) registry.Object {
	renameMembers(obj, 0, 1)
	return obj
}

// eventsV1ToCoreEvent renames an events v1 event's members in place to the
// core group's.
func eventsV1ToCoreEvent(obj registry.Object) registry.Object {
	renameMembers(obj, 1, 0)
	return obj
}

func renameMembers(obj registry.Object, from, to int) {
	moved := map[string]any{}
	for _, r := range eventRenames {
		if v, ok := obj[r[from]]; ok {
			moved[r[to]] = v
			delete(obj, r[from])
		}
	}
	for k, v := range moved {
		obj[k] = v
	}
}

func eventsV1(b config.Brand, core *registry.Descriptor) []*registry.Descriptor {
	return []*registry.Descriptor{eventsGroupEvents(b, core)}
}

// eventsGroupEvents: events.<domain>/v1 events, stored as the core group's.
func eventsGroupEvents(b config.Brand, core *registry.Descriptor) *registry.Descriptor {
	d := groupType(b.Group("events"), "events", "event", "Event", true, "ev")
	d.Quota = quota.Ignored() // upstream never charges events to a quota
	d.UpdateCreates = true
	d.NoGarbageCollection = true
	d.ExpiresAfterWrite = true
	// A new event's name is a subdomain; an event created through the
	// core group under another name stays replaceable here.
	d.NameRuleCreateOnly = true
	// Upstream converts the events group's field labels with its own
	// table, as the core group's.
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.Storage = &registry.Storage{
		Descriptor:  core,
		ToStorage:   eventsV1ToCoreEvent,
		FromStorage: coreEventToEventsV1,
	}
	// The core selectors under the events group's names, as upstream
	// translates them.
	d.FieldSelectors = map[string]registry.FieldSelector{
		"regarding.kind":            fieldGetter("regarding", "kind"),
		"regarding.namespace":       fieldGetter("regarding", "namespace"),
		"regarding.name":            fieldGetter("regarding", "name"),
		"regarding.uid":             fieldGetter("regarding", "uid"),
		"regarding.apiVersion":      fieldGetter("regarding", "apiVersion"),
		"regarding.resourceVersion": fieldGetter("regarding", "resourceVersion"),
		"regarding.fieldPath":       fieldGetter("regarding", "fieldPath"),
		"reason":                    fieldGetter("reason"),
		"reportingController":       fieldGetter("reportingController"),
		"source":                    eventSource("deprecatedSource", "reportingController"),
		"type":                      fieldGetter("type"),
	}
	asCore := func(obj registry.Object) registry.Object {
		return eventsV1ToCoreEvent(deepCopyMap(obj))
	}
	d.Strategy.ValidateCreate = func(obj registry.Object, shared apierr.FieldErrors) apierr.FieldErrors {
		return validateEventCreateV1(asCore(obj), shared, b.SystemNamespace)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return validateEventUpdateV1(asCore(obj), asCore(old), b.SystemNamespace)
	}
	return d
}

// eventSource reads the "source" selector: the source component, or the
// reporting controller of an event that names none.
func eventSource(source, controller string) registry.FieldSelector {
	return registry.FieldSelector{Get: func(o registry.Object) string {
		if s := str(o, source, "component"); s != "" {
			return s
		}
		return str(o, controller)
	}, Reads: [][]string{{source, "component"}, {controller}}}
}

// Event types the events group accepts.
const (
	eventTypeNormal  = "Normal"
	eventTypeWarning = "Warning"
)

// validateEventCreateV1 applies the rules of a create through the events
// group to a core-shaped event: the legacy rules, the metadata's (meta,
// checked with the events group's name rule), then a new event's.
func validateEventCreateV1(ev registry.Object, meta apierr.FieldErrors, systemNamespace string) apierr.FieldErrors {
	errs := validateEvent(ev, systemNamespace)
	errs = append(errs, meta...)
	errs = append(errs, validateEventSeries(ev)...)
	if !hasEventTime(ev) {
		errs = append(errs, apierr.Required("eventTime", ""))
	}
	if t := str(ev, "type"); t != eventTypeNormal && t != eventTypeWarning {
		errs = append(errs, apierr.Invalid("type", "", "has invalid value: "+t))
	}
	for _, f := range []string{"firstTimestamp", "lastTimestamp"} {
		if str(ev, f) != "" {
			errs = append(errs, apierr.Invalid(f, "", "needs to be unset"))
		}
	}
	if intAt(ev, "count") != 0 {
		errs = append(errs, apierr.Invalid("count", "", "needs to be unset"))
	}
	if str(ev, "source", "component") != "" || str(ev, "source", "host") != "" {
		errs = append(errs, apierr.Invalid("source", "", "needs to be unset"))
	}
	return errs
}

// validateEventSeries checks a series: at least two occurrences and when
// the last was seen.
func validateEventSeries(ev registry.Object) apierr.FieldErrors {
	s := mapAt(ev, "series")
	if s == nil {
		return nil
	}
	var errs apierr.FieldErrors
	if intAt(s, "count") < 2 {
		errs = append(errs, apierr.Invalid("series.count", "", "should be at least 2"))
	}
	if str(s, "lastObservedTime") == "" {
		errs = append(errs, apierr.Required("series.lastObservedTime", ""))
	}
	return errs
}

// eventImmutable lists, in upstream's order, the members of an event an
// update through the events group may not change, how each compares as
// the Go value upstream holds it in, and how it prints as a bad value.
// Upstream checks reason twice.
var eventImmutable = []struct {
	field string
	same  func(a, b any) bool
	show  func(v any) any
}{
	{"involvedObject", semanticEqual, showObjectReference},
	{"reason", semanticEqual, showString},
	{"message", semanticEqual, showString},
	{"source", semanticEqual, showEventSource},
	{"firstTimestamp", sameInstant, showTime},
	{"lastTimestamp", sameInstant, showTime},
	{"count", semanticEqual, showInt},
	{"reason", semanticEqual, showString},
	{"type", semanticEqual, showString},
	{"eventTime", sameInstant, showTime},
	{"action", semanticEqual, showString},
	{"related", samePointer, showRelated},
	{"reportingComponent", semanticEqual, showString},
	{"reportingInstance", semanticEqual, showString},
}

// validateEventUpdateV1 applies the rules of an update through the events
// group to core-shaped events: the legacy rules, a changed series, and
// the members that may not change. Paths name the fields as upstream's
// internal event does (reportingController for reportingComponent).
func validateEventUpdateV1(ev, old registry.Object, systemNamespace string) apierr.FieldErrors {
	errs := validateEvent(ev, systemNamespace)
	if !samePointer(ev["series"], old["series"]) {
		errs = append(errs, validateEventSeries(ev)...)
	}
	for _, f := range eventImmutable {
		if f.same(ev[f.field], old[f.field]) {
			continue
		}
		path := f.field
		if path == "reportingComponent" {
			path = "reportingController"
		}
		errs = append(errs, apierr.Invalid(path, f.show(ev[f.field]), fieldImmutable))
	}
	return errs
}

// samePointer compares two decoded values upstream holds behind a
// pointer: an absent or null value is nil, unequal to any object however
// empty; two objects compare as the structs they point to.
func samePointer(a, b any) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return semanticEqual(a, b)
}

// sameInstant compares two timestamps as upstream compares its time
// values: the same instant, however written; absent is the zero time.
func sameInstant(a, b any) bool {
	return timeOf(a).Equal(timeOf(b))
}

// timeOf reads a timestamp; absent or unreadable is the zero time.
func timeOf(v any) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strOf(v))
	if err != nil {
		return time.Time{}
	}
	return t
}

func showString(v any) any { return strOf(v) }

func showInt(v any) any { n, _ := intOf(v); return n }

// showTime prints a timestamp as Go prints a time.Time.
func showTime(v any) any {
	return goSyntax(timeOf(v).String())
}

// showObjectReference prints a reference as upstream's internal type.
func showObjectReference(v any) any {
	m := mapOf(v)
	return goSyntax(fmt.Sprintf("core.ObjectReference{Kind:%q, Namespace:%q, Name:%q, UID:%q, APIVersion:%q, ResourceVersion:%q, FieldPath:%q}",
		str(m, "kind"), str(m, "namespace"), str(m, "name"), str(m, "uid"), str(m, "apiVersion"), str(m, "resourceVersion"), str(m, "fieldPath")))
}

func showRelated(v any) any {
	if v == nil {
		return nil
	}
	return showObjectReference(v)
}

func showEventSource(v any) any {
	m := mapOf(v)
	return goSyntax(fmt.Sprintf("core.EventSource{Component:%q, Host:%q}", str(m, "component"), str(m, "host")))
}

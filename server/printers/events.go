package printers

import (
	"fmt"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

// eventFields names where an event shape keeps the members the event
// printer reads: core v1 and events v1 hold the same event under
// different names.
type eventFields struct {
	involved, source, message, first, last, count, reporter string
}

var (
	coreEventFields = eventFields{
		involved: "involvedObject", source: "source", message: "message",
		first: "firstTimestamp", last: "lastTimestamp", count: "count",
		reporter: "reportingComponent",
	}
	// eventsV1Fields are the events group's names, which upstream converts
	// back to the core ones before printing.
	eventsV1Fields = eventFields{
		involved: "regarding", source: "deprecatedSource", message: "note",
		first: "deprecatedFirstTimestamp", last: "deprecatedLastTimestamp", count: "deprecatedCount",
		reporter: "reportingController",
	}
)

func addEvents(p *Printers, b config.Brand) {
	p.add(b.Group("events"), "v1", "events", eventTable(eventsV1Fields))
}

func eventTable(f eventFields) *registry.Table {
	return computed([]registry.TableColumn{
		def("Last Seen", "string", "Time since the event was last seen."),
		def("Type", "string", "Type of the event: Normal or Warning."),
		def("Reason", "string", "Short reason of the event."),
		def("Object", "string", "Object the event is about, as kind/name."),
		wideDef("Subobject", "string", "Part of the object the event is about."),
		wideDef("Source", "string", "Component, and host, that reported the event."),
		def("Message", "string", "Message of the event."),
		wideDef("First Seen", "string", "Time since the event was first seen."),
		wideDef("Count", "string", "Number of times the event was seen."),
		nameColumn().wide().def,
	}, func(o registry.Object, now time.Time) ([]any, []any) {
		return eventRow(o, now, f), nil
	})
}

// eventRow follows upstream's fallbacks: first seen falls back to the
// event time, last seen to first seen, and a series supplies both the last
// seen time and the count; a singleton event counts 1.
func eventRow(o registry.Object, now time.Time, f eventFields) []any {
	firstSeen := since(timestamp(o, f.first), now)
	if timestamp(o, f.first).IsZero() {
		firstSeen = since(timestamp(o, "eventTime"), now)
	}
	lastSeen := firstSeen
	if t := timestamp(o, f.last); !t.IsZero() {
		lastSeen = since(t, now)
	}
	n := num(o, f.count)
	if has(o, "series") {
		lastSeen = since(timestamp(o, "series", "lastObservedTime"), now)
		n = num(o, "series", "count")
	} else if n == 0 {
		n = 1
	}

	target := strings.ToLower(str(o, f.involved, "kind"))
	if name := str(o, f.involved, "name"); name != "" {
		target = fmt.Sprintf("%s/%s", target, name)
	}
	return []any{
		lastSeen,
		str(o, "type"),
		str(o, "reason"),
		target,
		str(o, f.involved, "fieldPath"),
		eventSource(o, f),
		strings.TrimSpace(str(o, f.message)),
		firstSeen,
		n,
		str(o, "metadata", "name"),
	}
}

// eventSource is "component, host", taking the reporting controller and
// instance where the legacy source is empty, and dropping an empty host.
func eventSource(o registry.Object, f eventFields) string {
	component := str(o, f.source, "component")
	if component == "" {
		component = str(o, f.reporter)
	}
	host := str(o, f.source, "host")
	if host == "" {
		host = str(o, "reportingInstance")
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}

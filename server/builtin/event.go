package builtin

import (
	"fmt"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// Length limits of the fields of an event that has an eventTime.
const (
	eventReportingInstanceMax = 128
	eventActionMax            = 128
	eventReasonMax            = 128
	eventNoteMax              = 1024
)

// defaultNamespace is where events about cluster-scoped objects may live.
const defaultNamespace = "default"

// validateEvent applies the rules every event written through the core
// group passes, on create and on update alike: the involved object's
// namespace agrees with the event's, and an event with an eventTime (a
// "new" event) names its reporter, action and reason within their limits.
func validateEvent(obj registry.Object, systemNamespace string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	ns := str(obj, "metadata", "namespace")
	ins := str(obj, "involvedObject", "namespace")
	mismatch := func() {
		errs = append(errs, apierr.Invalid("involvedObject.namespace", ins, "does not match event.namespace"))
	}
	if !hasEventTime(obj) {
		if ins == "" {
			// Events about cluster-scoped objects live in no namespace,
			// or "default" for old clients.
			if ns != "" && ns != defaultNamespace {
				mismatch()
			}
		} else if ns != ins {
			mismatch()
		}
	} else {
		if ins == "" && ns != defaultNamespace && ns != systemNamespace {
			mismatch()
		}
		// The v1 member reportingComponent is reportingController in the
		// error paths, as upstream names it.
		controller := str(obj, "reportingComponent")
		if controller == "" {
			errs = append(errs, apierr.Required("reportingController", ""))
		}
		for _, msg := range validation.IsQualifiedName(controller) {
			errs = append(errs, apierr.Invalid("reportingController", controller, msg))
		}
		for _, f := range []struct {
			field    string
			max      int
			required bool
		}{
			{"reportingInstance", eventReportingInstanceMax, true},
			{"action", eventActionMax, true},
			{"reason", eventReasonMax, true},
			{"message", eventNoteMax, false},
		} {
			v := str(obj, f.field)
			if f.required && v == "" {
				errs = append(errs, apierr.Required(f.field, ""))
			}
			if len(v) > f.max {
				errs = append(errs, apierr.Invalid(f.field, "", fmt.Sprintf("can have at most %d characters", f.max)))
			}
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(ns) {
		errs = append(errs, apierr.Invalid("namespace", ns, msg))
	}
	return errs
}

// hasEventTime reports whether the event carries an eventTime.
func hasEventTime(obj registry.Object) bool {
	s, _ := obj["eventTime"].(string)
	return s != ""
}

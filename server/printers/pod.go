package printers

import (
	"fmt"
	"time"

	"platd/server/registry"
	"platd/server/schema"
)

// completedCondition is the row condition of a pod that has run to the
// end, with upstream's texts; each row gets its own copy.
func completedCondition(reason, message string) []any {
	return []any{map[string]any{"type": "Completed", "status": "True", "reason": reason, "message": message}}
}

// nodeLostReason is the pod status reason set when the pod's node stopped
// answering.
const nodeLostReason = "NodeLost"

func podTable() *registry.Table {
	t := computed([]registry.TableColumn{
		nameColumn().def,
		def("Ready", "string", "Ready containers out of all regular and sidecar containers."),
		def("Status", "string", "Summary of the pod's state, from its phase and its containers."),
		def("Restarts", "string", "Container restarts, and how long ago the last one was."),
		ageColumn().def,
		wideDef("IP", "string", "First address of the pod."),
		wideDef("Node", "string", "Node the pod is bound to."),
		wideDef("Nominated Node", "string", "Node the scheduler has set aside for the pod."),
		wideDef("Readiness Gates", "string", "Readiness gates whose condition is true, out of all."),
	}, podRow)
	t.Reads = podReads
	t.Fields, t.RowValues = podFields, podRowValues
	return t
}

// podReads is every part of a pod podRow reads. The spec is most of a
// pod's bytes, and a row needs only how many containers it has, its init
// containers, its node and its readiness gates.
var podReads = new(schema.Selection).
	Add("metadata", "name").Add("metadata", "creationTimestamp").Add("metadata", "deletionTimestamp").
	Count("spec", "containers").Add("spec", "initContainers").Add("spec", "nodeName").Add("spec", "readinessGates").
	Add("status")

// podFields are the paths of podReads, read straight from a stored pod
// (podRowValues takes their values in this order).
var podFields = schema.NewFields([]schema.FieldPath{
	{Path: []string{"metadata", "name"}},
	{Path: []string{"metadata", "creationTimestamp"}},
	{Path: []string{"metadata", "deletionTimestamp"}},
	{Path: []string{"spec", "containers"}, Count: true},
	{Path: []string{"spec", "initContainers"}},
	{Path: []string{"spec", "nodeName"}},
	{Path: []string{"spec", "readinessGates"}},
	{Path: []string{"status"}},
})

// podRowValues is podRow of the pod the values of podFields make up: a
// path holding nothing is left out, as it is from a decoded pod.
func podRowValues(dst, v []any, now time.Time) ([]any, []any) {
	meta, spec := map[string]any{}, map[string]any{}
	putSome(meta, "name", v[0])
	putSome(meta, "creationTimestamp", v[1])
	putSome(meta, "deletionTimestamp", v[2])
	if n, _ := v[3].(int64); n > 0 {
		spec["containers"] = make([]any, n)
	}
	putSome(spec, "initContainers", v[4])
	putSome(spec, "nodeName", v[5])
	putSome(spec, "readinessGates", v[6])
	o := registry.Object{"metadata": meta, "spec": spec}
	putSome(o, "status", v[7])
	cells, conds := podRow(o, now)
	return append(dst, cells...), conds
}

// putSome sets m[k] to v unless v is nil.
func putSome(m map[string]any, k string, v any) {
	if v != nil {
		m[k] = v
	}
}

func wideDef(name, typ, description string) registry.TableColumn {
	d := def(name, typ, description)
	d.Priority = 1
	return d
}

// restarts accumulates restart counts and the latest restart time.
type restarts struct {
	count int64
	last  time.Time
}

func (r *restarts) add(status any) {
	r.count += num(status, "restartCount")
	if has(status, "lastState", "terminated") {
		if t := timestamp(status, "lastState", "terminated", "finishedAt"); t.After(r.last) {
			r.last = t
		}
	}
}

// podRow computes the pod cells as kubectl's server-side printer does:
// the status starts from the phase (or status reason), an init container
// that has not finished explains it next, then the regular containers from
// last to first, and deletion overrides all.
func podRow(o registry.Object, now time.Time) ([]any, []any) {
	phase := str(o, "status", "phase")
	reason := phase
	if r := str(o, "status", "reason"); r != "" {
		reason = r
	}
	conds := list(o, "status", "conditions")
	for _, c := range conds {
		if str(c, "type") == "PodScheduled" && str(c, "reason") == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}
	var rowConds []any
	switch phase {
	case "Succeeded":
		rowConds = completedCondition("Succeeded", "The pod has completed successfully.")
	case "Failed":
		rowConds = completedCondition("Failed", "The pod failed.")
	}

	// Sidecars (init containers that restart always) count as containers.
	// A name repeated among the init containers takes the last one's
	// policy.
	total := size(o, "spec", "containers")
	sidecar := map[string]bool{}
	for _, c := range list(o, "spec", "initContainers") {
		always := str(c, "restartPolicy") == "Always"
		if always {
			total++
		}
		sidecar[str(c, "name")] = always
	}

	var ready int64
	var all, sidecars restarts
	initializing := false
	initStatuses := list(o, "status", "initContainerStatuses")
	initCount := size(o, "spec", "initContainers")
	for i, cs := range initStatuses {
		all.add(cs)
		isSidecar := sidecar[str(cs, "name")]
		if isSidecar {
			sidecars.add(cs)
		}
		switch {
		case has(cs, "state", "terminated") && num(cs, "state", "terminated", "exitCode") == 0:
			continue
		case isSidecar && boolean(cs, "started"):
			if boolean(cs, "ready") {
				ready++
			}
			continue
		case has(cs, "state", "terminated"):
			if r := str(cs, "state", "terminated", "reason"); r != "" {
				reason = "Init:" + r
			} else if sig := num(cs, "state", "terminated", "signal"); sig != 0 {
				reason = fmt.Sprintf("Init:Signal:%d", sig)
			} else {
				reason = fmt.Sprintf("Init:ExitCode:%d", num(cs, "state", "terminated", "exitCode"))
			}
		case has(cs, "state", "waiting") && str(cs, "state", "waiting", "reason") != "" &&
			str(cs, "state", "waiting", "reason") != "PodInitializing":
			reason = "Init:" + str(cs, "state", "waiting", "reason")
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, initCount)
		}
		initializing = true
		break
	}

	if !initializing || podInitialized(conds) {
		all = sidecars
		hasRunning := false
		statuses := list(o, "status", "containerStatuses")
		for i := len(statuses) - 1; i >= 0; i-- {
			cs := statuses[i]
			all.add(cs)
			waiting := str(cs, "state", "waiting", "reason")
			terminated := has(cs, "state", "terminated")
			switch {
			case has(cs, "state", "waiting") && waiting != "":
				reason = waiting
			case terminated && str(cs, "state", "terminated", "reason") != "":
				reason = str(cs, "state", "terminated", "reason")
			case terminated:
				if sig := num(cs, "state", "terminated", "signal"); sig != 0 {
					reason = fmt.Sprintf("Signal:%d", sig)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", num(cs, "state", "terminated", "exitCode"))
				}
			case boolean(cs, "ready") && has(cs, "state", "running"):
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" && hasRunning {
			if podReady(conds) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	if has(o, "metadata", "deletionTimestamp") {
		if str(o, "status", "reason") == nodeLostReason {
			reason = "Unknown"
		} else if phase != "Succeeded" && phase != "Failed" {
			reason = "Terminating"
		}
	}

	restartCell := fmt.Sprint(all.count)
	if all.count != 0 && !all.last.IsZero() {
		restartCell = fmt.Sprintf("%d (%s ago)", all.count, since(all.last, now))
	}

	cells := []any{
		str(o, "metadata", "name"),
		fmt.Sprintf("%d/%d", ready, total),
		reason,
		restartCell,
		since(timestamp(o, "metadata", "creationTimestamp"), now),
		podIP(o),
		textOr(none, "spec", "nodeName")(o, now),
		textOr(none, "status", "nominatedNodeName")(o, now),
		readinessGates(o, conds),
	}
	return cells, rowConds
}

// podIP is the pod's first address; the singular field stands in when the
// list is empty.
func podIP(o registry.Object) string {
	ip := ""
	if ips := list(o, "status", "podIPs"); len(ips) > 0 {
		ip = str(ips[0], "ip")
	} else {
		ip = str(o, "status", "podIP")
	}
	if ip == "" {
		return none
	}
	return ip
}

func readinessGates(o registry.Object, conds []any) string {
	gates := list(o, "spec", "readinessGates")
	if len(gates) == 0 {
		return none
	}
	met := 0
	for _, g := range gates {
		for _, c := range conds {
			if str(c, "type") == str(g, "conditionType") {
				if str(c, "status") == "True" {
					met++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", met, len(gates))
}

// podInitialized reports the first Initialized condition's truth.
func podInitialized(conds []any) bool {
	for _, c := range conds {
		if str(c, "type") == "Initialized" {
			return str(c, "status") == "True"
		}
	}
	return false
}

func podReady(conds []any) bool {
	for _, c := range conds {
		if str(c, "type") == "Ready" && str(c, "status") == "True" {
			return true
		}
	}
	return false
}

package main

// goOrder lists, for types whose Go struct declares its fields in another
// order than their protobuf numbers, the JSON members in Go declaration
// order. encoding/json writes members in declaration order, so the catalog
// must too. Keys are schema names without the reverse domain.
var goOrder = map[string][]string{
	"api.core.v1.ConfigMap":      {"kind", "apiVersion", "metadata", "immutable", "data", "binaryData"},
	"api.core.v1.Secret":         {"kind", "apiVersion", "metadata", "immutable", "data", "stringData", "type"},
	"api.core.v1.LimitRangeItem": {"type", "max", "min", "default", "defaultRequest", "maxLimitRequestRatio"},
	"api.core.v1.Container": {"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env",
		"resources", "resizePolicy", "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe",
		"readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy",
		"imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
}

// applyOverride reorders fields per goOrder: listed members first in the
// listed order, the others after in their previous order.
func applyOverride(name string, fields []*gField) []*gField {
	order, ok := goOrder[name]
	if !ok {
		return fields
	}
	byName := map[string]*gField{}
	for _, f := range fields {
		if !f.inline {
			byName[f.name] = f
		}
	}
	out := make([]*gField, 0, len(fields))
	done := map[*gField]bool{}
	for _, n := range order {
		if f := byName[n]; f != nil {
			out = append(out, f)
			done[f] = true
		}
	}
	for _, f := range fields {
		if !done[f] {
			out = append(out, f)
		}
	}
	return out
}

// alwaysEncoded lists members whose Go field has no omitempty although the
// OpenAPI document does not mark them required (they are +optional in
// upstream's comments): encoding/json writes them, as null when nil.
var alwaysEncoded = map[string][]string{
	"api.rbac.v1.ClusterRole":                {"rules"},
	"api.rbac.v1.Role":                       {"rules"},
	"api.core.v1.Event":                      {"reportingComponent", "reportingInstance"},
	"api.authentication.v1.TokenRequestSpec": {"boundObjectRef"},
}

// applyAlwaysEncoded clears OmitEmpty on the members alwaysEncoded names.
func applyAlwaysEncoded(name string, fields []*gField) {
	for _, n := range alwaysEncoded[name] {
		for _, f := range fields {
			if f.name == n {
				f.omitEmpty = false
			}
		}
	}
}

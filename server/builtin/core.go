package builtin

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// maxDataSize bounds the data of a ConfigMap or Secret, as upstream: one
// object must fit comfortably in one storage value.
const maxDataSize = 1 << 20

const configKeyFmt = `[-._a-zA-Z0-9]+`

var configKeyRe = regexp.MustCompile("^" + configKeyFmt + "$")

// configKeyErrors returns the problems of a ConfigMap or Secret data key.
func configKeyErrors(key string) []string {
	var errs []string
	if len(key) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, fmt.Sprintf("must be no more than %d characters", validation.DNS1123SubdomainMaxLength))
	}
	if !configKeyRe.MatchString(key) {
		errs = append(errs, "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '"+configKeyFmt+"')")
	}
	switch {
	case key == ".":
		errs = append(errs, "must not be '.'")
	case key == "..":
		errs = append(errs, "must not be '..'")
	case strings.HasPrefix(key, ".."):
		errs = append(errs, "must not start with '..'")
	}
	return errs
}

// validateDataKeys checks the keys of data-like maps and their total size.
func validateDataKeys(obj registry.Object, sizeOf func(string, any) int, fields ...string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]string{}
	total := 0
	for _, f := range fields {
		m, _ := obj[f].(map[string]any)
		for k, v := range m {
			for _, msg := range configKeyErrors(k) {
				errs = append(errs, apierr.Invalid(f+"["+k+"]", k, msg))
			}
			if other, dup := seen[k]; dup {
				errs = append(errs, apierr.Invalid(f+"["+k+"]", k, "duplicate of key present in "+other))
			}
			seen[k] = f
			total += sizeOf(f, v)
		}
	}
	if total > maxDataSize {
		errs = append(errs, &apierr.FieldError{Type: apierr.FieldTooLong, Field: "", Detail: fmt.Sprintf("may not be more than %d bytes", maxDataSize)})
	}
	return errs
}

// immutableData refuses changes to data once an object is immutable.
func immutableData(obj, old registry.Object, fields ...string) apierr.FieldErrors {
	if b, _ := old["immutable"].(bool); !b {
		return nil
	}
	var errs apierr.FieldErrors
	for _, f := range fields {
		if !reflect.DeepEqual(obj[f], old[f]) {
			errs = append(errs, apierr.Forbidden(f, "field is immutable when `immutable` is set"))
		}
	}
	if b, _ := obj["immutable"].(bool); !b {
		errs = append(errs, apierr.Forbidden("immutable", "field is immutable when `immutable` is set"))
	}
	return errs
}

func coreV1(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{
		namespaces(b),
		configMaps(),
		secrets(),
		serviceAccounts(),
		limitRanges(),
		events(),
	}
}

func core(resource, singular, kind string, namespaced bool, short ...string) *registry.Descriptor {
	return &registry.Descriptor{
		Group: "", Version: "v1", Kind: kind, ListKind: kind + "List",
		Resource: resource, Singular: singular, Namespaced: namespaced, ShortNames: short,
		Verbs: append([]string(nil), allVerbs...),
	}
}

func configMaps() *registry.Descriptor {
	d := core("configmaps", "configmap", "ConfigMap", true, "cm")
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateDataKeys(obj, func(f string, v any) int {
			s, _ := v.(string)
			if f == "binaryData" {
				n, _ := base64.StdEncoding.DecodeString(s)
				return len(n)
			}
			return len(s)
		}, "data", "binaryData")
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return immutableData(obj, old, "data", "binaryData")
	}
	return d
}

// Secret types with rules beyond their data keys.
const secretTypeOpaque = "Opaque"

func secrets() *registry.Descriptor {
	d := core("secrets", "secret", "Secret", true)
	mergeStringData := func(obj registry.Object) {
		sd, _ := obj["stringData"].(map[string]any)
		if len(sd) > 0 {
			data := child(obj, "data")
			for k, v := range sd {
				s, _ := v.(string)
				data[k] = base64.StdEncoding.EncodeToString([]byte(s))
			}
		}
		delete(obj, "stringData")
		if t, _ := obj["type"].(string); t == "" {
			obj["type"] = secretTypeOpaque
		}
	}
	d.Strategy.PrepareForCreate = mergeStringData
	d.Strategy.PrepareForUpdate = func(obj, _ registry.Object, _ string) { mergeStringData(obj) }
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateDataKeys(obj, func(_ string, v any) int {
			s, _ := v.(string)
			n, _ := base64.StdEncoding.DecodeString(s)
			return len(n)
		}, "data")
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		var errs apierr.FieldErrors
		if nt, ot := str(obj, "type"), str(old, "type"); nt != ot {
			errs = append(errs, apierr.Invalid("type", nt, "field is immutable"))
		}
		return append(errs, immutableData(obj, old, "data")...)
	}
	d.FieldSelectors = map[string]func(registry.Object) string{"type": fieldGetter("type")}
	return d
}

// Namespace phases.
const (
	phaseActive      = "Active"
	phaseTerminating = "Terminating"
)

func namespaces(b config.Brand) *registry.Descriptor {
	d := core("namespaces", "namespace", "Namespace", false, "ns")
	d.Verbs = []string{registry.VerbCreate, registry.VerbDelete, registry.VerbGet, registry.VerbList, registry.VerbPatch, registry.VerbUpdate, registry.VerbWatch}
	d.Subresources = []registry.Subresource{
		{Name: "finalize", Verbs: []string{registry.VerbUpdate}},
		{Name: "status", Verbs: statusVerbs},
	}
	d.NameRule = registry.NameLabel
	d.ReturnDeleted = true
	nameLabel := b.Label("metadata.name")
	setNameLabel := func(obj registry.Object) {
		md := child(obj, "metadata")
		child(md, "labels")[nameLabel] = str(obj, "metadata", "name")
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		child(obj, "status")["phase"] = phaseActive
		spec := child(obj, "spec")
		fins := registry.Strings(spec["finalizers"])
		if !slices.Contains(fins, b.NamespaceFinalizer) {
			fins = append(fins, b.NamespaceFinalizer)
		}
		spec["finalizers"] = registry.AnyList(fins)
		setNameLabel(obj)
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub == "" {
			spec := child(obj, "spec")
			if f, ok := child(old, "spec")["finalizers"]; ok {
				spec["finalizers"] = f
			} else {
				delete(spec, "finalizers")
			}
		}
		setNameLabel(obj)
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		var errs apierr.FieldErrors
		for i, f := range registry.Strings(child(obj, "spec")["finalizers"]) {
			field := fmt.Sprintf("spec.finalizers[%d]", i)
			for _, msg := range validation.IsQualifiedName(f) {
				errs = append(errs, apierr.Invalid(field, f, msg))
			}
			if len(errs) == 0 && !strings.Contains(f, "/") && f != b.NamespaceFinalizer {
				errs = append(errs, apierr.Invalid(field, f, "name is neither a standard finalizer name nor is it fully qualified"))
			}
		}
		return errs
	}
	d.Strategy.Graceful = true
	d.Strategy.PendingFinalizers = func(obj registry.Object) bool {
		return len(registry.Strings(child(obj, "spec")["finalizers"])) > 0
	}
	d.Strategy.PrepareForDelete = func(obj registry.Object) {
		child(obj, "status")["phase"] = phaseTerminating
	}
	d.FieldSelectors = map[string]func(registry.Object) string{"status.phase": fieldGetter("status", "phase")}
	return d
}

func serviceAccounts() *registry.Descriptor {
	d := core("serviceaccounts", "serviceaccount", "ServiceAccount", true, "sa")
	d.ReturnDeleted = true
	// Only the name of each listed secret is kept, as upstream.
	trimSecrets := func(obj registry.Object) {
		l, ok := obj["secrets"].([]any)
		if !ok {
			return
		}
		for i, s := range l {
			m, _ := s.(map[string]any)
			l[i] = map[string]any{"name": m["name"]}
			if m["name"] == nil {
				l[i] = map[string]any{}
			}
		}
	}
	d.Strategy.PrepareForCreate = trimSecrets
	d.Strategy.PrepareForUpdate = func(obj, _ registry.Object, _ string) { trimSecrets(obj) }
	return d
}

func limitRanges() *registry.Descriptor {
	d := core("limitranges", "limitrange", "LimitRange", true, "limits")
	d.UpdateCreates = true
	// A LimitRange created without a name gets a random one, as upstream.
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		md := child(obj, "metadata")
		if str(obj, "metadata", "name") == "" && str(obj, "metadata", "generateName") == "" {
			md["name"] = registry.NewUID()
		}
	}
	return d
}

func events() *registry.Descriptor {
	d := core("events", "event", "Event", true, "ev")
	d.UpdateCreates = true
	d.FieldSelectors = map[string]func(registry.Object) string{
		"involvedObject.kind":            fieldGetter("involvedObject", "kind"),
		"involvedObject.namespace":       fieldGetter("involvedObject", "namespace"),
		"involvedObject.name":            fieldGetter("involvedObject", "name"),
		"involvedObject.uid":             fieldGetter("involvedObject", "uid"),
		"involvedObject.apiVersion":      fieldGetter("involvedObject", "apiVersion"),
		"involvedObject.resourceVersion": fieldGetter("involvedObject", "resourceVersion"),
		"involvedObject.fieldPath":       fieldGetter("involvedObject", "fieldPath"),
		"reason":                         fieldGetter("reason"),
		"reportingComponent":             fieldGetter("reportingComponent"),
		"source":                         fieldGetter("source", "component"),
		"type":                           fieldGetter("type"),
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		ns := str(obj, "metadata", "namespace")
		if ins := str(obj, "involvedObject", "namespace"); ins != "" && ins != ns {
			return apierr.FieldErrors{apierr.Invalid("involvedObject.namespace", ins, "does not match event.namespace")}
		}
		return nil
	}
	return d
}

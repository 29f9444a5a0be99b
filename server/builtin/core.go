package builtin

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
	"platd/server/validation"
	"platd/uuid"
)

// maxDataSize bounds the data of a ConfigMap or Secret, as upstream: one
// object must fit comfortably in one storage value.
const maxDataSize = 1 << 20

const configKeyFmt = `[-._a-zA-Z0-9]+`

var configKeyRe = lazyRegexp("^" + configKeyFmt + "$")

// configKeyErrors returns the problems of a ConfigMap or Secret data key.
func configKeyErrors(key string) []string {
	var errs []string
	if len(key) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, fmt.Sprintf("must be no more than %d characters", validation.DNS1123SubdomainMaxLength))
	}
	if !configKeyRe().MatchString(key) {
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

// validateConfigMapData checks the keys of a ConfigMap's data and
// binaryData, keys present in both, and their total size.
func validateConfigMapData(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	data, _ := obj["data"].(map[string]any)
	binary, _ := obj["binaryData"].(map[string]any)
	total := 0
	for _, k := range sortedKeys(data) {
		for _, msg := range configKeyErrors(k) {
			errs = append(errs, apierr.Invalid("data["+k+"]", k, msg))
		}
		if _, dup := binary[k]; dup {
			errs = append(errs, apierr.Invalid("data["+k+"]", k, "duplicate of key present in binaryData"))
		}
		s, _ := data[k].(string)
		total += len(s)
	}
	for _, k := range sortedKeys(binary) {
		for _, msg := range configKeyErrors(k) {
			errs = append(errs, apierr.Invalid("binaryData["+k+"]", k, msg))
		}
		total += len(decodedBytes(binary[k]))
	}
	if total > maxDataSize {
		// The empty path: the error is about the whole object.
		errs = append(errs, apierr.TooLong("", maxDataSize))
	}
	return errs
}

// decodedBytes returns the bytes of a base64 data value.
func decodedBytes(v any) []byte {
	s, _ := v.(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return []byte(s)
	}
	return b
}

// immutableData refuses, once the old object is immutable, turning that
// off and changing any of the data fields. An absent map and an empty one
// are the same data.
func immutableData(obj, old registry.Object, fields ...string) apierr.FieldErrors {
	if b, _ := old["immutable"].(bool); !b {
		return nil
	}
	const msg = "field is immutable when `immutable` is set"
	var errs apierr.FieldErrors
	if b, _ := obj["immutable"].(bool); !b {
		errs = append(errs, apierr.Forbidden("immutable", msg))
	}
	for _, f := range fields {
		nm, _ := obj[f].(map[string]any)
		om, _ := old[f].(map[string]any)
		if (len(nm) != 0 || len(om) != 0) && !reflect.DeepEqual(nm, om) {
			errs = append(errs, apierr.Forbidden(f, msg))
		}
	}
	return errs
}

// coreV1 is the core group with services allocated from the default
// ranges.
func coreV1(b config.Brand) []*registry.Descriptor {
	return coreV1With(b, DefaultServiceRanges(), Services{})
}

func coreV1With(b config.Brand, r ServiceRanges, sv Services) []*registry.Descriptor {
	ep := endpoints()
	po := pods(b, sv)
	return []*registry.Descriptor{
		services(b, r, ep),
		ep,
		namespaces(b),
		configMaps(),
		secrets(b),
		serviceAccounts(b),
		limitRanges(b),
		events(b, sv),
		po,
		podTemplates(b, sv),
		persistentVolumeClaims(b),
		persistentVolumes(b),
		nodes(b),
		resourceQuotas(b),
		componentStatuses(),
		bindings(po),
		replicationControllers(newPodRules(b).under(sv)),
	}
}

func core(resource, singular, kind string, namespaced bool, short ...string) *registry.Descriptor {
	return &registry.Descriptor{
		Group: "", Version: "v1", Kind: kind, ListKind: kind + "List",
		Resource: resource, Singular: singular, Namespaced: namespaced, ShortNames: short,
		Verbs: registry.ObjectVerbs(),
	}
}

func configMaps() *registry.Descriptor {
	d := core("configmaps", "configmap", "ConfigMap", true, "cm")
	d.Quota = quota.Count("", "configmaps", "configmaps")
	d.Strategy.Validate = validateConfigMapData
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(immutableData(obj, old, "data", "binaryData"), validateConfigMapData(obj)...)
	}
	return d
}

// ServiceAccountTokenSubresource is the subresource that issues bound
// tokens (TokenRequest).
const ServiceAccountTokenSubresource = "token"

// DefaultTokenSeconds is the lifetime a TokenRequest that names none asks
// for.
const DefaultTokenSeconds = 3600

// secretTypeOpaque is the type of a secret created without one.
const secretTypeOpaque = "Opaque"

func secrets(b config.Brand) *registry.Descriptor {
	d := core("secrets", "secret", "Secret", true)
	d.Quota = quota.Count("", "secrets", "secrets")
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
	// stringData is folded into data as upstream decodes a secret, so
	// the writer owns the data keys it gave.
	d.Strategy.Default = mergeStringData
	rules := newSecretRules(b)
	d.Strategy.Validate = rules.validate
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		var errs apierr.FieldErrors
		if nt, ot := str(obj, "type"), str(old, "type"); nt != ot {
			errs = append(errs, apierr.Invalid("type", nt, "field is immutable"))
		}
		errs = append(errs, immutableData(obj, old, "data")...)
		return append(errs, rules.validate(obj)...)
	}
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.FieldSelectors = map[string]registry.FieldSelector{"type": fieldGetter("type")}
	return d
}

// Namespace phases.
const (
	phaseActive      = "Active"
	phaseTerminating = "Terminating"
)

func namespaces(b config.Brand) *registry.Descriptor {
	d := core("namespaces", "namespace", "Namespace", false, "ns")
	d.IsNamespace = true
	d.Verbs = []string{registry.VerbCreate, registry.VerbDelete, registry.VerbGet, registry.VerbList, registry.VerbPatch, registry.VerbUpdate, registry.VerbWatch}
	d.Subresources = []registry.Subresource{
		{Name: "finalize", Verbs: []string{registry.VerbUpdate}, Keep: []string{"status"}},
		{Name: "status", Verbs: statusVerbs, Keep: keepSpec},
	}
	d.NameRule = registry.NameLabel
	d.ReturnDeleted = true
	d.DeleteDocumentedAsStatus = true
	nameLabel := b.Label("metadata.name")
	setNameLabel := func(obj registry.Object) {
		md := child(obj, "metadata")
		child(md, "labels")[nameLabel] = str(obj, "metadata", "name")
	}
	// The name label is a default (the writer's); the finalizer is added
	// as the object is prepared (nobody's).
	d.Strategy.Default = setNameLabel
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		child(obj, "status")["phase"] = phaseActive
		spec := child(obj, "spec")
		fins := registry.Strings(spec["finalizers"])
		if !slices.Contains(fins, b.NamespaceFinalizer) {
			fins = append(fins, b.NamespaceFinalizer)
		}
		spec["finalizers"] = registry.AnyList(fins)
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
		for _, f := range registry.Strings(child(obj, "spec")["finalizers"]) {
			errs = append(errs, validateFinalizer(f, "spec.finalizers", b)...)
		}
		return errs
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		var errs apierr.FieldErrors
		fins := registry.Strings(child(obj, "spec")["finalizers"])
		if !slices.Equal(fins, registry.Strings(child(old, "spec")["finalizers"])) {
			for i, f := range fins {
				errs = append(errs, validateFinalizer(f, fmt.Sprintf("spec.finalizers[%d]", i), b)...)
			}
		}
		// The phase follows the deletion; status writes cannot change that.
		phase := str(obj, "status", "phase")
		if str(obj, "metadata", "deletionTimestamp") == "" {
			if phase != phaseActive {
				errs = append(errs, apierr.Invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"))
			}
		} else if phase != phaseTerminating {
			errs = append(errs, apierr.Invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
		}
		return errs
	}
	d.Strategy.Graceful = true
	d.Strategy.MarkWithoutGrace = true
	d.Strategy.ForbidDeletePlugin = config.PluginNamespaceLifecycle
	d.Strategy.ForbidDelete = func(name string) string {
		switch name {
		case "default", b.SystemNamespace, b.PublicNamespace:
			return "this namespace may not be deleted"
		}
		return ""
	}
	d.Strategy.DeletingConflict = "The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system."
	d.Strategy.PendingFinalizers = func(obj registry.Object) bool {
		return len(registry.Strings(child(obj, "spec")["finalizers"])) > 0
	}
	d.Strategy.PrepareForDelete = func(obj registry.Object) {
		child(obj, "status")["phase"] = phaseTerminating
	}
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.FieldSelectors = map[string]registry.FieldSelector{"status.phase": fieldGetter("status", "phase")}
	return d
}

// Finalizers without a domain that namespaces accept besides the brand's.
var standardFinalizers = []string{"orphan", "foregroundDeletion"}

// validateFinalizer checks a namespace finalizer: a qualified name, and
// without a domain one of the standard names.
func validateFinalizer(f, field string, b config.Brand) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, msg := range validation.IsQualifiedName(f) {
		errs = append(errs, apierr.Invalid(field, f, msg))
	}
	if !strings.Contains(f, "/") && f != b.NamespaceFinalizer && !slices.Contains(standardFinalizers, f) {
		errs = append(errs, apierr.Invalid(field, f, "name is neither a standard finalizer name nor is it fully qualified"))
	}
	return errs
}

func serviceAccounts(b config.Brand) *registry.Descriptor {
	d := core("serviceaccounts", "serviceaccount", "ServiceAccount", true, "sa")
	// The server sets the token subresource's Answer: it holds the
	// signing key.
	d.Subresources = []registry.Subresource{{Name: ServiceAccountTokenSubresource, Verbs: []string{registry.VerbCreate},
		Group: b.Group("authentication"), Version: "v1", Kind: "TokenRequest", Serve: registry.ServeAnswer,
		Default: func(obj registry.Object) {
			if spec := child(obj, "spec"); spec["expirationSeconds"] == nil {
				spec["expirationSeconds"] = int64(DefaultTokenSeconds)
			}
		}}}
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

func limitRanges(b config.Brand) *registry.Descriptor {
	d := core("limitranges", "limitrange", "LimitRange", true, "limits")
	d.UpdateCreates = true
	// A LimitRange created without a name gets a random one, as upstream.
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		md := child(obj, "metadata")
		if str(obj, "metadata", "name") == "" && str(obj, "metadata", "generateName") == "" {
			md["name"] = uuid.New()
		}
	}
	d.Strategy.Default = defaultLimitRange
	d.Strategy.Validate = newResourceNames(b).validateLimitRange
	return d
}

func events(b config.Brand, sv Services) *registry.Descriptor {
	d := core("events", "event", "Event", true, "ev")
	if sv.EventRateLimit != nil {
		// Only the core group's kind is limited, as upstream's plugin
		// sees the events group's writes as another kind.
		d.Strategy.AdmissionSteps = []registry.AdmissionStep{
			{Plugin: config.PluginEventRateLimit, Validate: newEventRateLimit(sv.EventRateLimit, sv.now).validate},
		}
	}
	d.Quota = quota.Ignored() // upstream never charges events to a quota
	d.UpdateCreates = true
	d.NoGarbageCollection = true
	d.ExpiresAfterWrite = true
	// Through the core group only the generic rule names an event;
	// the events group asks for a subdomain.
	d.NameRule = registry.NamePathSegment
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.FieldSelectors = map[string]registry.FieldSelector{
		"involvedObject.kind":            fieldGetter("involvedObject", "kind"),
		"involvedObject.namespace":       fieldGetter("involvedObject", "namespace"),
		"involvedObject.name":            fieldGetter("involvedObject", "name"),
		"involvedObject.uid":             fieldGetter("involvedObject", "uid"),
		"involvedObject.apiVersion":      fieldGetter("involvedObject", "apiVersion"),
		"involvedObject.resourceVersion": fieldGetter("involvedObject", "resourceVersion"),
		"involvedObject.fieldPath":       fieldGetter("involvedObject", "fieldPath"),
		"reason":                         fieldGetter("reason"),
		"reportingComponent":             fieldGetter("reportingComponent"),
		"source":                         eventSource("source", "reportingComponent"),
		"type":                           fieldGetter("type"),
	}
	// Through the core group only the legacy rules apply, on create and
	// update alike. They do not look at the metadata: upstream checks it
	// on create only once they pass, and reports their errors alone.
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateEvent(obj, b.SystemNamespace)
	}
	d.Strategy.ValidateCreate = func(obj registry.Object, shared apierr.FieldErrors) apierr.FieldErrors {
		if errs := validateEvent(obj, b.SystemNamespace); len(errs) > 0 {
			return errs
		}
		return shared
	}
	return d
}

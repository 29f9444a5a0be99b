package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"platd/security"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/filters"
	"platd/server/registry"
)

// admitted says whether a write runs the type's admission hooks: writes
// of the main resource do, subresource writes (a scale writes the main
// resource for its subresource) do not, as upstream's plugins skip them.
func admitted(s *scope) bool { return s.sub == "" && s.trackAs == "" }

// admit runs the type's Admit hook on a write (old is nil on create),
// before the mutating webhooks. A refusal names the object as the
// request named it, its generateName when it gave no name: the mutating
// admission runs before a name is generated.
func (h *Handler) admit(ctx context.Context, s *scope, obj, old Object) error {
	hook := s.d.Strategy.Admit
	if hook == nil || !admitted(s) {
		return nil
	}
	return admissionErr(s.d, admission.ObjectName(obj), hook(ctx, sharedReads{h}, obj, old))
}

// validateAdmission runs the type's ValidateAdmission hook on a valid
// object about to be written (for an update through a subresource, the
// subresource's ValidateSubresourceAdmission hook), telling it whether the write is a dry run
// (registry.IsDryRun). What the hook warns of (security.AddWarning)
// joins the write's warnings, answered whether or not the write succeeds.
func (h *Handler) validateAdmission(ctx context.Context, s *scope, obj, old Object, dryRun bool) error {
	hook := s.d.Strategy.ValidateAdmission
	if !admitted(s) {
		// An update through a subresource runs the hooks of the plugins
		// that review it.
		hook = nil
		if s.sub != "" && s.trackAs == "" && old != nil {
			hook = s.d.Strategy.ValidateSubresourceAdmission[s.sub]
		}
	}
	if hook == nil {
		return nil
	}
	ctx = security.WithWarnings(ctx, func(m string) { s.warnings = append(s.warnings, m) })
	if dryRun {
		ctx = registry.WithDryRun(ctx)
	}
	return admissionErr(s.d, metaString(obj, "name"), hook(ctx, sharedReads{h}, obj, old))
}

// admissionErr is the answer to an admission hook's error: a Denial is a
// 403 naming the object, Denials the 500 of an aggregate of such
// refusals, anything else is answered as it is.
func admissionErr(d *registry.Descriptor, name string, err error) error {
	forbidden := func(reason string) string {
		return fmt.Sprintf("%s %q is forbidden: %s", d.GroupResource(), name, reason)
	}
	var denials *registry.Denials
	if errors.As(err, &denials) {
		msgs := make([]string, len(denials.Reasons))
		for i, r := range denials.Reasons {
			msgs[i] = forbidden(r)
		}
		return apierr.New(http.StatusInternalServerError, apierr.ReasonUnknown, apierr.Aggregate(msgs), nil)
	}
	var denial *registry.Denial
	if !errors.As(err, &denial) {
		return err
	}
	return apierr.NewForbidden(d.Group, d.Resource, name, forbidden(denial.Reason))
}

// PolicyAdmission is the validating admission every write of every
// resource passes (admission.Policies): its error refuses the write, and
// what it passes to security.AddWarning on ctx is answered as Warning
// headers.
type PolicyAdmission interface {
	Validate(ctx context.Context, a *admission.Attributes) error
	// Empty reports whether no policy is bound: then Validate admits
	// every request, and the step is skipped without building its
	// attributes.
	Empty() bool
}

// MutatingAdmission is the mutating admission every write of every
// resource passes after the type's own admission (admission.Webhooks):
// its error refuses the write, the object it returns replaces the
// written one, and what it passes to security.AddWarning on ctx is
// answered as Warning headers.
type MutatingAdmission interface {
	Mutate(ctx context.Context, a *admission.Attributes) (registry.Object, error)
	// MutatingEmpty reports whether Mutate changes and refuses nothing:
	// then the step is skipped without building its attributes.
	MutatingEmpty() bool
	// MayChange reports whether Mutate may change an object, not only
	// refuse it (a mutating webhook is configured): only then is an
	// update admitted on a copy, to tell what the request wrote from what
	// admission changed.
	MayChange() bool
}

// mutateAdmission runs the mutating admission on a write after the
// type's own (obj is nil on delete, old on create) and puts what it
// returns in obj's place. Writes through the scale subresource are
// admitted as Scales instead (mutateScale).
func (h *Handler) mutateAdmission(ctx context.Context, s *scope, op string, obj, old Object, dryRun bool) error {
	if h.mutating == nil || s.admittedElsewhere || s.trackAs != "" || h.mutating.MutatingEmpty() {
		return nil
	}
	a := h.attributes(ctx, s, op, typed(s.d, obj), typed(s.d, old), dryRun)
	ctx = security.WithWarnings(ctx, func(m string) { s.warnings = append(s.warnings, m) })
	out, err := h.mutating.Mutate(ctx, a)
	if err != nil || out == nil || obj == nil {
		return err
	}
	for k := range obj {
		delete(obj, k)
	}
	for k, v := range out {
		obj[k] = v
	}
	return nil
}

// attributes are the admission attributes of a write of s's resource.
func (h *Handler) attributes(ctx context.Context, s *scope, op string, obj, old Object, dryRun bool) *admission.Attributes {
	a := &admission.Attributes{
		Descriptor: s.d, Subresource: s.sub, Operation: op, Namespace: s.ns, Name: s.name,
		Object: obj, OldObject: old, DryRun: dryRun, User: filters.UserFrom(ctx), OptionsKind: optionsKinds[op], Options: s.options,
		Lookup: sharedReads{h},
	}
	if op == admission.OpCreate {
		a.Namespace = metaString(obj, "namespace")
		if !s.generatedName {
			a.Name = metaString(obj, "name")
		}
	}
	return a
}

// optionsKinds are the options kinds of the admission operations.
var optionsKinds = map[string]string{
	admission.OpCreate: kindCreateOptions, admission.OpUpdate: kindUpdateOptions, admission.OpDelete: kindDeleteOptions,
}

// validatePolicies runs the policy admission on a write that passed
// validation and the type's admission (obj is nil on delete, old on
// create). It runs for the main resource and for subresources; a write
// through the scale subresource is seen as upstream's, a Scale, and an
// eviction's deletion of its pod is not admitted again (as upstream).
func (h *Handler) validatePolicies(ctx context.Context, s *scope, op string, obj, old Object, dryRun bool) error {
	if h.policies == nil || s.admittedElsewhere || s.d.Strategy.NoPolicyAdmission || h.policies.Empty() {
		return nil
	}
	sub := s.sub
	var kind *admission.GroupVersionKind
	if s.trackAs != "" {
		sr := s.d.Subresource(s.trackAs)
		if sr == nil || sr.Scale == nil {
			return nil
		}
		sub = s.trackAs
		kind = &admission.GroupVersionKind{Group: scaleGroup, Version: scaleVersion, Kind: scaleKind}
		obj, old = scaleObject(obj, sr.Scale), scaleObject(old, sr.Scale)
	} else {
		obj, old = typed(s.d, obj), typed(s.d, old)
	}
	a := h.attributes(ctx, s, op, obj, old, dryRun)
	a.Subresource, a.Kind = sub, kind
	ctx = security.WithWarnings(ctx, func(m string) { s.warnings = append(s.warnings, m) })
	return h.policies.Validate(ctx, a)
}

// scaleObject is the Scale of obj (nil for nil), with its kind.
func scaleObject(obj Object, paths *registry.ScalePaths) Object {
	if obj == nil {
		return nil
	}
	sc := scaleOf(obj, paths)
	sc["kind"], sc["apiVersion"] = scaleKind, scaleGroup+"/"+scaleVersion
	return sc
}

// typed is obj with its kind and apiVersion, as admission sees objects
// (a stored object is decoded without them): obj itself when it has
// them, else a shallow copy.
func typed(d *registry.Descriptor, obj Object) Object {
	return typedAs(obj, d.GroupVersion(), d.Kind)
}

// typedAs is typed for an object of apiVersion and kind.
func typedAs(obj Object, apiVersion, kind string) Object {
	if obj == nil || (obj["kind"] != nil && obj["apiVersion"] != nil) {
		return obj
	}
	out := make(Object, len(obj)+2)
	for k, v := range obj {
		out[k] = v
	}
	out["kind"], out["apiVersion"] = kind, apiVersion
	return out
}

// actionAttributes are the admission attributes of an action (a create
// whose object, a Binding or an Eviction, changes another object): name
// is the object the action addresses, apiVersion and kind the action's
// own unless the body names another it accepts, wo the request's options.
func (h *Handler) actionAttributes(ctx context.Context, s *scope, name string, obj Object, apiVersion, kind string, wo writeOptions, dryRun bool) *admission.Attributes {
	if v, _ := obj["apiVersion"].(string); v != "" {
		apiVersion = v
	}
	if k, _ := obj["kind"].(string); k != "" {
		kind = k
	}
	obj = typedAs(obj, apiVersion, kind)
	group, version := splitAPIVersion(apiVersion)
	return &admission.Attributes{
		Descriptor: s.d, Subresource: s.sub, Kind: &admission.GroupVersionKind{Group: group, Version: version, Kind: kind},
		KindSchema: h.kind(group, version, kind), Operation: admission.OpCreate, Namespace: s.ns, Name: name, Object: obj,
		DryRun: dryRun, User: filters.UserFrom(ctx), OptionsKind: kindCreateOptions, Options: wo.given, Lookup: sharedReads{h},
	}
}

// mutateAction runs the mutating admission on an action as soon as its
// object is decoded, before the action checks it, as upstream's create
// handler admits the object it hands the action: it returns the object
// as the webhooks left it, obj itself when none changed it. The request
// names the object the action addresses, else the object does. Its
// warnings are answered on w.
func (h *Handler) mutateAction(ctx context.Context, w http.ResponseWriter, s *scope, obj Object, apiVersion, kind string, wo writeOptions) (Object, error) {
	if h.mutating == nil || h.mutating.MutatingEmpty() {
		return obj, nil
	}
	name := s.name
	if name == "" {
		name = metaString(obj, "name")
	}
	a := h.actionAttributes(ctx, s, name, obj, apiVersion, kind, wo, wo.dryRun)
	var warnings []string
	ctx = security.WithWarnings(ctx, func(m string) { warnings = append(warnings, m) })
	out, err := h.mutating.Mutate(ctx, a)
	addWarnings(ctx, w, warnings)
	if err != nil || out == nil {
		return obj, err
	}
	return out, nil
}

// admitAction runs the policy admission on an action before it acts, as
// upstream admits the action's create (see actionAttributes). Its
// warnings are answered on w.
func (h *Handler) admitAction(ctx context.Context, w http.ResponseWriter, s *scope, name string, obj Object, apiVersion, kind string, wo writeOptions, dryRun bool) error {
	if h.policies == nil || h.policies.Empty() {
		return nil
	}
	a := h.actionAttributes(ctx, s, name, obj, apiVersion, kind, wo, dryRun)
	var warnings []string
	ctx = security.WithWarnings(ctx, func(m string) { warnings = append(warnings, m) })
	err := h.policies.Validate(ctx, a)
	addWarnings(ctx, w, warnings)
	return err
}

// admitConnect runs the mutating, then the policy admission on a connect
// (exec, attach, port forwarding, a proxy) before it connects, as
// upstream: operation CONNECT, the object the connect's options (its
// Kind, decoded from the query, a proxy's path from the URL), no options
// object. Its warnings are answered on w.
func (h *Handler) admitConnect(w http.ResponseWriter, r *http.Request, s *scope, sr *registry.Subresource) error {
	mutating := h.mutating != nil && !h.mutating.MutatingEmpty()
	validating := h.policies != nil && !h.policies.Empty()
	if !mutating && !validating {
		return nil
	}
	opts := h.connectOptions(r, s, sr)
	a := &admission.Attributes{
		Descriptor: s.d, Subresource: s.sub, Kind: &admission.GroupVersionKind{Group: sr.Group, Version: sr.Version, Kind: sr.Kind},
		KindSchema: h.kind(sr.Group, sr.Version, sr.Kind), Operation: admission.OpConnect, Namespace: s.ns, Name: s.name,
		Object: opts, User: filters.UserFrom(r.Context()), Lookup: sharedReads{h},
	}
	var warnings []string
	ctx := security.WithWarnings(r.Context(), func(m string) { warnings = append(warnings, m) })
	defer func() { addWarnings(r.Context(), w, warnings) }()
	if mutating {
		out, err := h.mutating.Mutate(ctx, a)
		if err != nil {
			return err
		}
		if out != nil {
			// The policies see the options as the webhooks left them.
			a.Object = out
		}
	}
	if !validating {
		return nil
	}
	return h.policies.Validate(ctx, a)
}

// connectOptions is the options object of a connect, from the query
// parameters its subresource takes, as upstream's parameter decoding
// reads them: a list member (registry.QueryParam.List) takes every value (integers also split at
// commas), a boolean is false only for "0" or "false". A proxy's path is
// the URL's rest after the subresource.
func (h *Handler) connectOptions(r *http.Request, s *scope, sr *registry.Subresource) Object {
	apiVersion := sr.Version
	if sr.Group != "" {
		apiVersion = sr.Group + "/" + sr.Version
	}
	opts := Object{"kind": sr.Kind, "apiVersion": apiVersion}
	q := r.URL.Query()
	if sr.Proxy {
		q.Set(proxyPathParam, proxyPath(r, s))
	}
	for _, p := range sr.Query {
		vals, ok := q[p.Name]
		if !ok || len(vals) == 0 {
			continue
		}
		var out []any
		for _, v := range vals {
			switch p.Type {
			case queryBoolean:
				out = append(out, v != "0" && !strings.EqualFold(v, "false"))
			case queryInteger:
				for _, part := range strings.Split(v, ",") {
					if n, err := strconv.ParseInt(part, 10, 64); err == nil {
						out = append(out, n)
					}
				}
			default:
				out = append(out, v)
			}
		}
		switch {
		case p.List:
			opts[p.Name] = out
		case len(out) > 0 && out[0] != "":
			opts[p.Name] = out[0]
		}
	}
	return opts
}

// The OpenAPI types of query parameters (registry.QueryParam) read as
// other than strings.
const (
	queryBoolean = "boolean"
	queryInteger = "integer"
)

// proxyPathParam is the options member a proxy's path is given in.
const proxyPathParam = "path"

// proxyPath is the path a proxy request carries after the subresource:
// with a leading slash when not empty, and the request's trailing slash.
func proxyPath(r *http.Request, s *scope) string {
	var p string
	if s.info != nil && len(s.info.Parts) > 3 {
		p = strings.Join(s.info.Parts[3:], "/")
	}
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// splitAPIVersion splits "group/version" ("v1" is the core group's).
func splitAPIVersion(apiVersion string) (group, version string) {
	if g, v, ok := strings.Cut(apiVersion, "/"); ok {
		return g, v
	}
	return "", apiVersion
}

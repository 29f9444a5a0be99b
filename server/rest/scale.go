package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"platd/bolt"
	"platd/security"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/fieldmanager"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/selector"
)

// The scale subresource shows and sets a workload's replica count as an
// autoscaling/v1 Scale, whatever the workload's own shape.

// scaleGroup and scaleVersion are where the Scale kind lives.
const (
	scaleGroup   = "autoscaling"
	scaleVersion = "v1"
	scaleKind    = "Scale"
)

// serveScale serves get, update and patch of a scale subresource.
func (h *Handler) serveScale(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiate(r, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	sch := h.kind(scaleGroup, scaleVersion, scaleKind)
	if sch == nil {
		h.writeError(w, r, apierr.InternalError(fmt.Errorf("no schema for %s", scaleKind)))
		return
	}
	paths := s.d.Subresource(s.sub).Scale
	apiVersion := scaleGroup + "/" + scaleVersion
	scaleScope := &scope{d: &registry.Descriptor{Group: scaleGroup, Version: scaleVersion, Kind: scaleKind, Schema: sch}, name: s.name}
	var want Object
	dryRun := false
	switch s.info.Verb {
	case registry.VerbGet:
		// Upstream reads scale as it reads its object: from the watch cache.
		rv, err := parseResourceVersionCached(r.URL.Query().Get("resourceVersion"))
		if err == nil {
			err = h.waitForRevision(r.Context(), rv)
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		kv, err := h.store.Get(s.key())
		if errors.Is(err, bolt.ErrNotFound) && paths.NotFoundAsScale {
			h.writeError(w, r, apierr.NotFound(scaleGroup, s.d.Resource+"/"+s.sub, s.name))
			return
		}
		if err != nil {
			h.writeError(w, r, objectErr(s, s.name, err))
			return
		}
		obj, err := decodeStored(s.d, kv.Value)
		if err != nil {
			h.writeError(w, r, internalErr(err))
			return
		}
		h.writeScale(w, r, out, s, sch, scaleOf(obj, paths))
		return
	case registry.VerbUpdate:
		wo, err := h.parseWriteOptions(r.URL.Query(), kindUpdateOptions)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		dec, err := h.decodeBody(r, scaleScope, wo)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		want, dryRun = dec.obj, wo.dryRun
		s.manager, s.options = managerName(r, wo), wo.given
	case registry.VerbPatch:
		if h.isApply(r) {
			h.applyScale(w, r, s, out, paths, sch)
			return
		}
		mt, wo, body, err := h.readPatch(r, s.d)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		kv, err := h.store.Get(s.key())
		if err != nil {
			h.writeError(w, r, objectErr(s, s.name, err))
			return
		}
		obj, err := decodeStored(s.d, kv.Value)
		if err != nil {
			h.writeError(w, r, internalErr(err))
			return
		}
		cur := scaleOf(obj, paths)
		cur["kind"], cur["apiVersion"] = scaleKind, apiVersion
		patched, _, err := h.applyPatch(mt, schema.Encode(nil, cur, sch), body, scaleScope)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		dec, err := h.decodeJSON(patched, scaleScope, writeOptions{fieldValidation: validationIgnore})
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		want, dryRun = dec.obj, wo.dryRun
		s.manager, s.options = managerName(r, wo), wo.given
	default:
		h.writeError(w, r, apierr.MethodNotAllowed())
		return
	}
	res, err := h.setScale(r.Context(), s, paths, want, dryRun, s.info.Verb == registry.VerbUpdate)
	addWarnings(r.Context(), w, s.warnings)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeScale(w, r, out, s, sch, res)
}

// setScale writes the replica count of a Scale into the object and
// returns the Scale of the result. put says the Scale is a PUT's, whose
// uid is a precondition of the write, checked first, as upstream's
// storage checks an update's; a patched Scale's uid is checked after its
// replica count, where the type's scale storage does (CheckUID).
func (h *Handler) setScale(ctx context.Context, s *scope, paths *registry.ScalePaths, scale Object, dryRun, put bool) (Object, error) {
	if name := metaString(scale, "name"); name == "" && put {
		return nil, nameUndeterminable(s)
	} else if name != "" && name != s.name {
		return nil, nameMismatch(s, name)
	}
	replicas, _ := getPath(scale, "spec.replicas").(int64)
	rv := metaString(scale, "resourceVersion")
	uid := metaString(scale, "uid")
	key := s.key()
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(key)
		if put && uid != "" && errors.Is(err, bolt.ErrNotFound) {
			return nil, uidPreconditionFailed(s, h.storedAt(key), uid, "")
		}
		if err != nil {
			return nil, objectErr(s, s.name, err)
		}
		old, err := decodeStored(s.d, kv.Value)
		if err != nil {
			return nil, internalErr(err)
		}
		have := metaString(old, "uid")
		if put && uid != "" && uid != have {
			return nil, uidPreconditionFailed(s, h.storedAt(key), uid, have)
		}
		// The webhooks see the Scale as written, and may change the
		// count it sets.
		replicas := replicas
		mutated, err := h.mutateScale(ctx, s, scale, old, paths, dryRun)
		if err != nil {
			return nil, err
		}
		if mutated != nil {
			replicas, _ = getPath(mutated, "spec.replicas").(int64)
		}
		if replicas < 0 {
			return nil, apierr.NewInvalid(scaleGroup, scaleKind, s.name, apierr.FieldErrors{apierr.Invalid("spec.replicas", replicas, "must be greater than or equal to 0")})
		}
		if !put && paths.CheckUID && uid != "" && uid != have {
			return nil, scaleUIDConflict(s, uid, have)
		}
		if err := checkWriteVersion(s, rv, kv.ModRevision); err != nil {
			return nil, err
		}
		obj := deepCopyObject(old)
		setPath(obj, paths.SpecReplicas, replicas)
		main := &scope{d: s.d, info: s.info, ns: s.ns, name: s.name, manager: s.manager, trackAs: s.sub, dryRun: dryRun}
		next, err := h.prepareUpdate(ctx, main, obj, old)
		s.warnings = append(s.warnings, main.warnings...)
		if err != nil {
			return nil, err
		}
		stored, retry, err := h.commitUpdate(ctx, main, kv, next, dryRun)
		if retry {
			if rv != "" {
				return nil, apierr.ConflictModified(s.d.Group, s.d.Resource, s.name)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		res, err := decodeStored(s.d, stored)
		if err != nil {
			return nil, internalErr(err)
		}
		return scaleOf(res, paths), nil
	}
	return nil, apierr.ConflictModified(s.d.Group, s.d.Resource, s.name)
}

// mutateScale runs the mutating admission on a write through a scale
// subresource as upstream's scale storage admits it: an update of the
// Scale written, whose old object is the Scale of the stored object
// old. It returns the Scale as the webhooks left it, nil when none
// changed it.
func (h *Handler) mutateScale(ctx context.Context, s *scope, scale, old Object, paths *registry.ScalePaths, dryRun bool) (Object, error) {
	if h.mutating == nil || h.mutating.MutatingEmpty() {
		return nil, nil
	}
	a := h.attributes(ctx, s, admission.OpUpdate, typedAs(scale, scaleGroup+"/"+scaleVersion, scaleKind), scaleObject(old, paths), dryRun)
	a.Kind = &admission.GroupVersionKind{Group: scaleGroup, Version: scaleVersion, Kind: scaleKind}
	a.KindSchema = h.kind(scaleGroup, scaleVersion, scaleKind)
	ctx = security.WithWarnings(ctx, func(m string) { s.warnings = append(s.warnings, m) })
	return h.mutating.Mutate(ctx, a)
}

// mutateAppliedScale runs the mutating admission on an apply through a
// scale subresource (s tracks the write as that subresource's) as on a
// PUT of the Scale the apply leaves: the webhooks see that Scale, the
// stored object's as the old one, and the count they set is what obj
// gets. Other writes pass untouched.
func (h *Handler) mutateAppliedScale(ctx context.Context, s *scope, obj, old Object, dryRun bool) error {
	sr := s.d.Subresource(s.trackAs)
	if s.trackAs == "" || sr == nil || sr.Scale == nil {
		return nil
	}
	sub := &scope{d: s.d, info: s.info, ns: s.ns, name: s.name, sub: s.trackAs, options: s.options}
	mutated, err := h.mutateScale(ctx, sub, scaleObject(obj, sr.Scale), old, sr.Scale, dryRun)
	s.warnings = append(s.warnings, sub.warnings...)
	if err != nil || mutated == nil {
		return err
	}
	if replicas := getPath(mutated, "spec.replicas"); replicas != nil {
		setPath(obj, sr.Scale.SpecReplicas, replicas)
	}
	return nil
}

// applyScale serves an apply of a Scale: the replica count it sets is
// applied to the object, owned by its manager under the scale
// subresource, so that it conflicts with whoever else sets the count.
func (h *Handler) applyScale(w http.ResponseWriter, r *http.Request, s *scope, out output, paths *registry.ScalePaths, sch *schema.Schema) {
	main := &scope{d: s.d, info: s.info, ns: s.ns, name: s.name, trackAs: s.sub}
	a, err := h.readApply(r, main)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	apiVersion := scaleGroup + "/" + scaleVersion
	kind, _ := a.config["kind"].(string)
	av, _ := a.config["apiVersion"].(string)
	if kind != scaleKind || av != apiVersion {
		h.writeError(w, r, apierr.BadRequest("invalid object type: "+fieldmanager.GVKString(av, kind)))
		return
	}
	config := Object{"kind": s.d.Kind, "apiVersion": s.d.GroupVersion(), "metadata": a.config["metadata"]}
	if replicas := getPath(a.config, "spec.replicas"); replicas != nil {
		setPath(config, paths.SpecReplicas, replicas)
	}
	a.config = config
	stored, _, err := h.applyObject(r.Context(), main, a)
	addWarnings(r.Context(), w, main.warnings)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := decodeStored(s.d, stored)
	if err != nil {
		h.writeError(w, r, internalErr(err))
		return
	}
	h.writeScale(w, r, out, s, sch, scaleOf(res, paths))
}

// scaleUIDConflict is the answer to a Scale naming the uid want of
// another object than the stored one's, have.
func scaleUIDConflict(s *scope, want, have string) error {
	return apierr.Conflict(s.d.Group, s.d.Resource+"/"+s.sub, s.name,
		fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", want, have))
}

// writeScale answers with the Scale of the object s addresses, described
// by sch, in the negotiated form: as any object is answered, a Scale may
// be asked for whole, as its metadata, or as a Table of the subresource's
// columns.
func (h *Handler) writeScale(w http.ResponseWriter, r *http.Request, out output, s *scope, sch *schema.Schema, scale Object) {
	d := &registry.Descriptor{Group: scaleGroup, Version: scaleVersion, Kind: scaleKind, Namespaced: s.d.Namespaced, Schema: sch}
	if sr := s.d.Subresource(s.sub); sr != nil {
		d.Table = sr.Table
	}
	// Encoded as stored objects are: metadata first, no type.
	delete(scale, "kind")
	delete(scale, "apiVersion")
	h.writeObject(w, r, out, http.StatusOK, d, schema.Encode(nil, scale, sch))
}

// scaleOf builds the Scale of an object.
func scaleOf(obj Object, paths *registry.ScalePaths) Object {
	m := meta(obj, false)
	md := map[string]any{}
	for _, f := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := m[f]; ok {
			md[f] = v
		}
	}
	spec, _ := getPath(obj, paths.SpecReplicas).(int64)
	status := map[string]any{"replicas": int64(0)}
	if n, ok := getPath(obj, paths.StatusReplicas).(int64); ok {
		status["replicas"] = n
	}
	if paths.LabelSelector != "" {
		if sel := selectorString(getPath(obj, paths.LabelSelector), paths.SelectorIsSet); sel != "" {
			status["selector"] = sel
		}
	}
	return Object{"metadata": md, "spec": map[string]any{"replicas": spec}, "status": status}
}

// selectorString renders the selector of a scaled object.
func selectorString(v any, isSet bool) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		var sel selector.Labels
		var err error
		if isSet {
			sel, err = selector.FromSet(x)
		} else {
			sel, err = selector.FromLabelSelector(x)
		}
		if err == nil {
			return sel.String()
		}
	}
	return ""
}

// getPath reads the value at a dotted path of nested objects.
func getPath(obj Object, path string) any {
	var cur any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// setPath writes v at a dotted path, creating the objects on the way.
func setPath(obj Object, path string, v any) {
	parts := strings.Split(path, ".")
	cur := obj
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = v
}

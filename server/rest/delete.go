package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"platd/codec"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/protobuf"
	"platd/server/registry"
	"platd/server/schema"
)

// Propagation policies of DeleteOptions.
const (
	propagationForeground = "Foreground"
	propagationBackground = "Background"
	propagationOrphan     = "Orphan"
)

// deleteOptions is DeleteOptions from the body and the query.
type deleteOptions struct {
	Kind               string   `json:"kind,omitempty"`
	APIVersion         string   `json:"apiVersion,omitempty"`
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *precond `json:"preconditions,omitempty"`
	OrphanDependents   *bool    `json:"orphanDependents,omitempty"`
	PropagationPolicy  *string  `json:"propagationPolicy,omitempty"`
	DryRun             []string `json:"dryRun,omitempty"`
	// IgnoreStoreReadError is ignoreStoreReadErrorWithClusterBreakingPotential:
	// delete an object whose stored value cannot be read.
	IgnoreStoreReadError *bool `json:"ignoreStoreReadErrorWithClusterBreakingPotential,omitempty"`
}

// unsafe reports whether the options ask for an unsafe delete.
func (o *deleteOptions) unsafe() bool {
	return o.IgnoreStoreReadError != nil && *o.IgnoreStoreReadError
}

// given are the options as members of the DeleteOptions object
// admission sees.
func (o *deleteOptions) given() map[string]any {
	m := map[string]any{}
	if o.GracePeriodSeconds != nil {
		m["gracePeriodSeconds"] = *o.GracePeriodSeconds
	}
	if p := o.Preconditions; p != nil {
		pc := map[string]any{}
		if p.UID != nil {
			pc["uid"] = *p.UID
		}
		if p.ResourceVersion != nil {
			pc["resourceVersion"] = *p.ResourceVersion
		}
		m["preconditions"] = pc
	}
	if o.OrphanDependents != nil {
		m["orphanDependents"] = *o.OrphanDependents
	}
	if o.PropagationPolicy != nil {
		m["propagationPolicy"] = *o.PropagationPolicy
	}
	if len(o.DryRun) > 0 {
		m["dryRun"] = registry.AnyList(o.DryRun)
	}
	if o.IgnoreStoreReadError != nil {
		m["ignoreStoreReadErrorWithClusterBreakingPotential"] = *o.IgnoreStoreReadError
	}
	return m
}

type precond struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// parseDeleteOptions reads DeleteOptions from the body (JSON, YAML,
// protobuf or, when served, CBOR; any apiVersion) and the query parameters, the query winning.
func (h *Handler) parseDeleteOptions(r *http.Request) (*deleteOptions, bool, error) {
	o := &deleteOptions{}
	body, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	if len(trimNewline(body)) > 0 {
		if err := h.decodeDeleteOptions(r.Header.Get("Content-Type"), body, o); err != nil {
			return nil, false, err
		}
		if o.Kind != "" && o.Kind != kindDeleteOptions {
			return nil, false, apierr.BadRequest(fmt.Sprintf("no kind %q is registered for DeleteOptions", o.Kind))
		}
	}
	q := r.URL.Query()
	var errs apierr.FieldErrors
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, false, apierr.BadRequest(err.Error())
		}
		o.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" {
		o.PropagationPolicy = &v
	}
	if b, ok := queryBool(q, "orphanDependents"); ok {
		o.OrphanDependents = &b
	}
	if vals, ok := q["dryRun"]; ok {
		o.DryRun = vals
	}
	if b, ok := queryBool(q, paramIgnoreStoreReadError); ok {
		o.IgnoreStoreReadError = &b
	}
	dry := false
	for _, v := range o.DryRun {
		if v != "All" {
			errs = append(errs, &apierr.FieldError{Type: apierr.FieldNotSupported, Field: "dryRun", Value: o.DryRun, Detail: `supported values: "All"`})
			break
		}
		dry = true
	}
	if o.PropagationPolicy != nil {
		p := *o.PropagationPolicy
		if o.OrphanDependents != nil {
			errs = append(errs, apierr.Invalid("propagationPolicy", p, "orphanDependents and deletionPropagation cannot be both set"))
		}
		switch p {
		case propagationForeground, propagationBackground, propagationOrphan:
		default:
			errs = append(errs, apierr.NotSupported("propagationPolicy", p, []string{propagationForeground, propagationBackground, propagationOrphan, "nil"}))
		}
	}
	if o.unsafe() {
		// An unsafe delete removes the stored bytes and nothing else.
		for _, set := range []struct {
			field string
			is    bool
		}{
			{"dryRun", len(o.DryRun) > 0},
			{"propagationPolicy", o.PropagationPolicy != nil},
			{"orphanDependents", o.OrphanDependents != nil},
			{"gracePeriodSeconds", o.GracePeriodSeconds != nil},
			{"preconditions", o.Preconditions != nil},
		} {
			if set.is {
				errs = append(errs, apierr.Invalid(paramIgnoreStoreReadError, true, "cannot be set together with ."+set.field))
			}
		}
	}
	if len(errs) > 0 {
		return nil, false, h.optionsInvalid(kindDeleteOptions, errs...)
	}
	return o, dry, nil
}

// paramIgnoreStoreReadError is the DeleteOptions field (and query
// parameter) that asks for an unsafe delete.
const paramIgnoreStoreReadError = "ignoreStoreReadErrorWithClusterBreakingPotential"

// decodeDeleteOptions decodes a DeleteOptions body in any media type the
// server decodes: controller-runtime, for one, sends protobuf.
func (h *Handler) decodeDeleteOptions(contentType string, body []byte, o *deleteOptions) error {
	unknown := func(err error) error {
		return apierr.BadRequest(fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s: %v", mediaJSON, err))
	}
	mt, _, err := codec.ParseContentType(contentType)
	if err != nil {
		mt = mediaJSON
	}
	switch mt {
	case mediaYAML:
		if body, err = codec.YAMLToJSON(body); err != nil {
			return unknown(err)
		}
	case h.brand.ProtobufMediaType:
		_, kind, raw, err := codec.UnwrapProtobuf(body)
		if err != nil {
			return unknown(err)
		}
		if kind != "" && kind != kindDeleteOptions {
			return apierr.BadRequest(fmt.Sprintf("no kind %q is registered for DeleteOptions", kind))
		}
		sch := h.kind("", "v1", kindDeleteOptions)
		if sch == nil {
			return unknown(fmt.Errorf("no schema for %s", kindDeleteOptions))
		}
		m, err := protobuf.Unmarshal(raw, sch)
		if err != nil {
			return unknown(err)
		}
		body = schema.Encode(nil, m, sch)
	case codec.CBORMediaType:
		if h.cbor {
			if body, err = codec.CBORToJSON(body); err != nil {
				return unknown(err)
			}
		}
	}
	if err := json.Unmarshal(body, o); err != nil {
		return unknown(err)
	}
	return nil
}

// deleteResult is the outcome of deleting one object.
type deleteResult struct {
	// stored is the object's last state: as removed, or as marked.
	stored []byte
	// removed is set when the object is gone (not just marked).
	removed bool
	uid     string
}

// delete serves DELETE of one object.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiateFor(r, s.d, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	o, dry, err := h.parseDeleteOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if o.unsafe() && h.unsafeDelete {
		h.unsafeDeleteObject(w, r, out, s)
		return
	}
	warnOrphaning(w, r, s.d, o)
	res, err := h.deleteObject(r.Context(), s, s.ns, s.name, o, dry)
	addWarnings(r.Context(), w, s.warnings)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if !res.removed && o.OrphanDependents != nil && !*o.OrphanDependents {
		code = http.StatusAccepted
	}
	if res.removed && !s.d.ReturnDeleted {
		h.writeStatus(w, r, out, code, &apierr.Status{Kind: "Status", APIVersion: "v1", Status: apierr.StatusSuccess,
			Details: &apierr.Details{Name: s.name, Group: s.d.Group, Kind: s.d.Resource, UID: res.uid}})
		return
	}
	h.writeObject(w, r, out, code, s.d, res.stored)
}

// warnOrphaning warns a deletion without a propagation policy of a type
// whose dependents it then orphans, when the type says so.
func warnOrphaning(w http.ResponseWriter, r *http.Request, d *registry.Descriptor, o *deleteOptions) {
	if d.Strategy.OrphanByDefault && d.Strategy.OrphanWarning != "" && o.PropagationPolicy == nil && o.OrphanDependents == nil {
		addWarnings(r.Context(), w, []string{d.Strategy.OrphanWarning})
	}
}

// preconditionFailed is the 409 of a failed delete precondition, which
// names the Kind rather than the resource.
func preconditionFailed(d *registry.Descriptor, name, what, want, have, tail string) error {
	e := apierr.Conflict(d.Group, d.Kind, name, fmt.Sprintf("the %s in the precondition (%s) does not match the %s in record (%s). %s", what, want, what, have, tail))
	e.Status.Message = fmt.Sprintf("Operation cannot be fulfilled on %s %q: the %s in the precondition (%s) does not match the %s in record (%s). %s", d.GroupKind(), name, what, want, what, have, tail)
	return e
}

// deleteObject deletes or marks the object called name in namespace ns of
// s's resource, retrying lost races.
func (h *Handler) deleteObject(ctx context.Context, s *scope, ns, name string, o *deleteOptions, dry bool) (*deleteResult, error) {
	d := s.d
	key := d.Key(ns, name)
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(key)
		if err != nil {
			return nil, objectErr(s, name, err)
		}
		obj, err := decodeStored(d, kv.Value)
		if err != nil {
			return nil, internalErr(err)
		}
		uid := metaString(obj, "uid")
		if p := o.Preconditions; p != nil {
			if p.UID != nil && *p.UID != uid {
				return nil, preconditionFailed(d, name, "UID", *p.UID, uid, "The object might have been deleted and then recreated")
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != strconv.FormatInt(kv.ModRevision, 10) {
				return nil, preconditionFailed(d, name, "ResourceVersion", *p.ResourceVersion, strconv.FormatInt(kv.ModRevision, 10), "The object might have been modified")
			}
		}
		if err := h.deletable(d, name); err != nil {
			return nil, err
		}
		target := &scope{d: d, ns: ns, name: name, admittedElsewhere: s.admittedElsewhere, options: o.given()}
		if s.collectionItem {
			target.name = ""
		}
		err = h.mutateAdmission(ctx, target, admission.OpDelete, nil, obj, dry)
		if err == nil {
			err = h.validatePolicies(ctx, target, admission.OpDelete, nil, obj, dry)
		}
		s.warnings = append(s.warnings, target.warnings...)
		if err != nil {
			return nil, err
		}
		deleting := metaString(obj, "deletionTimestamp") != ""
		if deleting && d.Strategy.DeletingConflict != "" && d.Strategy.PendingFinalizers != nil && d.Strategy.PendingFinalizers(obj) {
			return nil, apierr.Conflict(d.Group, d.Resource, name, d.Strategy.DeletingConflict)
		}
		next := deepCopyObject(obj)
		finalizersChanged := setDeletionFinalizers(d, next, o)
		grace := int64(0)
		if d.Strategy.DeleteGrace != nil {
			grace = d.Strategy.DeleteGrace(obj, o.GracePeriodSeconds)
		}
		graceChanged := h.markDeletion(d, next, grace)
		if !d.Strategy.Graceful && d.Strategy.DeleteGrace == nil && len(finalizers(next)) == 0 {
			// Nothing keeps the object: it goes now.
			if dry {
				return &deleteResult{stored: kv.Value, removed: true, uid: uid}, nil
			}
			if _, err := h.storeDelete(ctx, d, key, kv.ModRevision, obj); err != nil {
				if lostRace(err) {
					continue
				}
				return nil, objectErr(s, name, err)
			}
			return &deleteResult{stored: kv.Value, removed: true, uid: uid}, nil
		}
		if deleting && !finalizersChanged && !graceChanged && !h.finalized(d, next) {
			return &deleteResult{stored: kv.Value, uid: uid}, nil
		}
		if !deleting && d.Strategy.PrepareForDelete != nil {
			d.Strategy.PrepareForDelete(next)
		}
		enc, err := encodeStored(d, next)
		if err != nil {
			return nil, err
		}
		if dry {
			dryBytes, _ := Stamp(enc, kv.ModRevision)
			return &deleteResult{stored: dryBytes, uid: uid, removed: h.finalized(d, next)}, nil
		}
		if h.finalized(d, next) {
			last, lastObj := kv, obj
			if d.Strategy.DeleteGrace != nil && graceChanged {
				// As upstream, a graceful deletion that needs no wait is
				// written first and then removed, so watchers see the
				// object with its deletion marks before it goes.
				marked, err := settled(ctx, d)(h.store.Update(ctx, key, kv.ModRevision, enc))
				if err != nil {
					if lostRace(err) {
						continue
					}
					return nil, objectErr(s, name, err)
				}
				last, lastObj = marked, next
			}
			if _, err := h.storeDelete(ctx, d, key, last.ModRevision, lastObj); err != nil {
				if lostRace(err) {
					continue
				}
				return nil, objectErr(s, name, err)
			}
			return &deleteResult{stored: last.Value, removed: true, uid: uid}, nil
		}
		newKV, err := settled(ctx, d)(h.store.Update(ctx, key, kv.ModRevision, enc))
		if err != nil {
			if lostRace(err) {
				continue
			}
			return nil, objectErr(s, name, err)
		}
		return &deleteResult{stored: newKV.Value, uid: uid}, nil
	}
	return nil, apierr.ConflictModified(d.Group, d.Resource, name)
}

// setDeletionFinalizers applies the propagation policy to the object's
// finalizers as the garbage collector expects them: Orphan adds "orphan",
// Foreground adds "foregroundDeletion", Background removes both; without
// a policy the type's default decides. It reports whether they changed.
func setDeletionFinalizers(d *registry.Descriptor, obj Object, o *deleteOptions) bool {
	policy := ""
	switch {
	case o.PropagationPolicy != nil:
		policy = *o.PropagationPolicy
	case o.OrphanDependents != nil && *o.OrphanDependents:
		policy = propagationOrphan
	case o.OrphanDependents != nil:
		policy = propagationBackground
	case d.Strategy.OrphanByDefault:
		policy = propagationOrphan
	default:
		return false
	}
	before := finalizers(obj)
	after := slices.DeleteFunc(slices.Clone(before), func(f string) bool {
		return f == finalizerOrphan || f == finalizerForeground
	})
	switch policy {
	case propagationOrphan:
		after = append(after, finalizerOrphan)
	case propagationForeground:
		after = append(after, finalizerForeground)
	}
	if slices.Equal(before, after) {
		return false
	}
	setMeta(obj, "finalizers", anyList(after))
	return true
}

func anyList(l []string) any {
	if len(l) == 0 {
		return nil
	}
	return registry.AnyList(l)
}

// markDeletion sets the deletion timestamp and grace period of an object
// whose deletion starts, or shortens them when a later request asks for
// less time. It reports whether anything changed.
func (h *Handler) markDeletion(d *registry.Descriptor, obj Object, grace int64) bool {
	now := h.now()
	at := timestamp(now.Add(time.Duration(grace) * time.Second))
	if metaString(obj, "deletionTimestamp") == "" {
		setMeta(obj, "deletionTimestamp", at)
		if !d.Strategy.MarkWithoutGrace {
			setMeta(obj, "deletionGracePeriodSeconds", grace)
		}
		if g, ok := meta(obj, false)["generation"].(int64); ok && g > 0 {
			setMeta(obj, "generation", g+1)
		}
		return true
	}
	old, ok := meta(obj, false)["deletionGracePeriodSeconds"].(int64)
	if !ok || grace >= old {
		return false
	}
	// A shorter grace period moves the deletion earlier by the time taken
	// off, as upstream counts it from the first request.
	if prev, err := time.Parse(time.RFC3339, metaString(obj, "deletionTimestamp")); err == nil {
		at = timestamp(prev.Add(time.Duration(grace-old) * time.Second))
	}
	setMeta(obj, "deletionTimestamp", at)
	setMeta(obj, "deletionGracePeriodSeconds", grace)
	return true
}

// finalized reports whether an object being deleted has nothing left that
// keeps it: no finalizers, nothing pending for its type, and no grace
// period still running.
func (h *Handler) finalized(d *registry.Descriptor, obj Object) bool {
	if metaString(obj, "deletionTimestamp") == "" || len(finalizers(obj)) > 0 {
		return false
	}
	if g, _ := meta(obj, false)["deletionGracePeriodSeconds"].(int64); g > 0 {
		return false
	}
	return d.Strategy.PendingFinalizers == nil || !d.Strategy.PendingFinalizers(obj)
}

// deletable applies the type's refusal of some deletions (the namespaces
// the server itself needs) as a 403, unless the admission plugin that
// refuses them is off.
func (h *Handler) deletable(d *registry.Descriptor, name string) error {
	if d.Strategy.ForbidDelete == nil {
		return nil
	}
	if p := d.Strategy.ForbidDeletePlugin; p != "" && !h.admission.Enabled(p) {
		return nil
	}
	if reason := d.Strategy.ForbidDelete(name); reason != "" {
		return apierr.NewForbidden(d.Group, d.Resource, name, fmt.Sprintf("%s %q is forbidden: %s", d.GroupResource(), name, reason))
	}
	return nil
}

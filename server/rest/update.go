package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"platd/bolt"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
	"platd/server/schema"
)

// maxUpdateAttempts bounds the retries of an unconditional update racing
// other writers; each retry re-reads the object, so only a hot object under
// constant writes can exhaust it.
const maxUpdateAttempts = 16

// update serves PUT of an object or of a subresource that writes part of
// it (status, finalize, ...).
func (h *Handler) update(w http.ResponseWriter, r *http.Request, s *scope) {
	out, wo, dec, err := h.beginWrite(r, s, kindUpdateOptions)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	s.manager = managerName(r, wo)
	stored, code, err := h.updateObject(r.Context(), s, dec.obj, wo.dryRun)
	addWarnings(r.Context(), w, s.warnings)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	addWarnings(r.Context(), w, dec.warnings)
	h.writeObject(w, r, out, code, s.d, stored)
}

// updateObject applies a full new state to the addressed object and
// returns the stored bytes and status code.
func (h *Handler) updateObject(ctx context.Context, s *scope, obj Object, dryRun bool) ([]byte, int, error) {
	d := s.d
	s.dryRun = dryRun
	m := meta(obj, true)
	if name, _ := m["name"].(string); name == "" {
		return nil, 0, nameUndeterminable(s)
	} else if name != s.name {
		return nil, 0, nameMismatch(s, name)
	}
	// The name, then the namespace, as upstream's update handler checks
	// them before anything else, in its own words.
	if ns, _ := m["namespace"].(string); s.d.Namespaced && ns != "" && ns != s.ns {
		return nil, 0, apierr.BadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", ns, s.ns))
	}
	// A resourceVersion that is not a uint64 fails as upstream's storage
	// fails on it, unwrapped (a 500 without reason), once the object is
	// known to be there or creatable.
	rvText, _ := m["resourceVersion"].(string)
	wantRV, rvErr := parseUintVersion(rvText)
	uid, _ := m["uid"].(string)
	key := s.key()
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(key)
		if errors.Is(err, bolt.ErrNotFound) {
			// The uid is checked against the missing object first, as
			// upstream checks it before asking whether update may create.
			if uid != "" {
				return nil, 0, uidPreconditionFailed(s, h.storedAt(key), uid, "")
			}
			if s.sub != "" || !d.UpdateCreates {
				return nil, 0, apierr.NotFound(d.Group, d.Resource, s.name)
			}
			if rvErr != nil {
				return nil, 0, rvErr
			}
			if wantRV != 0 {
				return nil, 0, apierr.NotFound(d.Group, d.Resource, s.name)
			}
			stored, err := h.prepareAndCreate(ctx, s, deepCopyObject(obj), dryRun)
			return stored, http.StatusCreated, err
		}
		if err != nil {
			return nil, 0, objectErr(s, s.name, err)
		}
		var old Object
		if uid != "" {
			if old, err = decodeCurrent(d, kv.Value); err != nil {
				return nil, 0, internalErr(err)
			}
			if have := metaString(old, "uid"); uid != have {
				return nil, 0, uidPreconditionFailed(s, h.storedAt(key), uid, have)
			}
		}
		if rvErr != nil {
			return nil, 0, rvErr
		}
		if wantRV == 0 && d.UpdateRequiresResourceVersion {
			return nil, 0, apierr.NewInvalid(d.Group, d.Kind, s.name, apierr.FieldErrors{
				apierr.Invalid("metadata.resourceVersion", uint64(0), "must be specified for an update")})
		}
		if wantRV != 0 && !wantRV.equals(kv.ModRevision) {
			return nil, 0, apierr.ConflictModified(d.Group, d.Resource, s.name)
		}
		if old == nil {
			if old, err = decodeCurrent(d, kv.Value); err != nil {
				return nil, 0, internalErr(err)
			}
		}
		next, err := h.prepareUpdate(ctx, s, deepCopyObject(obj), old)
		if err != nil {
			return nil, 0, err
		}
		stored, retry, err := h.commitUpdate(ctx, s, kv, next, dryRun)
		if retry {
			if wantRV != 0 {
				return nil, 0, apierr.ConflictModified(d.Group, d.Resource, s.name)
			}
			continue
		}
		return stored, http.StatusOK, err
	}
	return nil, 0, apierr.ConflictModified(d.Group, d.Resource, s.name)
}

// uidPreconditionFailed is upstream's answer to an update whose object
// names a uid other than the stored object's (have, empty when there is
// none): the new object's uid is a precondition of the write, checked
// before its resourceVersion. key is as errors name it (storedAt).
func uidPreconditionFailed(s *scope, key, want, have string) error {
	return apierr.Conflict(s.d.Group, s.d.Resource, s.name, storageErrorText(storageInvalidObject, key,
		fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", want, have)))
}

// commitUpdate writes next over the stored kv unless nothing changed, and
// removes the object instead when its last finalizer went away. It
// returns the stored bytes; retry is set when another writer got there
// first.
func (h *Handler) commitUpdate(ctx context.Context, s *scope, kv bolt.KV, next Object, dryRun bool) (stored []byte, retry bool, err error) {
	d := s.d
	enc, err := encodeStored(d, next)
	if err != nil {
		return nil, false, err
	}
	if equalApartFromRV(enc, kv.Value) && !h.staleStored(s.key()) {
		return kv.Value, false, nil
	}
	// Only the types whose evaluator charges updates (services, claims)
	// are charged to quotas on update, by the growth of their usage.
	chargeable := quota.For(d).ChargesUpdates() && !h.finalized(d, next)
	var old Object
	if d.Strategy.Claims != nil || chargeable {
		if old, err = decodeStored(d, kv.Value); err != nil {
			return nil, false, internalErr(err)
		}
	}
	if dryRun {
		if chargeable {
			if _, err := h.charged(s, next, old, nil); err != nil {
				return nil, false, err
			}
		}
		dry, _ := Stamp(enc, kv.ModRevision)
		return dry, false, nil
	}
	if h.finalized(d, next) {
		delKV, err := h.storeDelete(ctx, d, s.key(), kv.ModRevision, old)
		if lostRace(err) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, objectErr(s, s.name, err)
		}
		final, _ := Stamp(enc, delKV.ModRevision)
		return final, false, nil
	}
	store := func(quotaOps []bolt.Op) (bolt.KV, error) {
		return h.storeUpdate(ctx, d, s.key(), kv.ModRevision, next, old, enc, quotaOps)
	}
	var newKV bolt.KV
	if chargeable {
		newKV, err = h.charged(s, next, old, store)
	} else {
		newKV, err = store(nil)
	}
	if apiErr := (*apierr.Error)(nil); errors.As(err, &apiErr) {
		return nil, false, err
	}
	if heldElsewhere(err) && d.Strategy.Allocate != nil {
		// Allocation picks again, seeing the claim, from the request.
		return nil, true, nil
	}
	if lostRace(err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, objectErr(s, s.name, err)
	}
	return newKV.Value, false, nil
}

// prepareUpdate builds the new state from the request's object and the
// stored one, then validates it. As upstream, the mutating admission
// sees the object as written, before the update takes from it what it
// may change (a subresource its part, the main resource all but its
// status) and the type's update rules run: a webhook's change to the
// spec bumps the generation as the writer's would, its change to what
// the write may not change is dropped.
func (h *Handler) prepareUpdate(ctx context.Context, s *scope, obj, old Object) (Object, error) {
	d := s.d
	// The written object is defaulted as upstream defaults every decoded
	// body, before a subresource takes its part of it.
	if d.Strategy.Default != nil {
		obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
		d.Strategy.Default(obj)
	}
	// The object is in the addressed namespace before admission sees it,
	// as upstream's update handler places it.
	placeInNamespace(s, obj)
	written, mutated := obj, false
	if h.mayMutate(s) {
		// Admission works on a copy: ownership is of what the request
		// wrote, not of what admission changes.
		obj = deepCopyObject(written)
		if err := h.admit(ctx, s, obj, old); err != nil {
			return nil, err
		}
		if err := h.mutateAdmission(ctx, s, admission.OpUpdate, obj, old, s.dryRun); err != nil {
			return nil, err
		}
		mutated = !reflect.DeepEqual(obj, written)
	} else if err := h.mutateAdmission(ctx, s, admission.OpUpdate, obj, old, s.dryRun); err != nil {
		// Admission that only refuses (NodeRestriction) sees the
		// object itself.
		return nil, err
	}
	if s.sub == "" || d.Subresource(s.sub).Keep != nil {
		if errs := validateObjectMetaUpdate(obj, old); len(errs) > 0 {
			return nil, apierr.NewInvalid(d.Group, d.Kind, s.name, errs)
		}
	}
	next := h.updatedObject(s, obj, old)
	if !mutated {
		h.track(s, old, next)
	} else {
		// Ownership is recorded as the write would have been without
		// admission.
		w := h.updatedObject(s, written, old)
		h.track(s, old, w)
		copyMember(meta(next, true), meta(w, true), "managedFields")
	}
	if d.Strategy.PrepareForUpdate != nil {
		d.Strategy.PrepareForUpdate(next, old, s.sub)
	}
	if d.Strategy.Warnings != nil && s.sub == "" {
		s.warnings = append(s.warnings, d.Strategy.Warnings(next, old)...)
	}
	if s.sub == "" {
		if err := authorizeWrite(ctx, s, next, old); err != nil {
			return nil, err
		}
	}
	// Values are allocated before validation, as on create; only the main
	// resource changes what an object claims.
	if s.sub == "" {
		if err := h.allocate(d, next, old); err != nil {
			return nil, err
		}
	}
	errs := h.validateObjectMeta(d, next, true)
	if d.SchemaValidation {
		errs = append(errs, schema.Validate(next, d.Schema)...)
	}
	var sub *registry.Subresource
	if s.sub != "" {
		sub = d.Subresource(s.sub)
	}
	if sub != nil && sub.RequireResourceVersion && metaString(obj, "resourceVersion") == "" {
		errs = append(errs, apierr.Required("resourceVersion", ""))
	}
	switch {
	case sub != nil && sub.Validate != nil:
		errs = append(errs, sub.Validate(next, old)...)
	case d.Strategy.ValidateUpdate != nil:
		errs = append(errs, d.Strategy.ValidateUpdate(next, old)...)
	case d.Strategy.Validate != nil:
		errs = append(errs, d.Strategy.Validate(next)...)
	}
	if len(errs) > 0 {
		return nil, apierr.NewInvalid(d.Group, d.Kind, s.name, errs)
	}
	if err := h.validateAdmission(ctx, s, next, old, s.dryRun); err != nil {
		return nil, err
	}
	if err := admitRequester(ctx, s, next, old); err != nil {
		return nil, err
	}
	if err := h.validatePolicies(ctx, s, admission.OpUpdate, next, old, s.dryRun); err != nil {
		return nil, err
	}
	return next, nil
}

// mayMutate says whether the mutating admission of a write of s may
// change its object: the type's Admit hook or a mutating webhook may,
// a plugin that only refuses (NodeRestriction, AlwaysDeny) may not.
func (h *Handler) mayMutate(s *scope) bool {
	if s.d.Strategy.Admit != nil && admitted(s) {
		return true
	}
	return h.mutating != nil && !s.admittedElsewhere && s.trackAs == "" && h.mutating.MayChange()
}

// updatedObject is the new state an update writes from the request's
// object obj and the stored old, with defaults: the main resource and a
// subresource that keeps members of the stored object take obj itself
// (which is changed) less what they may not change, a subresource that
// writes only its part takes a copy of old with that part of obj.
func (h *Handler) updatedObject(s *scope, obj, old Object) Object {
	d := s.d
	var next Object
	if s.sub == "" {
		next = obj
		carryUpdateMeta(next, old)
		if d.Subresource("status") != nil {
			// The main resource cannot write status; the status subresource
			// exists for that.
			copyMember(next, old, "status")
		}
	} else if keep := d.Subresource(s.sub).Keep; keep != nil {
		// The subresource writes the object less the members it keeps.
		next = obj
		carryUpdateMeta(next, old)
		for _, p := range keep {
			keepPath(next, old, p)
		}
	} else {
		// A subresource writes only its part of the object.
		next = deepCopyObject(old)
		if cp := d.Subresource(s.sub).Copy; cp != nil {
			cp(next, obj)
		} else {
			copyMember(next, obj, "status")
		}
		if s.applying {
			// The apply recorded its ownership in what it merged.
			copyMember(meta(next, true), meta(obj, true), "managedFields")
		}
	}
	next["kind"], next["apiVersion"] = d.Kind, d.GroupVersion()
	schema.ApplyDefaults(next, d.Schema)
	return next
}

// keepPath sets the member at a dotted path of dst to a copy of src's,
// removing it when src has none.
func keepPath(dst, src Object, path string) {
	keys := strings.Split(path, ".")
	parent := func(o Object, create bool) Object {
		for _, k := range keys[:len(keys)-1] {
			m, _ := o[k].(map[string]any)
			if m == nil {
				if !create {
					return nil
				}
				m = map[string]any{}
				o[k] = m
			}
			o = m
		}
		return o
	}
	last := keys[len(keys)-1]
	if sp := parent(src, false); sp != nil {
		if v, ok := sp[last]; ok {
			parent(dst, true)[last] = schema.DeepCopy(v)
			return
		}
	}
	if dp := parent(dst, false); dp != nil {
		delete(dp, last)
	}
}

// copyMember sets dst[name] to src[name], or removes it when src has none.
func copyMember(dst, src Object, name string) {
	if v, ok := src[name]; ok {
		dst[name] = v
	} else {
		delete(dst, name)
	}
}

// deepCopyObject copies a decoded object so a retry starts from the
// request's state.
func deepCopyObject(obj Object) Object {
	out, _ := schema.DeepCopy(obj).(map[string]any)
	return out
}

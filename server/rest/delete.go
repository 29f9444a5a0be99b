package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
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
}

type precond struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// parseDeleteOptions reads DeleteOptions from the body (any apiVersion)
// and the query parameters, the query winning.
func (h *Handler) parseDeleteOptions(r *http.Request) (*deleteOptions, bool, error) {
	o := &deleteOptions{}
	body, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	if len(trimNewline(body)) > 0 {
		if err := json.Unmarshal(body, o); err != nil {
			return nil, false, apierr.BadRequest(fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s: %v", mediaJSON, err))
		}
		if o.Kind != "" && o.Kind != "DeleteOptions" {
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
	if v := q.Get("orphanDependents"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, false, apierr.BadRequest(err.Error())
		}
		o.OrphanDependents = &b
	}
	if vals, ok := q["dryRun"]; ok {
		o.DryRun = vals
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
	if len(errs) > 0 {
		return nil, false, h.optionsInvalid(kindDeleteOptions, errs...)
	}
	return o, dry, nil
}

// deleteResult is the outcome of deleting one object.
type deleteResult struct {
	// body is the object JSON when the object is returned.
	body []byte
	// removed is set when the object is gone (not just marked).
	removed bool
	uid     string
}

// delete serves DELETE of one object.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiate(r, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	o, dry, err := h.parseDeleteOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.deleteObject(r.Context(), s.d, s, s.ns, s.name, o, dry)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if !res.removed && o.OrphanDependents != nil && !*o.OrphanDependents {
		code = http.StatusAccepted
	}
	if res.removed && !s.d.ReturnDeleted {
		body, _ := json.Marshal(apierr.Status{Kind: "Status", APIVersion: "v1", Status: apierr.StatusSuccess,
			Details: &apierr.Details{Name: s.name, Group: s.d.Group, Kind: s.d.Resource, UID: res.uid}})
		h.writeBody(w, r, out, code, body, s.d)
		return
	}
	h.writeBody(w, r, out, code, res.body, s.d)
}

// preconditionFailed is the 409 of a failed delete precondition, which
// names the Kind rather than the resource.
func preconditionFailed(d *registry.Descriptor, name, what, want, have, tail string) error {
	e := apierr.Conflict(d.Group, d.Kind, name, fmt.Sprintf("the %s in the precondition (%s) does not match the %s in record (%s). %s", what, want, what, have, tail))
	e.Status.Message = fmt.Sprintf("Operation cannot be fulfilled on %s %q: the %s in the precondition (%s) does not match the %s in record (%s). %s", d.GroupKind(), name, what, want, what, have, tail)
	return e
}

// deleteObject deletes or marks one object, retrying lost races.
func (h *Handler) deleteObject(ctx context.Context, d *registry.Descriptor, s *scope, ns, name string, o *deleteOptions, dry bool) (*deleteResult, error) {
	key := objectKey(d, ns, name)
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(key)
		if err != nil {
			return nil, h.storeErrorFor(s, name, err)
		}
		obj, err := decodeStored(d, kv.Value)
		if err != nil {
			return nil, apierr.InternalError(err)
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
		if err := deletable(d, name); err != nil {
			return nil, err
		}
		marking := d.Strategy.Graceful || len(finalizers(obj)) > 0
		if !marking {
			if dry {
				return &deleteResult{body: objectJSON(nil, d, kv.Value), removed: true, uid: uid}, nil
			}
			if _, err := h.store.Delete(ctx, key, kv.ModRevision); err != nil {
				if errors.Is(err, bolt.ErrConflict) || errors.Is(err, bolt.ErrNotFound) {
					continue
				}
				return nil, h.storeErrorFor(s, name, err)
			}
			return &deleteResult{body: objectJSON(nil, d, kv.Value), removed: true, uid: uid}, nil
		}
		if metaString(obj, "deletionTimestamp") != "" {
			if d.Strategy.DeletingConflict != "" && d.Strategy.PendingFinalizers != nil && d.Strategy.PendingFinalizers(obj) {
				return nil, apierr.Conflict(d.Group, d.Resource, name, d.Strategy.DeletingConflict)
			}
			return &deleteResult{body: objectJSON(nil, d, kv.Value), uid: uid}, nil
		}
		obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
		setMeta(obj, "deletionTimestamp", timestamp(h.now()))
		setMeta(obj, "deletionGracePeriodSeconds", int64(0))
		if g, ok := meta(obj, false)["generation"].(int64); ok && g > 0 {
			setMeta(obj, "generation", g+1)
		}
		if d.Strategy.PrepareForDelete != nil {
			d.Strategy.PrepareForDelete(obj)
		}
		stored := encodeStored(d, obj)
		if dry {
			dryBytes, _ := Stamp(stored, kv.ModRevision)
			return &deleteResult{body: objectJSON(nil, d, dryBytes), uid: uid}, nil
		}
		if h.finalized(d, obj) {
			if _, err := h.store.Delete(ctx, key, kv.ModRevision); err != nil {
				if errors.Is(err, bolt.ErrConflict) || errors.Is(err, bolt.ErrNotFound) {
					continue
				}
				return nil, h.storeErrorFor(s, name, err)
			}
			return &deleteResult{body: objectJSON(nil, d, kv.Value), removed: true, uid: uid}, nil
		}
		newKV, err := h.store.Update(ctx, key, kv.ModRevision, stored)
		if err != nil {
			if errors.Is(err, bolt.ErrConflict) || errors.Is(err, bolt.ErrNotFound) {
				continue
			}
			return nil, h.storeErrorFor(s, name, err)
		}
		return &deleteResult{body: objectJSON(nil, d, newKV.Value), uid: uid}, nil
	}
	return nil, apierr.ConflictModified(d.Group, d.Resource, name)
}

// finalized reports whether an object being deleted has nothing left that
// keeps it.
func (h *Handler) finalized(d *registry.Descriptor, obj Object) bool {
	if metaString(obj, "deletionTimestamp") == "" || len(finalizers(obj)) > 0 {
		return false
	}
	return d.Strategy.PendingFinalizers == nil || !d.Strategy.PendingFinalizers(obj)
}

// deletable applies the type's refusal of some deletions (the namespaces
// the server itself needs) as a 403.
func deletable(d *registry.Descriptor, name string) error {
	if d.Strategy.ForbidDelete == nil {
		return nil
	}
	if reason := d.Strategy.ForbidDelete(name); reason != "" {
		return apierr.NewForbidden(d.Group, d.Resource, name, fmt.Sprintf("%s %q is forbidden: %s", d.GroupResource(), name, reason))
	}
	return nil
}

package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	"platd/bolt"
	"platd/config"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/filters"
	"platd/server/registry"
	"platd/server/schema"
)

// maxGenerateNameAttempts is how often a generateName collision is retried
// before giving up, as upstream.
const maxGenerateNameAttempts = 8

// deletionTimestampKey is searched for in stored bytes without the
// member name's opening quote: a search starting with a byte as common in
// JSON as a quote falls back to a far slower scan.
var deletionTimestampKey = []byte(`deletionTimestamp":`)

// errMetadataRead stops a walk of a stored object once its metadata is read.
var errMetadataRead = errors.New("metadata read")

// markedForDeletion reports whether stored object bytes carry a
// metadata.deletionTimestamp. A search for the member's name settles the
// common case in one scan, but a label or annotation may bear that name
// too, so a match is confirmed by reading the metadata.
func markedForDeletion(value []byte) bool {
	if !bytes.Contains(value, deletionTimestampKey) {
		return false
	}
	marked := false
	_, _ = schema.EachMember(value, func(name, raw []byte) error {
		if string(name) != "metadata" {
			return nil
		}
		_, _ = schema.EachMember(raw, func(name, raw []byte) error {
			if string(name) == "deletionTimestamp" && string(raw) != "null" && string(raw) != `""` {
				marked = true
			}
			return nil
		})
		return errMetadataRead
	})
	return marked
}

// checkNamespace refuses content in a missing or terminating namespace,
// as upstream's NamespaceLifecycle admission: not at all while it is off.
func (h *Handler) checkNamespace(s *scope, name string) error {
	if !s.d.Namespaced || s.ns == "" || !h.admission.Enabled(config.PluginNamespaceLifecycle) {
		return nil
	}
	nd := h.reg.Namespaces()
	if nd == nil {
		return nil
	}
	kv, err := h.store.Get(nd.Key("", s.ns))
	if err != nil {
		return objectErr(&scope{d: nd}, s.ns, err)
	}
	if markedForDeletion(kv.Value) {
		e := apierr.NewForbidden(s.d.Group, s.d.Resource, name,
			fmt.Sprintf("%s %q is forbidden: unable to create new content in namespace %s because it is being terminated", s.d.GroupResource(), name, s.ns))
		e.Status.Details.Causes = []apierr.Cause{{Type: "NamespaceTerminating", Message: fmt.Sprintf("namespace %s is being terminated", s.ns), Field: "metadata.namespace"}}
		return e
	}
	return nil
}

// provisionNamespace creates the namespace a create names when none is
// stored, as upstream's NamespaceAutoProvision plugin does before
// NamespaceLifecycle checks it: not for a dry run, and as the server's
// own write (not the requester's). A failure refuses the create, naming
// its object.
func (h *Handler) provisionNamespace(ctx context.Context, s *scope, name string, dryRun bool) error {
	if dryRun || !s.d.Namespaced || s.ns == "" || !h.admission.Enabled(config.PluginNamespaceAutoProvision) {
		return nil
	}
	nd := h.reg.Namespaces()
	if nd == nil {
		return nil
	}
	_, err := h.store.Get(nd.Key("", s.ns))
	if err == nil {
		return nil
	}
	if errors.Is(err, bolt.ErrNotFound) {
		err = h.CreateOnly(filters.WithUser(ctx, nil), nd, Object{"metadata": map[string]any{"name": s.ns}})
		if err == nil || apierr.ReasonOf(err) == apierr.ReasonAlreadyExists {
			return nil
		}
	}
	return apierr.NewForbidden(s.d.Group, s.d.Resource, name, fmt.Sprintf("%s %q is forbidden: %v", s.d.GroupResource(), name, h.toStatus(err)))
}

// create serves POST to a collection.
func (h *Handler) create(w http.ResponseWriter, r *http.Request, s *scope) {
	if s.d.RefuseCreate != "" {
		e := apierr.MethodNotSupported(s.d.Group, s.d.Resource, "create")
		e.Status.Message = s.d.RefuseCreate
		h.writeError(w, r, e)
		return
	}
	out, wo, dec, err := h.beginWrite(r, s, kindCreateOptions)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	s.manager = managerName(r, wo)
	stored, err := h.prepareAndCreate(r.Context(), s, dec.obj, wo.dryRun)
	addWarnings(r.Context(), w, s.warnings)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	addWarnings(r.Context(), w, dec.warnings)
	h.writeObject(w, r, out, http.StatusCreated, s.d, stored)
}

// prepareAndCreate prepares and stores a decoded body, preparing it again
// from the body when a value allocated to it was claimed meanwhile.
func (h *Handler) prepareAndCreate(ctx context.Context, s *scope, body Object, dryRun bool) ([]byte, error) {
	for attempt := 1; ; attempt++ {
		obj := body
		if s.d.Strategy.Allocate != nil {
			obj = deepCopyObject(body)
		}
		prepared, err := h.prepareCreate(ctx, s, obj, dryRun)
		if err != nil {
			return nil, err
		}
		stored, err := h.createObject(ctx, s, prepared, dryRun)
		if heldElsewhere(err) && s.d.Strategy.Allocate != nil && attempt < maxAllocateAttempts {
			continue
		}
		return stored, err
	}
}

// prepareCreate turns a decoded body into the object to store: metadata
// checks, defaults, the mutating admission, then what upstream's storage
// does before it validates (the generated name, system fields, the
// type's create rules), validation and the validating admission. A dry
// run is prepared as the real create, apart from the resourceVersion
// check.
func (h *Handler) prepareCreate(ctx context.Context, s *scope, obj Object, dryRun bool) (Object, error) {
	d := s.d
	if err := checkNamespace(s, obj); err != nil {
		return nil, err
	}
	// The object is in the request's namespace, without the system
	// fields a client may have sent, before admission sees it, as
	// upstream's create handler prepares it; the namespace must exist and
	// not be terminating (NamespaceLifecycle, the first plugin).
	placeInNamespace(s, obj)
	wipeSystemMeta(obj)
	if err := h.provisionNamespace(ctx, s, admission.ObjectName(obj), dryRun); err != nil {
		return nil, err
	}
	if err := h.checkNamespace(s, admission.ObjectName(obj)); err != nil {
		return nil, err
	}
	if d.Strategy.Default != nil {
		d.Strategy.Default(obj)
	}
	schema.ApplyDefaults(obj, d.Schema)
	// Ownership is of what the request wrote, with defaults: not of what
	// admission, the type's create rules or allocation add.
	h.track(s, nil, obj)
	// The mutating admission (the type's own, then the webhooks) sees the
	// object as written: without a generated name, system fields, or the
	// status its type resets.
	if err := h.admit(ctx, s, obj, nil); err != nil {
		return nil, err
	}
	if err := h.mutateAdmission(ctx, s, admission.OpCreate, obj, nil, dryRun); err != nil {
		return nil, err
	}
	m := meta(obj, true)
	// Upstream's storage refuses a resourceVersion after validation, and
	// its dry run never asks.
	rv, _ := m["resourceVersion"].(string)
	rvSet := rv != "" && !dryRun
	name, _ := m["name"].(string)
	if name == "" {
		if gen, _ := m["generateName"].(string); gen != "" {
			name = registry.GenerateName(gen)
			m["name"] = name
			s.generatedName = true
		}
	}
	h.prepareCreateMeta(s, obj)
	if _, hasStatus := obj["status"]; hasStatus && d.Subresource("status") != nil && !d.KeepStatusOnCreate {
		// Status is written through its subresource; a new object starts
		// without one (its type may then set the initial status), but
		// with the defaults of an empty one, as upstream's storage reads
		// it back. An object that has none was defaulted without one.
		delete(obj, "status")
		if d.Strategy.Default != nil {
			d.Strategy.Default(obj)
		}
		schema.ApplyDefaults(obj, d.Schema)
	}
	if d.Strategy.PrepareForCreate != nil {
		d.Strategy.PrepareForCreate(obj)
	}
	if u := filters.UserFrom(ctx); u != nil && d.Strategy.StampRequester != nil {
		d.Strategy.StampRequester(obj, registry.Requester{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra})
	}
	if err := authorizeWrite(ctx, s, obj, nil); err != nil {
		return nil, err
	}
	// Values are allocated before validation, as upstream: validation
	// then sees the object as it will be stored.
	if err := h.allocate(d, obj, nil); err != nil {
		return nil, err
	}
	errs := h.validateObjectMeta(d, obj, false)
	if d.SchemaValidation {
		errs = append(errs, schema.Validate(obj, d.Schema)...)
	}
	switch {
	case d.Strategy.ValidateCreate != nil:
		errs = d.Strategy.ValidateCreate(obj, errs)
	case d.Strategy.Validate != nil:
		errs = append(errs, d.Strategy.Validate(obj)...)
	}
	if len(errs) > 0 {
		return nil, apierr.NewInvalid(d.Group, d.Kind, metaString(obj, "name"), errs)
	}
	// The type warns of an object only once it is valid, as upstream.
	if d.Strategy.Warnings != nil {
		s.warnings = append(s.warnings, d.Strategy.Warnings(obj, nil)...)
	}
	if err := h.validateAdmission(ctx, s, obj, nil, dryRun); err != nil {
		return nil, err
	}
	if err := admitRequester(ctx, s, obj, nil); err != nil {
		return nil, err
	}
	if err := h.validatePolicies(ctx, s, admission.OpCreate, obj, nil, dryRun); err != nil {
		return nil, err
	}
	if rvSet {
		return nil, errors.New("resourceVersion should not be set on objects to be created")
	}
	return obj, nil
}

// createObject stores obj (retrying generated names on collision) and
// returns the stored bytes (for a dry run, what would be stored). A name
// the client gave is never replaced, generateName or not: taken, it is a
// conflict, as upstream.
func (h *Handler) createObject(ctx context.Context, s *scope, obj Object, dryRun bool) ([]byte, error) {
	d := s.d
	gen := ""
	if s.generatedName {
		gen = metaString(obj, "generateName")
	}
	for attempt := 1; ; attempt++ {
		name := metaString(obj, "name")
		key := d.Key(metaString(obj, "namespace"), name)
		if dryRun {
			// Quota admission refuses before storage would find the
			// name taken, as upstream's.
			if _, err := h.charged(s, obj, nil, nil); err != nil {
				return nil, err
			}
			if existing, err := h.store.Get(key); err == nil {
				return nil, h.alreadyExists(s, name, existing.Value)
			}
			return encodeDryRun(d, obj)
		}
		enc, err := encodeStored(d, obj)
		if err != nil {
			return nil, err
		}
		kv, err := h.charged(s, obj, nil, func(quotaOps []bolt.Op) (bolt.KV, error) {
			return h.storeCreate(ctx, d, key, obj, enc, quotaOps)
		})
		if err == nil {
			return kv.Value, nil
		}
		if apiErr := (*apierr.Error)(nil); errors.As(err, &apiErr) {
			return nil, err
		}
		if !errors.Is(err, bolt.ErrExists) {
			return nil, objectErr(s, name, err)
		}
		if gen == "" {
			existing, _ := h.store.Get(key)
			return nil, h.alreadyExists(s, name, existing.Value)
		}
		if attempt == maxGenerateNameAttempts {
			e := apierr.AlreadyExists(d.Group, d.Resource, name)
			e.Status.Message += ", the server was not able to generate a unique name for the object"
			e.Status.Details.RetryAfterSeconds = 1
			return nil, e
		}
		setMeta(obj, "name", registry.GenerateName(gen))
	}
}

// alreadyExists is the 409 of a create whose name is taken, telling apart
// an object that is only waiting for its finalizers.
func (h *Handler) alreadyExists(s *scope, name string, existing []byte) error {
	e := apierr.AlreadyExists(s.d.Group, s.d.Resource, name)
	if markedForDeletion(existing) {
		e.Status.Message = "object is being deleted: " + e.Status.Message
	}
	return e
}

// authorizeWrite runs the type's AuthorizeWrite for a write made for a
// user: creates, and updates of the main resource (the caller's check).
func authorizeWrite(ctx context.Context, s *scope, obj, old Object) error {
	check := s.d.Strategy.AuthorizeWrite
	if check == nil {
		return nil
	}
	u := filters.UserFrom(ctx)
	if u == nil {
		return nil
	}
	return check(ctx, registry.Requester{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}, s.name, obj, old)
}

// admitRequester runs the type's admission that depends on who writes,
// for a write made for a user, once the write has passed validation (old
// is nil on create).
func admitRequester(ctx context.Context, s *scope, obj, old Object) error {
	check := s.d.Strategy.AdmitRequester
	if check == nil {
		return nil
	}
	u := filters.UserFrom(ctx)
	if u == nil {
		return nil
	}
	return check(ctx, registry.Requester{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}, s.sub, obj, old)
}

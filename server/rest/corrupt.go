package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"platd/bolt"
	"platd/security"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/filters"
)

// Objects whose stored value cannot be read back (a lost encryption key,
// damaged bytes) are reported with upstream's texts. With the
// AllowUnsafeMalformedObjectDeletion gate on, a read names the storage key
// and a list names every such key, as upstream 1.32 does; with it off, the
// read answers the bare cause and a list the first key.

// maxCorruptCauses caps the keys a list failure names, as upstream.
const maxCorruptCauses = 100

// corruptDetail is upstream's text for why a stored value is unreadable.
func corruptDetail(ce *bolt.CorruptError) string {
	if ce.Untransformable {
		return fmt.Sprintf("data from the storage is not transformable revision=0: %v", ce.Err)
	}
	return fmt.Sprintf("object not decodable revision=%d: %v", ce.ModRevision, ce.Err)
}

// Codes of upstream's storage errors that platd reports.
const (
	storageInvalidObject = 4
	storageCorruptObject = 7
)

// storedAt is key as errors name it: as etcd holds it (Config.KeyPrefix).
func (h *Handler) storedAt(key string) string { return h.keyPrefix + key }

// storageErrorText is upstream's text of a StorageError of code about
// the object stored under key (see storedAt).
func storageErrorText(code int, key, msg string) string {
	what := "invalid object"
	if code == storageCorruptObject {
		what = "corrupt object"
	}
	return fmt.Sprintf("StorageError: %s, Code: %d, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s", what, code, key, msg)
}

// corruptStorageError is upstream's StorageError text of a corrupt object.
func (h *Handler) corruptStorageError(ce *bolt.CorruptError) string {
	return storageErrorText(storageCorruptObject, h.storedAt(ce.Key), corruptDetail(ce))
}

// corruptStatus is the 500 of a read of an unreadable object.
func (h *Handler) corruptStatus(ce *bolt.CorruptError) error {
	if !h.unsafeDelete {
		return apierr.InternalError(ce.Err)
	}
	return apierr.InternalError(errors.New(h.corruptStorageError(ce)))
}

// corruptListStatus is the 500 of a list over unreadable objects.
func (h *Handler) corruptListStatus(s *scope, cl *bolt.CorruptListError) error {
	if !h.unsafeDelete {
		ce := cl.Keys[0]
		return apierr.InternalError(fmt.Errorf("unable to transform key %q: %w", h.storedAt(ce.Key), ce.Err))
	}
	d := s.d
	var causes []apierr.Cause
	for i, ce := range cl.Keys {
		if i == maxCorruptCauses {
			causes = append(causes, apierr.Cause{Type: "FieldValueTooMany", Message: "too many errors, the list is truncated"})
			break
		}
		causes = append(causes, apierr.Cause{Type: "UnexpectedServerResponse", Message: h.corruptStorageError(ce), Field: h.storedAt(ce.Key)})
	}
	return apierr.New(http.StatusInternalServerError, apierr.ReasonStoreReadError,
		fmt.Sprintf("failed to read one or more %s from the storage", d.GroupResource()),
		&apierr.Details{Name: "list", Group: d.Group, Kind: d.Resource, Causes: causes})
}

// VerifyStored is the engine's check of a value read back at start
// (bolt.Options.Verify): every stored object is a JSON object that carries
// its resourceVersion. It looks at the ends and the metadata only, so a
// start stays fast; a value that passes but does not parse fails where it
// is decoded.
func VerifyStored(_ string, value []byte) error {
	switch {
	case len(value) == 0:
		return errors.New("unexpected end of JSON input")
	case value[0] != '{':
		return fmt.Errorf("invalid character %q looking for beginning of value", value[0])
	case value[len(value)-1] != '}':
		return errors.New("unexpected end of JSON input")
	case bytes.Index(value, rvKey) < 0:
		return errNoResourceVersion
	}
	return nil
}

// staleChecker is what an engine that knows stale stored values offers
// (bolt.DB.Stale).
type staleChecker interface{ Stale(key string) bool }

// staleStored reports whether the stored value of key was written with an
// encryption key that no longer comes first: an update that changes
// nothing is still written then, so that rewriting every object (kubectl
// replace) re-encrypts it, as upstream does.
func (h *Handler) staleStored(key string) bool {
	sc, ok := h.store.(staleChecker)
	return ok && sc.Stale(key)
}

// verbUnsafeDelete is the verb an unsafe delete needs beyond delete.
const verbUnsafeDelete = "unsafe-delete-ignore-read-errors"

// unsafeDeleteObject serves a DELETE with
// ignoreStoreReadErrorWithClusterBreakingPotential: it removes an object
// whose stored value cannot be read, skipping preconditions, finalizers,
// grace periods and claims (none of which can be read), after checking
// that the user may also do verbUnsafeDelete on it. An object that reads
// fine is refused, as upstream does: the option is for corrupt objects only.
func (h *Handler) unsafeDeleteObject(w http.ResponseWriter, r *http.Request, out output, s *scope) {
	// The audit log shows that the delete was tried unsafely, whatever
	// comes of it.
	audit.AddAnnotation(r.Context(), "apiserver."+h.brand.Domain+"/unsafe-delete-ignore-read-error", "")
	if err := h.authorizeUnsafeDelete(r, s); err != nil {
		h.writeError(w, r, err)
		return
	}
	d := s.d
	key := d.Key(s.ns, s.name)
	_, err := h.store.Get(key)
	var ce *bolt.CorruptError
	if !errors.As(err, &ce) {
		h.writeError(w, r, apierr.NewInvalid(d.Group, d.Resource, s.name, apierr.FieldErrors{
			apierr.Invalid(paramIgnoreStoreReadError, true, "is exclusively used to delete corrupt object(s), try again by removing this option")}))
		return
	}
	h.log.Warn("unsafe delete of a corrupt object", "key", key, "err", ce.Err)
	// The history and watchers see a bare object of the name as the
	// deleted state, since the stored one cannot be read. The delete holds
	// only if the corrupt value is still there: a write meanwhile made the
	// object readable, and a readable object is not removed this way.
	op := bolt.Op{Kind: bolt.OpDelete, Key: key, Value: standIn(s), ExpectedRevision: ce.ModRevision}
	if _, err := h.store.Txn(r.Context(), []bolt.Op{op}); err != nil {
		h.writeError(w, r, objectErr(s, s.name, err))
		return
	}
	h.writeStatus(w, r, out, http.StatusOK, &apierr.Status{Kind: "Status", APIVersion: "v1", Status: apierr.StatusSuccess, Code: http.StatusOK,
		Details: &apierr.Details{Name: s.name, Kind: d.Kind}})
}

// standIn is the stored form of an object that has only its name.
func standIn(s *scope) []byte {
	m := map[string]any{"name": s.name, "resourceVersion": ""}
	if s.ns != "" && s.d.Namespaced {
		m["namespace"] = s.ns
	}
	meta, _ := json.Marshal(m)
	return append(append([]byte(`{"metadata":`), meta...), '}')
}

// authorizeUnsafeDelete asks the authorizer whether the user may also do
// verbUnsafeDelete on the object, as upstream's delete handler does.
func (h *Handler) authorizeUnsafeDelete(r *http.Request, s *scope) error {
	d := s.d
	forbidden := func(reason string) error {
		return apierr.NewForbidden(d.Group, d.Resource, s.name, fmt.Sprintf("%s %q is forbidden: %s", d.GroupResource(), s.name, reason))
	}
	if s.sub != "" {
		return forbidden("ignoreStoreReadErrorWithClusterBreakingPotential delete option is not allowed on a subresource or non-resource request")
	}
	if h.authz == nil {
		return apierr.InternalError(errors.New("no authorizer provided, unable to authorize unsafe delete"))
	}
	ctx := r.Context()
	version := ""
	if s.info != nil {
		version = s.info.Version
	}
	decision, reason, err := h.authz.Authorize(ctx, security.Attributes{User: filters.UserFrom(ctx), Verb: verbUnsafeDelete,
		Namespace: s.ns, APIGroup: d.Group, APIVersion: version, Resource: d.Resource, Name: s.name, ResourceRequest: true})
	switch {
	case err != nil:
		return forbidden(fmt.Sprintf("error while checking permission for %q, %v", verbUnsafeDelete, err))
	case decision != security.DecisionAllow:
		return forbidden(fmt.Sprintf("not permitted to do %q, reason: %s", verbUnsafeDelete, reason))
	}
	return nil
}

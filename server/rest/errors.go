package rest

import (
	"context"
	"errors"
	"fmt"

	"platd/bolt"
	"platd/server/apierr"
)

// This file is the one place where errors of the storage engine become
// Statuses. Verb code passes them up, wrapped or not, together with what
// it was doing when it met them.

// storeOp says what a storage error interrupted, which decides how some
// errors read.
type storeOp int

const (
	// opObject is a read or write of one object.
	opObject storeOp = iota
	// opList is a list at a revision.
	opList
	// opContinue is a list resumed from a continue token.
	opContinue
	// opWatch is a watch from a revision.
	opWatch
)

// storeFailure is a storage error with the context its Status needs.
type storeFailure struct {
	s    *scope
	name string
	op   storeOp
	// rev is the revision a list or watch asked for; rel the continue
	// token's start key.
	rev int64
	rel string
	err error
}

func (f *storeFailure) Error() string { return f.err.Error() }
func (f *storeFailure) Unwrap() error { return f.err }

// objectErr marks err as met on the object called name of s.
func objectErr(s *scope, name string, err error) error {
	if err == nil {
		return nil
	}
	return &storeFailure{s: s, name: name, op: opObject, err: err}
}

// status returns the Status of a storage failure.
func (h *Handler) status(f *storeFailure) error {
	d, err := f.s.d, f.err
	var (
		taken   *claimTaken
		corrupt *bolt.CorruptError
		list    *bolt.CorruptListError
	)
	switch {
	case errors.Is(err, bolt.ErrNotFound):
		return apierr.NotFound(d.Group, d.Resource, f.name)
	case errors.Is(err, bolt.ErrExists):
		return apierr.AlreadyExists(d.Group, d.Resource, f.name)
	case errors.Is(err, bolt.ErrConflict):
		return apierr.ConflictModified(d.Group, d.Resource, f.name)
	case errors.Is(err, bolt.ErrCompacted):
		switch f.op {
		case opContinue:
			return h.continueExpired(f.rel)
		case opWatch:
			return apierr.Expired(fmt.Sprintf("too old resource version: %d (%d)", f.rev, h.store.CompactedRevision()))
		}
		return apierr.Expired("The resourceVersion for the provided list is too old.")
	case errors.Is(err, bolt.ErrFutureRevision):
		retry := int32(tooLargeRetryCache)
		if f.op == opContinue {
			// A token's snapshot is read from storage, which does not hint.
			retry = tooLargeRetryStorage
		}
		return tooLargeResourceVersion(resourceVersion(max(f.rev, 0)), h.store.Revision(), retry)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierr.Timeout("request did not complete within requested timeout - "+err.Error(), 0)
	case errors.Is(err, bolt.ErrClosed):
		return errShuttingDown()
	case errors.As(err, &taken):
		return apierr.Conflict(d.Group, d.Resource, f.name, taken.Error())
	case errors.As(err, &corrupt):
		return h.corruptStatus(corrupt)
	case errors.As(err, &list):
		return h.corruptListStatus(f.s, list)
	}
	return h.storageInternal(f.s, f.name, err)
}

// toStatus turns any error a verb returns into the error written to the
// client: storage failures get their Status, everything else passes
// through (apierr errors are Statuses already; the rest become 500s).
func (h *Handler) toStatus(err error) error {
	var f *storeFailure
	if errors.As(err, &f) {
		return h.status(f)
	}
	var se *apierr.Error
	if !errors.As(err, &se) && engineError(err) {
		// A storage error that reached here without its context.
		if errors.Is(err, bolt.ErrClosed) {
			return errShuttingDown()
		}
		return h.storageInternal(nil, "", err)
	}
	return err
}

// errShuttingDown is the answer while the store is closed: come back in a
// second, to this server's successor.
func errShuttingDown() error { return apierr.ServiceUnavailable("apiserver is shutting down", 1) }

// internalStorageError is what a client is told of a storage failure
// that has no Status of its own: the engine's text names files, keys
// and revisions, which stay in the server log.
var internalStorageError = errors.New("the storage operation failed; the server log has the cause")

// storageInternal logs err and returns the generic 500 in its place.
func (h *Handler) storageInternal(s *scope, name string, err error) error {
	args := []any{"err", err}
	if s != nil {
		args = append(args, "resource", s.d.GroupResource(), "namespace", s.ns, "name", name)
	}
	h.log.Error("storage failure", args...)
	return apierr.InternalError(internalStorageError)
}

// engineSentinels are the storage engine's errors; an error wrapping one
// of them came from the engine. TestEngineSentinelsComplete keeps the
// list in step with bolt/errors.go.
var engineSentinels = []error{
	bolt.ErrNotFound, bolt.ErrExists, bolt.ErrConflict, bolt.ErrCompacted, bolt.ErrFutureRevision,
	bolt.ErrWatcherTooSlow, bolt.ErrClosed, bolt.ErrInvalid, bolt.ErrCorrupt, bolt.ErrChecksum, bolt.ErrLocked,
	bolt.ErrCorruptValue, bolt.ErrInvalidTxn, bolt.ErrTagMismatch, bolt.ErrIO,
}

// engineError reports whether err came from the storage engine.
func engineError(err error) bool {
	for _, s := range engineSentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	var (
		oe *bolt.OpError
		ce *bolt.CorruptError
		cl *bolt.CorruptListError
	)
	return errors.As(err, &oe) || errors.As(err, &ce) || errors.As(err, &cl)
}

// lostRace reports whether a conditional write failed because another
// writer changed or removed the object first: the caller re-reads and
// tries again.
func lostRace(err error) bool {
	return errors.Is(err, bolt.ErrConflict) || errors.Is(err, bolt.ErrNotFound)
}

package rest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"platd/server/apierr"
)

// resourceVersion is a resourceVersion a client sent, parsed once as the
// upstream parses it: an unsigned 64-bit decimal. The store counts
// revisions in int64, so a value past math.MaxInt64 is kept whole here
// instead of wrapping to a negative revision: no write can ever reach it,
// and every read that asks for it is too large.
type resourceVersion uint64

// revision returns v as a store revision; ok is false when v is beyond any
// revision the store can reach.
func (v resourceVersion) revision() (rev int64, ok bool) {
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// equals reports whether v names the store revision rev.
func (v resourceVersion) equals(rev int64) bool {
	return rev >= 0 && uint64(v) == uint64(rev)
}

// parseUintVersion is the upstream parse: "" and "0" are 0, anything else
// must be a uint64 in decimal (no sign, no spaces; leading zeros pass).
func parseUintVersion(rv string) (resourceVersion, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	return resourceVersion(n), err
}

// parseResourceVersion reads the resourceVersion parameter of a read the
// upstream serves from storage: a bad value is a 400.
func parseResourceVersion(rv string) (resourceVersion, error) {
	n, err := parseUintVersion(rv)
	if err != nil {
		return 0, apierr.BadRequest(fmt.Sprintf("invalid resource version: resourceVersion: Invalid value: %q: %v", rv, err))
	}
	return n, nil
}

// parseResourceVersionCached reads the resourceVersion parameter of a read
// the upstream serves from its watch cache, which returns the parse error
// unwrapped: a 500 without reason.
func parseResourceVersionCached(rv string) (resourceVersion, error) {
	n, err := parseUintVersion(rv)
	if err != nil {
		return 0, fmt.Errorf("resourceVersion: Invalid value: %q: %v", rv, err)
	}
	return n, nil
}

// checkWriteVersion checks the metadata.resourceVersion of an object sent
// to update, patch, apply or scale against the stored revision. "" asks
// for nothing. A value that is not a uint64 fails as upstream's storage
// fails on it: the parse error unwrapped, a 500 without reason. Any other
// mismatch, values past every revision included, is the 409 of a stale
// write.
func checkWriteVersion(s *scope, text string, stored int64) error {
	if text == "" {
		return nil
	}
	v, err := parseUintVersion(text)
	if err != nil {
		return errors.New(err.Error())
	}
	if !v.equals(stored) {
		return apierr.ConflictModified(s.d.Group, s.d.Resource, s.name)
	}
	return nil
}

// waitForRevision waits until the store has reached rv, or answers the
// upstream 504 "Too large resource version" after tooLargeWait, as the
// upstream watch cache does. A version no revision can reach is waited
// out all the same: upstream blocks for it too before answering.
func (h *Handler) waitForRevision(ctx context.Context, rv resourceVersion) error {
	rev, ok := rv.revision()
	if ok && rev <= h.store.Revision() {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, h.tooLargeWait)
	defer cancel()
	if ok {
		if err := h.store.WaitForRevision(wctx, rev); err == nil {
			return nil
		}
	} else {
		<-wctx.Done()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return tooLargeResourceVersion(rv, h.store.Revision(), tooLargeRetryCache)
}

// Retry hints of the 504 "Too large resource version". The watch cache
// waits, then asks the client to come back after a second. Storage reads
// of the current state (NotOlderThan paged lists, and any version past
// every int64 revision) check once, without a wait, and give no hint.
// Storage reads pinned at a revision not reached yet (exact and legacy
// paged lists) got etcd's "required revision is a future revision" as a
// 500 in v1.32; upstream later answers them as too large with a hint of
// a second. platd does that, after the watch cache's wait, since no
// engine text may reach a client.
const (
	tooLargeRetryCache   = 1
	tooLargeRetryStorage = 0
)

// tooLargeResourceVersion is the upstream 504 for a read newer than the
// store. The requested version is printed as the uint64 it was parsed as.
func tooLargeResourceVersion(rv resourceVersion, current int64, retryAfter int32) error {
	return apierr.Timeout(fmt.Sprintf("Too large resource version: %d, current: %d", uint64(rv), current), retryAfter,
		apierr.Cause{Type: "ResourceVersionTooLarge", Message: "Too large resource version"})
}

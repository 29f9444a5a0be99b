package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// maxAllocateAttempts bounds how often a write is prepared again because a
// value it was allocated was claimed by a concurrent write meanwhile. Each
// attempt sees the values taken before it, so only a range about to run
// full under many racing writers exhausts it.
const maxAllocateAttempts = 16

// claimTaken says a value the write claims is held by another object. A
// type that allocates prepares the request again, allocation then seeing
// the claim; for any other type it is a Conflict.
type claimTaken struct{ claim registry.Claim }

func (e *claimTaken) Error() string {
	return fmt.Sprintf("%s %s is held by another object", e.claim.Pool, e.claim.Value)
}

// heldElsewhere reports whether a write failed because another object
// holds a value it claims (errors.go words that as a Conflict).
func heldElsewhere(err error) bool {
	var taken *claimTaken
	return errors.As(err, &taken)
}

// freeFor is the membership test Allocate gets: a value is free when no
// object claims it, or when old (the object being changed) does.
func (h *Handler) freeFor(d *registry.Descriptor, old Object) func(registry.Claim) bool {
	var mine []registry.Claim
	if old != nil && d.Strategy.Claims != nil {
		mine = d.Strategy.Claims(old)
	}
	return func(c registry.Claim) bool {
		if slices.Contains(mine, c) {
			return true
		}
		_, err := h.store.Get(registry.ClaimKey(c))
		return errors.Is(err, bolt.ErrNotFound)
	}
}

// allocate runs the type's Allocate hook on obj, given old (nil on
// create).
func (h *Handler) allocate(d *registry.Descriptor, obj, old Object) error {
	if d.Strategy.Allocate == nil {
		return nil
	}
	errs, err := d.Strategy.Allocate(obj, old, h.freeFor(d, old))
	if err != nil {
		// A plain error is a 500 with its own text, as upstream answers
		// an allocator's plain error (a health check port taken).
		return apierr.FromError(err)
	}
	if len(errs) > 0 {
		return apierr.NewInvalid(d.Group, d.Kind, metaString(obj, "name"), errs)
	}
	return nil
}

// claimRecord is the value stored under a claim's key: the key of the
// object holding it (and the resourceVersion every stored value carries).
func claimRecord(owner string) []byte {
	q, _ := json.Marshal(owner)
	return []byte(`{"owner":` + string(q) + `,"resourceVersion":""}`)
}

// claimOps returns the ops that move the claims of the object at key from
// old to obj; either may be nil (create, removal).
func (h *Handler) claimOps(d *registry.Descriptor, key string, obj, old Object) []bolt.Op {
	if d.Strategy.Claims == nil {
		return nil
	}
	var have, want []registry.Claim
	if old != nil {
		have = d.Strategy.Claims(old)
	}
	if obj != nil {
		want = d.Strategy.Claims(obj)
	}
	var ops []bolt.Op
	for _, c := range want {
		ck := registry.ClaimKey(c)
		if !slices.Contains(have, c) && !slices.ContainsFunc(ops, func(o bolt.Op) bool { return o.Key == ck }) {
			ops = append(ops, bolt.CreateOp(ck, claimRecord(key)))
		}
	}
	for _, c := range have {
		ck := registry.ClaimKey(c)
		if slices.Contains(want, c) || slices.ContainsFunc(ops, func(o bolt.Op) bool { return o.Key == ck }) {
			continue
		}
		// Only this object's writes, which are serialized by its
		// revision, remove its claims; a record already gone (written
		// before claims were recorded) has nothing to release.
		if _, err := h.store.Get(ck); err == nil {
			ops = append(ops, bolt.DeleteOp(ck, 0))
		}
	}
	return ops
}

// txn applies the object's op with the claim and quota ops and returns
// the object's result. A claim held by another object is a *claimTaken, a
// quota changed meanwhile errQuotaChanged; the object's own failure is
// returned as Create, Update or Delete would.
func (h *Handler) txn(ctx context.Context, op bolt.Op, claims []bolt.Op) (bolt.KV, error) {
	kvs, err := h.store.Txn(ctx, append([]bolt.Op{op}, claims...))
	if err != nil {
		if qerr := h.quotaChanged(err); errors.Is(qerr, errQuotaChanged) {
			return bolt.KV{}, qerr
		}
		var oe *bolt.OpError
		if errors.As(err, &oe) {
			if oe.Index > 0 && errors.Is(oe.Err, bolt.ErrExists) {
				c, _ := registry.ClaimOfKey(oe.Key)
				return bolt.KV{}, &claimTaken{claim: c}
			}
			if oe.Index == 0 {
				return bolt.KV{}, oe.Err
			}
		}
		return bolt.KV{}, fmt.Errorf("writing %s with its claims: %w", op.Key, err)
	}
	return kvs[0], nil
}

// storeCreate stores a new object and its claims, and the new usage of
// the quotas it is charged to (quotaOps).
func (h *Handler) storeCreate(ctx context.Context, d *registry.Descriptor, key string, obj Object, enc []byte, quotaOps []bolt.Op) (bolt.KV, error) {
	if claims := append(h.claimOps(d, key, obj, nil), quotaOps...); len(claims) > 0 {
		return settled(ctx, d)(h.txn(ctx, bolt.CreateOp(key, enc), claims))
	}
	return settled(ctx, d)(h.store.Create(ctx, key, enc))
}

// settled returns a pass-through for a storage write's result that first
// lets the type's Settle hook see a successful write take effect.
func settled(ctx context.Context, d *registry.Descriptor) func(bolt.KV, error) (bolt.KV, error) {
	return func(kv bolt.KV, err error) (bolt.KV, error) {
		if err == nil && d.Strategy.Settle != nil {
			d.Strategy.Settle(ctx, kv.ModRevision)
		}
		return kv, err
	}
}

// storeUpdate replaces the object at key (at revision rev), moves its
// claims from old to next and records the new usage of the quotas the
// change is charged to (quotaOps).
func (h *Handler) storeUpdate(ctx context.Context, d *registry.Descriptor, key string, rev int64, next, old Object, enc []byte, quotaOps []bolt.Op) (bolt.KV, error) {
	if claims := append(h.claimOps(d, key, next, old), quotaOps...); len(claims) > 0 {
		return settled(ctx, d)(h.txn(ctx, bolt.UpdateOp(key, rev, enc), claims))
	}
	return settled(ctx, d)(h.store.Update(ctx, key, rev, enc))
}

// storeDelete removes the object at key (at revision rev), releases its
// claims and removes its same-name dependents; old is its stored state.
func (h *Handler) storeDelete(ctx context.Context, d *registry.Descriptor, key string, rev int64, old Object) (bolt.KV, error) {
	more := append(h.claimOps(d, key, nil, old), h.dependentOps(d, key)...)
	if len(more) > 0 {
		return settled(ctx, d)(h.txn(ctx, bolt.DeleteOp(key, rev), more))
	}
	return settled(ctx, d)(h.store.Delete(ctx, key, rev))
}

// dependentOps deletes, at their current revisions, the same-name
// dependents of the object at key that no finalizer keeps.
func (h *Handler) dependentOps(d *registry.Descriptor, key string) []bolt.Op {
	if len(d.SameNameDependents) == 0 {
		return nil
	}
	ns, name, ok := d.SplitKey(key)
	if !ok {
		return nil
	}
	var ops []bolt.Op
	for _, dep := range d.SameNameDependents {
		dk := dep.Key(ns, name)
		kv, err := h.store.Get(dk)
		if err != nil {
			continue
		}
		obj, err := decodeStored(dep, kv.Value)
		if err != nil || len(finalizers(obj)) > 0 {
			continue
		}
		ops = append(ops, bolt.DeleteOp(dk, kv.ModRevision))
	}
	return ops
}

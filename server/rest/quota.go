package rest

import (
	"errors"
	"strings"

	"platd/bolt"
	"platd/config"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
)

// maxQuotaAttempts bounds how often a write charged to quotas is tried
// again because a quota changed between reading it and the write. Each
// lost attempt means another write charged or refreshed that quota and
// succeeded, so n writers racing for one quota all finish within n
// attempts; the bound only stops a livelock.
const maxQuotaAttempts = 64

// errQuotaChanged says a quota a write was charged to changed (or went)
// before the write: it is checked again against the quota's new state.
var errQuotaChanged = errors.New("quota changed meanwhile")

// chargeQuotas checks a write of obj (old is the stored state on an
// update, nil on a create) against the ResourceQuotas of its namespace, as
// upstream's ResourceQuota admission, and returns the ops that record the
// new usage of the quotas it is charged to, each expecting its quota at
// the revision read. A refusal is a 403 naming the object. Writes of
// subresources and of cluster-scoped objects cost nothing; a namespace
// without quotas costs one read of an empty prefix. The caller charges
// only the updates the type's evaluator charges.
func (h *Handler) chargeQuotas(s *scope, obj, old Object) ([]bolt.Op, error) {
	qd := h.reg.Quotas()
	d := s.d
	if qd == nil || !admitted(s) || !d.Namespaced || !h.admission.Enabled(config.PluginResourceQuota) {
		return nil, nil
	}
	ev := quota.For(d)
	ns := metaString(obj, "namespace")
	res, err := h.store.List(qd.Prefix(ns), bolt.ListOptions{})
	if err != nil || len(res.Items) == 0 {
		return nil, err
	}
	quotas := make([]quota.Quota, 0, len(res.Items))
	for _, kv := range res.Items {
		q, err := decodeStored(qd, kv.Value)
		if err != nil {
			return nil, apierr.InternalError(err)
		}
		quotas = append(quotas, quota.Read(q))
	}
	changed, err := quota.Charge(ev, quotas, obj, old, h.now())
	if err != nil {
		return nil, admissionErr(d, metaString(obj, "name"), &registry.Denial{Reason: err.Error()})
	}
	var ops []bolt.Op
	for i, kv := range res.Items {
		used, ok := changed[i]
		if !ok {
			continue
		}
		q := deepCopyObject(quotas[i].Object)
		status, _ := q["status"].(map[string]any)
		if status == nil {
			status = map[string]any{}
			q["status"] = status
		}
		status["used"] = used.Object()
		// The charge is the server's own status write: its ownership is
		// recorded as upstream's loopback status update records it.
		h.track(&scope{d: qd, sub: "status", manager: h.brand.FieldManager}, quotas[i].Object, q)
		enc, err := encodeStored(qd, q)
		if err != nil {
			return nil, err
		}
		ops = append(ops, bolt.UpdateOp(kv.Key, kv.ModRevision, enc))
	}
	return ops, nil
}

// charged runs write, a storage write of obj given the quota ops to
// commit with it, charging the write to its namespace's quotas in the
// same transaction: a write that fails charges nothing, and a quota
// changed meanwhile is read again and the write tried again. A dry run
// is checked and writes nothing: write is nil.
func (h *Handler) charged(s *scope, obj, old Object, write func(quotaOps []bolt.Op) (bolt.KV, error)) (bolt.KV, error) {
	for attempt := 1; ; attempt++ {
		ops, err := h.chargeQuotas(s, obj, old)
		if err != nil || write == nil {
			return bolt.KV{}, err
		}
		kv, err := write(ops)
		if !errors.Is(err, errQuotaChanged) {
			return kv, err
		}
		if attempt == maxQuotaAttempts {
			qd := h.reg.Quotas()
			var oe *bolt.OpError
			name := ""
			if errors.As(err, &oe) {
				_, name, _ = qd.SplitKey(oe.Key)
			}
			return bolt.KV{}, apierr.ConflictModified(qd.Group, qd.Resource, name)
		}
	}
}

// quotaChanged returns errQuotaChanged (joined with the op's failure)
// when a transaction failed because a quota it charged changed or went
// meanwhile; other failures are returned as they are.
func (h *Handler) quotaChanged(err error) error {
	var oe *bolt.OpError
	qd := h.reg.Quotas()
	if qd == nil || !errors.As(err, &oe) || oe.Index == 0 || !strings.HasPrefix(oe.Key, qd.ResourcePrefix()) {
		return err
	}
	if errors.Is(oe.Err, bolt.ErrConflict) || errors.Is(oe.Err, bolt.ErrNotFound) {
		return errors.Join(errQuotaChanged, oe)
	}
	return err
}

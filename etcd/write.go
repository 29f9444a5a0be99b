package etcd

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// Create implements bolt.Store.
func (db *DB) Create(ctx context.Context, key string, value []byte) (bolt.KV, error) {
	return db.one(ctx, bolt.CreateOp(key, value))
}

// Update implements bolt.Store.
func (db *DB) Update(ctx context.Context, key string, expectedRevision int64, value []byte) (bolt.KV, error) {
	return db.one(ctx, bolt.UpdateOp(key, expectedRevision, value))
}

// Delete implements bolt.Store.
func (db *DB) Delete(ctx context.Context, key string, expectedRevision int64) (bolt.KV, error) {
	return db.one(ctx, bolt.DeleteOp(key, expectedRevision))
}

// one is a single write: a transaction of one op whose error is the op's.
func (db *DB) one(ctx context.Context, op bolt.Op) (bolt.KV, error) {
	if err := checkKey(op.Key); err != nil {
		return bolt.KV{}, err
	}
	kvs, err := db.commit(ctx, []bolt.Op{op})
	if oe := (*bolt.OpError)(nil); errors.As(err, &oe) {
		return bolt.KV{}, oe.Err
	}
	if err != nil {
		return bolt.KV{}, err
	}
	return kvs[0], nil
}

// Txn implements bolt.Store as one etcd transaction. etcd gives every op of
// a transaction the same revision: op i's ModRevision is the first's, not
// first+i (the contract allows either).
func (db *DB) Txn(ctx context.Context, ops []bolt.Op) ([]bolt.KV, error) {
	if err := checkTxn(ops); err != nil {
		return nil, err
	}
	return db.commit(ctx, ops)
}

func checkTxn(ops []bolt.Op) error {
	if len(ops) == 0 {
		return fmt.Errorf("%w: no ops", bolt.ErrInvalidTxn)
	}
	if len(ops) > bolt.MaxTxnOps {
		return fmt.Errorf("%w: %d ops, at most %d", bolt.ErrInvalidTxn, len(ops), bolt.MaxTxnOps)
	}
	for i := range ops {
		w := &ops[i]
		fail := func(err error) error { return &bolt.OpError{Index: i, Key: w.Key, Err: err} }
		if err := checkKey(w.Key); err != nil {
			return fail(err)
		}
		switch w.Kind {
		case bolt.OpCreate:
			if w.ExpectedRevision != 0 {
				return fail(fmt.Errorf("%w: create of %s with expected revision %d", bolt.ErrInvalidTxn, w.Key, w.ExpectedRevision))
			}
		case bolt.OpUpdate, bolt.OpDelete:
		default:
			return fail(fmt.Errorf("%w: %v", bolt.ErrInvalidTxn, w.Kind))
		}
		for j := range i {
			if ops[j].Key == w.Key {
				return fail(fmt.Errorf("%w: key %s is also op %d", bolt.ErrInvalidTxn, w.Key, j))
			}
		}
	}
	return nil
}

// commit writes ops as one etcd transaction: every precondition in If,
// every write in Then, and a Get of every key in Else to tell which
// precondition failed and why. It returns once the mirror has applied the
// transaction, so a read on this replica after it sees it.
func (db *DB) commit(ctx context.Context, ops []bolt.Op) ([]bolt.KV, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if db.ctx.Err() != nil {
		return nil, bolt.ErrClosed
	}
	cmps := make([]clientv3.Cmp, len(ops))
	thens := make([]clientv3.Op, len(ops))
	elses := make([]clientv3.Op, len(ops))
	for i := range ops {
		o := &ops[i]
		k := db.prefix + o.Key
		switch {
		case o.Kind == bolt.OpCreate:
			cmps[i] = clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
		case o.ExpectedRevision == 0:
			cmps[i] = clientv3.Compare(clientv3.CreateRevision(k), ">", 0)
		default:
			cmps[i] = clientv3.Compare(clientv3.ModRevision(k), "=", o.ExpectedRevision)
		}
		if o.Kind == bolt.OpDelete {
			if err := db.deletable(o); err != nil {
				return nil, &bolt.OpError{Index: i, Key: o.Key, Err: err}
			}
			thens[i] = clientv3.OpDelete(k, clientv3.WithPrevKV())
		} else {
			// etcd keeps the value stamped with 0, whatever revision the
			// caller's bytes carried: like upstream, it holds no revision
			// of its own (reads stamp the mod revision). Stamping now also
			// refuses a value the stamper refuses before it is written.
			stored, err := db.opts.Stamp(o.Value, 0)
			if err != nil {
				return nil, &bolt.OpError{Index: i, Key: o.Key, Err: err}
			}
			if t := db.opts.Transformer; t != nil {
				s, err := t.ToStorage(o.Key, stored)
				if err != nil {
					return nil, &bolt.OpError{Index: i, Key: o.Key, Err: fmt.Errorf("%w: transform %s: %v", bolt.ErrIO, o.Key, err)}
				}
				stored = s
			}
			thens[i] = clientv3.OpPut(k, string(stored), clientv3.WithPrevKV())
		}
		elses[i] = clientv3.OpGet(k, clientv3.WithKeysOnly())
	}
	if hasStandIn(ops) {
		defer db.holdStandIns(ops)()
	}
	// The write is picked up: from here it completes or fails with
	// ErrIO (its outcome unknown), whatever ctx does, since etcd may
	// apply a txn whose request the client gave up on.
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), db.writeTimeout)
	defer tcancel()
	resp, err := db.cli.Txn(tctx).If(cmps...).Then(thens...).Else(elses...).Commit()
	if err != nil {
		if db.ctx.Err() != nil {
			return nil, bolt.ErrClosed
		}
		return nil, fmt.Errorf("%w: etcd txn (it may or may not be applied): %v", bolt.ErrIO, err)
	}
	if !resp.Succeeded {
		return nil, failedOp(ops, resp)
	}
	rev := resp.Header.Revision
	kvs := make([]bolt.KV, len(ops))
	for i := range ops {
		o := &ops[i]
		kv := bolt.KV{Key: o.Key, CreateRevision: rev, ModRevision: rev}
		r := resp.Responses[i]
		if o.Kind == bolt.OpDelete {
			if d := r.GetResponseDeleteRange(); d != nil && len(d.PrevKvs) == 1 {
				p := d.PrevKvs[0]
				kv.CreateRevision = p.CreateRevision
				val, cerr := db.plain(o.Key, p.Value, p.ModRevision)
				if cerr != nil {
					val = o.Value
				}
				kv.Value, _ = db.opts.Stamp(val, rev)
			}
		} else {
			if p := r.GetResponsePut(); p != nil && p.PrevKv != nil {
				kv.CreateRevision = p.PrevKv.CreateRevision
			}
			kv.Value, err = db.opts.Stamp(o.Value, rev)
			if err != nil {
				return nil, err
			}
		}
		kvs[i] = kv
	}
	// Once written, the write completes whatever ctx does; the wait is
	// bounded so that an etcd gone right after the commit cannot hang it.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), db.readTimeout)
	defer cancel()
	if err := db.waitApplied(wctx, rev); err != nil {
		return nil, err
	}
	return kvs, nil
}

// deletable refuses the delete of a corrupt value without a stand-in, as
// bolt does: watchers would have no deleted state to show.
func (db *DB) deletable(o *bolt.Op) error {
	db.mu.RLock()
	bad := db.corrupt[o.Key]
	db.mu.RUnlock()
	if bad != nil && o.Value == nil {
		return bad
	}
	return nil
}

// holdStandIns records the stand-ins of ops deleting corrupt values for
// the mirror (DB.standIns); the returned func forgets them.
func (db *DB) holdStandIns(ops []bolt.Op) func() {
	var held []string
	db.mu.Lock()
	for i := range ops {
		o := &ops[i]
		if o.Kind == bolt.OpDelete && o.Value != nil && db.corrupt[o.Key] != nil {
			db.standIns[o.Key] = o.Value
			held = append(held, o.Key)
		}
	}
	db.mu.Unlock()
	return func() {
		if len(held) == 0 {
			return
		}
		db.mu.Lock()
		for _, k := range held {
			delete(db.standIns, k)
		}
		db.mu.Unlock()
	}
}

// hasStandIn: some op is a delete carrying a stand-in value.
func hasStandIn(ops []bolt.Op) bool {
	for i := range ops {
		if ops[i].Kind == bolt.OpDelete && ops[i].Value != nil {
			return true
		}
	}
	return false
}

// failedOp names the first op whose precondition failed, from the Gets of
// the transaction's Else branch.
func failedOp(ops []bolt.Op, resp *clientv3.TxnResponse) error {
	for i := range ops {
		o := &ops[i]
		g := resp.Responses[i].GetResponseRange()
		var exists bool
		var mod int64
		if g != nil && len(g.Kvs) == 1 {
			exists, mod = true, g.Kvs[0].ModRevision
		}
		var err error
		switch {
		case o.Kind == bolt.OpCreate && exists:
			err = fmt.Errorf("%w: %s", bolt.ErrExists, o.Key)
		case o.Kind != bolt.OpCreate && !exists:
			err = fmt.Errorf("%w: %s", bolt.ErrNotFound, o.Key)
		case o.Kind != bolt.OpCreate && o.ExpectedRevision != 0 && mod != o.ExpectedRevision:
			err = fmt.Errorf("%w: %s is at %d, expected %d", bolt.ErrConflict, o.Key, mod, o.ExpectedRevision)
		}
		if err != nil {
			return &bolt.OpError{Index: i, Key: o.Key, Err: err}
		}
	}
	return fmt.Errorf("%w: etcd refused a transaction whose preconditions hold", bolt.ErrConflict)
}

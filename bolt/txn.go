package bolt

import (
	"context"
	"fmt"
)

// MaxTxnOps caps the ops of one Txn. A transaction is applied by the single
// committer and published to every watcher at once, so its size bounds how
// long it holds both. It is etcd's default limit for the same thing, so a
// transaction accepted here stays valid on an etcd-backed Store.
const MaxTxnOps = 128

// OpKind says what an Op does. The zero value is no kind, so an Op built
// without one is refused rather than taken for a create.
type OpKind uint8

const (
	// OpCreate stores Value under a new key, as Create.
	OpCreate OpKind = iota + 1
	// OpUpdate replaces the value of an existing key, as Update.
	OpUpdate
	// OpDelete removes a key, as Delete.
	OpDelete
)

func (k OpKind) String() string {
	switch k {
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Op is one write of a Txn. The store reads Key and Value only until Txn
// returns and never modifies Value.
type Op struct {
	Kind OpKind
	Key  string
	// Value is the object to store. OpDelete uses it only when the key's
	// stored value is corrupt (see CorruptError): it then stands in for
	// that value as the deleted state that watchers and the history see;
	// without it such a delete fails with the CorruptError.
	Value []byte
	// ExpectedRevision is, for OpUpdate and OpDelete, the ModRevision the
	// key must have (0: any). It must be 0 for OpCreate, which has no
	// revision to compare.
	ExpectedRevision int64
}

// CreateOp is the Op of Create(ctx, key, value).
func CreateOp(key string, value []byte) Op {
	return Op{Kind: OpCreate, Key: key, Value: value}
}

// UpdateOp is the Op of Update(ctx, key, expectedRevision, value).
func UpdateOp(key string, expectedRevision int64, value []byte) Op {
	return Op{Kind: OpUpdate, Key: key, Value: value, ExpectedRevision: expectedRevision}
}

// DeleteOp is the Op of Delete(ctx, key, expectedRevision).
func DeleteOp(key string, expectedRevision int64) Op {
	return Op{Kind: OpDelete, Key: key, ExpectedRevision: expectedRevision}
}

// Txn implements Store. The ops share the group commit with every other
// write: they are checked and applied as one unit inside a batch, so a
// transaction costs no more fsyncs than a single write.
func (db *DB) Txn(ctx context.Context, ops []Op) ([]KV, error) {
	if err := checkTxn(ops); err != nil {
		return nil, err
	}
	o := &op{writes: ops, txn: true, kvs: make([]KV, len(ops))}
	if err := db.submit(ctx, o); err != nil {
		return nil, err
	}
	return o.kvs, nil
}

// checkTxn refuses what no state of the store could make valid, before the
// transaction is queued.
func checkTxn(ops []Op) error {
	if len(ops) == 0 {
		return fmt.Errorf("%w: no ops", ErrInvalidTxn)
	}
	if len(ops) > MaxTxnOps {
		return fmt.Errorf("%w: %d ops, at most %d", ErrInvalidTxn, len(ops), MaxTxnOps)
	}
	for i := range ops {
		w := &ops[i]
		fail := func(err error) error { return &OpError{Index: i, Key: w.Key, Err: err} }
		if err := checkOp(w); err != nil {
			return fail(err)
		}
		// A quadratic scan: MaxTxnOps keeps it small, and the common
		// transaction of two or three ops needs no map.
		for j := range i {
			if ops[j].Key == w.Key {
				return fail(fmt.Errorf("%w: key %s is also op %d", ErrInvalidTxn, w.Key, j))
			}
		}
	}
	return nil
}

// checkOp validates one op on its own.
func checkOp(w *Op) error {
	if err := checkKey(w.Key); err != nil {
		return err
	}
	switch w.Kind {
	case OpCreate:
		if w.ExpectedRevision != 0 {
			return fmt.Errorf("%w: create of %s with expected revision %d", ErrInvalidTxn, w.Key, w.ExpectedRevision)
		}
	case OpUpdate, OpDelete:
	default:
		return fmt.Errorf("%w: %v", ErrInvalidTxn, w.Kind)
	}
	return nil
}

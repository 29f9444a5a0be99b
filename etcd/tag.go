package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// tagSuffix, after the prefix, is the key that records Options.Tag
// ("/registry.tag"). It sorts outside the prefix's keys ("/registry/" up
// to "/registry0"), so the mirror, lists, counts and watches never meet
// it and need not skip it, while `etcdctl get --prefix /registry` shows
// it and `etcdctl del --prefix /registry` removes it with the objects.
const tagSuffix = ".tag"

func (db *DB) tagKey() string { return db.prefix + tagSuffix }

// TagKey is the etcd key that records the tag of prefix, for people who
// remove a prefix's keys by hand.
func TagKey(prefix string) string { return trimSlash(prefix) + tagSuffix }

// checkTag compares Options.Tag with the prefix's at Open, before the
// load: a prefix recorded with another tag is refused with a
// *bolt.TagError, one holding no object records the tag, and one with
// objects but no tag is left for RecordTag.
func (db *DB) checkTag(ctx context.Context) error {
	if db.opts.Tag == "" {
		return nil
	}
	k := db.tagKey()
	resp, err := db.cli.Get(ctx, k)
	if err != nil {
		return fmt.Errorf("etcd: read %s: %w", k, err)
	}
	if len(resp.Kvs) == 1 {
		return db.sameTag(string(resp.Kvs[0].Value))
	}
	// Two keys at most: the compaction key and one object.
	objs, err := db.cli.Get(ctx, db.prefix+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(2))
	if err != nil {
		return fmt.Errorf("etcd: list %s: %w", db.prefix, err)
	}
	for _, kv := range objs.Kvs {
		if string(kv.Key) != db.prefix+compactKey {
			return nil
		}
	}
	return db.recordTag(ctx)
}

func (db *DB) sameTag(recorded string) error {
	if recorded != db.opts.Tag {
		return &bolt.TagError{Recorded: recorded, Wanted: db.opts.Tag}
	}
	return nil
}

// recordTag writes Options.Tag unless a tag is recorded already, in one
// transaction: of two replicas starting together with different tags,
// the second is refused.
func (db *DB) recordTag(ctx context.Context) error {
	k := db.tagKey()
	resp, err := db.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, db.opts.Tag)).
		Else(clientv3.OpGet(k)).Commit()
	if err != nil {
		return fmt.Errorf("etcd: record %s: %w", k, err)
	}
	if resp.Succeeded {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) != 1 {
		return fmt.Errorf("etcd: record %s: deleted while being written", k)
	}
	return db.sameTag(string(kvs[0].Value))
}

// Untagged reports that Options.Tag was given but the prefix, written
// before tags were recorded, holds objects and no tag: the caller checks
// that they fit and records the tag with RecordTag. It asks etcd; when
// etcd does not answer it reports true, so that RecordTag reports the
// error.
func (db *DB) Untagged() bool {
	if db.opts.Tag == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(db.ctx, db.readTimeout)
	defer cancel()
	resp, err := db.cli.Get(ctx, db.tagKey(), clientv3.WithCountOnly())
	return err != nil || resp.Count == 0
}

// RecordTag records Options.Tag under the prefix (see Untagged). A tag
// recorded meanwhile by another replica is kept, and refused with a
// *bolt.TagError if it differs.
func (db *DB) RecordTag() error {
	if db.opts.Tag == "" {
		return fmt.Errorf("%w: no Options.Tag to record", bolt.ErrInvalid)
	}
	ctx, cancel := context.WithTimeout(db.ctx, db.readTimeout)
	defer cancel()
	return db.recordTag(ctx)
}

// Erase deletes every key of the prefix in one transaction: the objects,
// the compaction key and the tag, leaving nothing of platd's. It is for
// a migration that failed into a prefix it found empty; no other platd
// may use the prefix, and the DB must be closed afterwards, since its
// state is then that of a prefix nobody loaded.
func (db *DB) Erase(ctx context.Context) error {
	_, err := db.cli.Txn(ctx).Then(
		clientv3.OpDelete(db.prefix+"/", clientv3.WithPrefix()),
		clientv3.OpDelete(db.tagKey()),
	).Commit()
	if err != nil {
		return fmt.Errorf("%w: erase %s: %v", bolt.ErrIO, db.prefix, err)
	}
	return nil
}

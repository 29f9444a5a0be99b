// Package bolt is platd's storage engine: one bbolt file holding every
// object, the global revision counter and the watch history, with the whole
// current state mirrored in memory so reads never touch the file.
package bolt

import (
	"context"
	"log/slog"
	"time"
)

// KV is one stored object. Value is the exact byte form that is served; it is
// owned by the store and must not be modified by the caller.
type KV struct {
	Key string
	// Value is the object bytes with its revision already stamped in.
	Value []byte
	// CreateRevision is the revision at which the key was created.
	CreateRevision int64
	// ModRevision is the revision of the key's last write.
	ModRevision int64
}

// EventType says what happened to a key.
type EventType int

const (
	// Put is a create or update. Prev is nil for a create.
	Put EventType = iota
	// Delete removes the key. KV.Value holds the last stored bytes,
	// restamped with the deletion's revision; Prev holds them as stored.
	Delete
)

// Event is one committed change, as replayed to watchers.
type Event struct {
	Type     EventType
	Revision int64
	KV       KV
	// Prev is the state before the change; nil for a create.
	Prev *KV
}

// ListOptions selects a page of a key range.
type ListOptions struct {
	// Revision is the snapshot to read; 0 means the current revision. A
	// revision inside a transaction (see Store.Txn) is read as the
	// transaction's last one, since no state between its ops ever existed;
	// ListResult.Revision reports it.
	Revision int64
	// StartKey is the first key to return (inclusive); "" starts at the prefix.
	StartKey string
	// Limit caps the number of items; 0 means no limit.
	Limit int
	// Filter, when set, keeps only the KVs for which it returns true. Filtered
	// KVs do not count against Limit. It must not retain kv.Value.
	Filter func(kv *KV) bool
	// ReportCorrupt fails the list with a *CorruptListError when the range
	// holds keys whose stored values could not be read (see CorruptError).
	// Without it such keys are left out, so in-process readers (controllers,
	// indexes over everything) keep working; API lists set it, so clients
	// learn which objects are unreadable.
	ReportCorrupt bool
}

// ListResult is one page of a list.
type ListResult struct {
	// Items are in key order. Their Values are shared with the store.
	Items []KV
	// Revision is the snapshot the page was read at.
	Revision int64
	// More reports whether keys after the last item exist in the range
	// (before filtering is applied to them).
	More bool
	// Remaining is the number of keys after the last returned item, counted
	// without the filter. It is meaningful only when More is true.
	Remaining int64
}

// Stamper writes a revision into an object's bytes. The server supplies it,
// so the engine never parses objects.
type Stamper func(value []byte, rev int64) ([]byte, error)

// Store is the storage interface the server is written against. Any backend
// that passes the conformance suite in bolt/storetest satisfies it.
//
// Keys are slash-separated paths such as "/configmaps/default/cm1"; a prefix
// passed to List or Watch must end in "/". All methods are safe for
// concurrent use.
type Store interface {
	// Get returns the current state of key, or ErrNotFound, or a
	// *CorruptError for a key whose stored value could not be read.
	Get(key string) (KV, error)
	// List returns keys under prefix in key order at opts.Revision.
	// A revision older than the retained history is ErrCompacted; one newer
	// than the current revision is ErrFutureRevision. Keys whose stored
	// values could not be read are left out, or fail the list (see
	// ListOptions.ReportCorrupt).
	List(prefix string, opts ListOptions) (ListResult, error)
	// Count returns the number of keys under prefix at the current revision.
	Count(prefix string) int64

	// Create stores value under a new key. ErrExists if the key is present.
	// The returned KV is the stored, stamped state. It returns only after
	// the write is durable. For Create, Update and Delete alike: a ctx that
	// ends before the engine picks the write up returns ctx.Err() and
	// writes nothing; once picked up, the write completes. A failed
	// precondition consumes no revision.
	Create(ctx context.Context, key string, value []byte) (KV, error)
	// Update replaces the value of key if its ModRevision equals
	// expectedRevision (0: unconditional). ErrNotFound if absent,
	// ErrConflict if the revision differs.
	Update(ctx context.Context, key string, expectedRevision int64, value []byte) (KV, error)
	// Delete removes key if its ModRevision equals expectedRevision
	// (0: unconditional) and returns the removed state restamped with the
	// deletion revision.
	Delete(ctx context.Context, key string, expectedRevision int64) (KV, error)
	// Txn applies ops as one atomic write. Each op's precondition is
	// checked, in order, against the state left by the ops before it; if
	// one fails nothing is applied, no revision is consumed, and the error
	// is an *OpError naming that op and wrapping what Create, Update or
	// Delete would return (ErrExists, ErrNotFound, ErrConflict). Otherwise
	// the ops' revisions are equal or ascending: op i gets first+i (bolt)
	// or first (etcd, which gives a whole transaction one revision); a
	// list at a revision inside a transaction reads its last. Revisions
	// need not be consecutive between writes either: another writer of a
	// shared etcd takes some. The results are in op order as those
	// methods return them, and all ops are published at once: no Get,
	// List, Count, Revision or watcher sees some of them without the
	// others. No ops, a key used twice or more than MaxTxnOps ops is
	// ErrInvalidTxn. ctx and durability are as for Create.
	Txn(ctx context.Context, ops []Op) ([]KV, error)

	// Watch streams every event under prefix with a revision greater than
	// fromRevision, in order, until ctx ends or the watcher falls too far
	// behind (the channel is then closed and Err reports ErrWatcherTooSlow).
	// fromRevision older than the retained history is ErrCompacted.
	// fromRevision 0 starts after the current revision. The events of a
	// transaction arrive consecutively; a watch from a revision inside one
	// (a resume) replays the rest of it.
	Watch(ctx context.Context, prefix string, fromRevision int64) (Watcher, error)

	// Revision is the revision of the last committed write.
	Revision() int64
	// CompactedRevision is the newest revision no longer replayable: watches
	// and lists must start above it, that is a list at revision r or a watch
	// from r (which replays r+1 onwards) needs r >= CompactedRevision.
	CompactedRevision() int64
	// WaitForRevision blocks until Revision() >= rev or ctx ends.
	WaitForRevision(ctx context.Context, rev int64) error
	// Compact drops history at and below rev; CompactedRevision becomes rev.
	Compact(ctx context.Context, rev int64) error

	// Close stops the engine after in-flight writes finish. Open watchers
	// are closed.
	Close() error
}

// Watcher is one open watch.
type Watcher interface {
	// Events delivers events in revision order. It is closed when the watch
	// ends.
	Events() <-chan Event
	// Err says why Events was closed: nil after Stop or context end.
	Err() error
	// Progress returns a revision up to which every event of this watch
	// has been sent on Events: a bookmark at that revision, given once the
	// events already on Events are consumed, loses nothing. 0 until the
	// replay of history is done.
	Progress() int64
	// Stop ends the watch and releases its resources. Safe to call twice.
	Stop()
}

// Options configure an engine opened with Open.
type Options struct {
	// Stamp writes the revision into stored values. Required.
	Stamp Stamper
	// HistoryRetention is how long events stay replayable; 0 means
	// DefaultHistoryRetention.
	HistoryRetention time.Duration
	// HistoryMaxBytes bounds the memory the history alone keeps (the
	// values replaced or deleted by retained events, see HistoryStats):
	// past it the oldest events are compacted before their retention
	// ends. 0 means DefaultHistoryMaxBytes; below 0, no bound.
	HistoryMaxBytes int64
	// NoFsync skips fsync on commit: an acknowledged write can be lost, and
	// the file corrupted, by a crash of the machine. For throwaway data only
	// (tests, CI, demos).
	NoFsync bool
	// DefragThreshold enables online rewrites of the file: when the file
	// is larger than DefragMinSize and more than DefragThreshold times its
	// live data, the compactor rewrites it (see defrag.go). 0 disables them;
	// DefaultDefragThreshold is the usual value. A value of 1 or below
	// would rewrite a file that has nothing to give back.
	DefragThreshold float64
	// DefragMinSize is the file size below which no online rewrite runs;
	// 0 means DefaultDefragMinSize.
	DefragMinSize int64
	// Transformer, when set, turns values into the bytes written to the
	// file and back (encryption at rest); see Transformer.
	Transformer Transformer
	// Verify, when set, checks each value read back from the file at Open;
	// an error marks the key corrupt (see CorruptError). It must be cheap:
	// it runs once per stored value at every start. Neither key nor value
	// may be kept after it returns: the value may be the file's bytes.
	Verify func(key string, value []byte) error
	// Logger receives the engine's events (open, commit, compact, watch
	// start, close); nil means slog.Default().
	Logger *slog.Logger
	// Tag names what the file is for (platd records its brand): a file
	// that has never held an object records it; Open refuses a file
	// recorded with another tag with a *TagError. A file written before
	// tags existed is opened untagged (see DB.Untagged). "" checks nothing.
	Tag string
}

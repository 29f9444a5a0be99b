package bolt

import (
	"errors"
	"fmt"
)

// Errors returned by the engine. Callers compare with errors.Is; the engine
// wraps them with detail using %w.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("bolt: key not found")
	// ErrExists: Create found the key already present.
	ErrExists = errors.New("bolt: key already exists")
	// ErrConflict: the key's ModRevision differs from the expected revision.
	ErrConflict = errors.New("bolt: revision conflict")
	// ErrCompacted: the requested revision is older than the retained history.
	ErrCompacted = errors.New("bolt: revision has been compacted")
	// ErrFutureRevision: the requested revision has not been written yet.
	ErrFutureRevision = errors.New("bolt: revision is in the future")
	// ErrWatcherTooSlow: a watcher fell further behind than its buffer allows
	// and was dropped; the client re-watches from its last revision.
	ErrWatcherTooSlow = errors.New("bolt: watcher fell too far behind")
	// ErrClosed: the engine has been closed.
	ErrClosed = errors.New("bolt: engine closed")
	// ErrInvalid: a key, prefix or revision argument is malformed.
	ErrInvalid = errors.New("bolt: invalid argument")
	// ErrCorrupt: the file holds data the engine cannot decode.
	ErrCorrupt = errors.New("bolt: corrupt data file")
	// ErrChecksum: a record's checksum does not match its bytes: they were
	// damaged after they were written. It comes wrapped with ErrCorrupt
	// (the file) or in a CorruptError (a value Open kept as corrupt).
	ErrChecksum = errors.New("bolt: checksum mismatch")
	// ErrLocked: another process holds the engine file (a running server).
	ErrLocked = errors.New("bolt: file is in use by another process")
	// ErrCorruptValue: a stored value could not be read back at Open (see
	// CorruptError); the rest of the file is fine.
	ErrCorruptValue = errors.New("bolt: corrupt stored value")
	// ErrInvalidTxn: a Txn is empty, too long, uses a key twice or holds
	// a malformed op.
	ErrInvalidTxn = errors.New("bolt: invalid transaction")
	// ErrTagMismatch: the file was recorded with another Options.Tag.
	ErrTagMismatch = errors.New("bolt: file recorded with another tag")
	// ErrIO: a commit could not be written: bbolt, the operating system or
	// the value transformer failed. The wrapped text may name files and
	// keys; it is for the server log, not for clients.
	ErrIO = errors.New("bolt: write failed")
)

// TagError is Open's refusal of a file recorded with another tag; it
// wraps ErrTagMismatch.
type TagError struct {
	// Recorded is the file's tag, Wanted the one Open was given.
	Recorded, Wanted string
}

func (e *TagError) Error() string {
	return fmt.Sprintf("%v: recorded %q, opened with %q", ErrTagMismatch, e.Recorded, e.Wanted)
}

// Unwrap returns ErrTagMismatch.
func (e *TagError) Unwrap() error { return ErrTagMismatch }

// OpError says which op of a Txn made it fail. Err wraps the sentinel
// (ErrExists, ErrNotFound, ErrConflict, ErrInvalid, ErrInvalidTxn) or the
// stamper's error, so errors.Is sees through it.
type OpError struct {
	// Index is the op's position in the ops passed to Txn.
	Index int
	// Key is the op's key.
	Key string
	Err error
}

func (e *OpError) Error() string { return fmt.Sprintf("txn op %d: %v", e.Index, e.Err) }

// Unwrap returns Err.
func (e *OpError) Unwrap() error { return e.Err }

package audit

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	"time"
)

// MaxPending is how many bytes of event lines may wait for the log writer
// (some 10,000 Metadata events, upstream's batch buffer). Requests add
// their lines and go on; only when this much is waiting (a disk far slower
// than the request rate) does a request wait for room, as upstream's
// default blocking log backend waits for every write.
const MaxPending = 4 << 20

// flushAt is the amount of waiting lines that wakes the writer before its
// interval ends.
const flushAt = 256 << 10

// Writer is where the backend writes lines: a LogFile, or standard output
// through NewStreamWriter.
type Writer interface {
	io.Writer
	Flush() error
	Close() error
}

// FlushInterval is how long lines may wait before the writer takes them
// (sooner once flushAt bytes wait). Handing every event to the writer at
// once cost more than the events: a goroutine wake-up per line, and on
// ext4 an append per line dirties the log's inode, which every fsync of
// the database then waits to journal (creates took twice as long). A crash
// of the process loses at most this much of the log.
const FlushInterval = 100 * time.Millisecond

// Backend is the Sink of the log: lines are appended to a buffer that one
// goroutine writes out every FlushInterval. Write and Close are safe for
// concurrent use.
type Backend struct {
	w    Writer
	log  *slog.Logger
	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	mu sync.Mutex
	// room is signalled when the writer has taken the waiting lines.
	room    *sync.Cond
	pending []byte
	closed  bool
}

// NewBackend starts writing lines to w.
func NewBackend(w Writer, log *slog.Logger) *Backend {
	if log == nil {
		log = slog.Default()
	}
	b := &Backend{w: w, log: log, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	b.room = sync.NewCond(&b.mu)
	go b.run()
	return b
}

// Write adds a copy of line, waiting while MaxPending bytes wait. After
// Close lines are dropped.
func (b *Backend) Write(line []byte) {
	b.mu.Lock()
	for !b.closed && len(b.pending) >= MaxPending {
		b.room.Wait()
	}
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.pending = append(b.pending, line...)
	full := len(b.pending) >= flushAt
	b.mu.Unlock()
	if full {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

func (b *Backend) run() {
	defer close(b.done)
	tick := time.NewTicker(FlushInterval)
	defer tick.Stop()
	var spare []byte
	for {
		stopping := false
		select {
		case <-tick.C:
		case <-b.kick:
		case <-b.stop:
			stopping = true
		}
		b.mu.Lock()
		lines := b.pending
		b.pending = spare[:0]
		b.room.Broadcast()
		b.mu.Unlock()
		b.writeLines(lines)
		spare = lines
		if stopping {
			return
		}
	}
}

// writeLines writes each line (the log rotates between lines) and flushes.
func (b *Backend) writeLines(lines []byte) {
	if len(lines) == 0 {
		return
	}
	for len(lines) > 0 {
		n := bytes.IndexByte(lines, '\n') + 1
		if n == 0 {
			n = len(lines)
		}
		if _, err := b.w.Write(lines[:n]); err != nil {
			b.log.Error("audit log write failed", "err", err)
		}
		lines = lines[n:]
	}
	if err := b.w.Flush(); err != nil {
		b.log.Error("audit log write failed", "err", err)
	}
}

// Close writes what waits and closes the writer.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.room.Broadcast()
	b.mu.Unlock()
	close(b.stop)
	<-b.done
	return b.w.Close()
}

// flushWriter is a Writer over a stream that is never closed (standard
// output).
type flushWriter struct{ w io.Writer }

// NewStreamWriter writes lines to w unbuffered and never closes it.
func NewStreamWriter(w io.Writer) Writer { return flushWriter{w} }

func (f flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }
func (flushWriter) Flush() error                  { return nil }
func (flushWriter) Close() error                  { return nil }

package audit

import (
	"io"
	"log/slog"
	"sync"
	"time"
)

// QueueSize is how many event lines may wait for the log writer. Requests
// hand their lines over and go on; only when this many are waiting (a disk
// far slower than the request rate) does a request wait for room, as
// upstream's default blocking log backend waits for every write. The size
// is upstream's batch buffer.
const QueueSize = 10000

// Writer is where the backend writes lines: a LogFile, or standard output
// through NewStreamWriter.
type Writer interface {
	io.Writer
	Flush() error
	Close() error
}

// FlushInterval is how long written lines may sit in the log's buffer
// before they reach the file (a full buffer goes at once). Appending to
// the file at every event costs more than the events: on ext4 each append
// dirties the log's inode, which every fsync of the database then waits
// to journal, and creates took twice as long. A crash of the process loses
// at most this much of the log.
const FlushInterval = 100 * time.Millisecond

// Backend is the Sink of the log: lines are queued and written by one
// goroutine, which flushes its buffer every FlushInterval. Write and Close
// are safe for concurrent use.
type Backend struct {
	w     Writer
	log   *slog.Logger
	queue chan []byte
	done  chan struct{}
	// mu guards closed: Write holds it shared while it queues, so Close
	// never closes the queue under a writer.
	mu     sync.RWMutex
	closed bool
}

// NewBackend starts writing queued lines to w.
func NewBackend(w Writer, log *slog.Logger) *Backend {
	if log == nil {
		log = slog.Default()
	}
	b := &Backend{w: w, log: log, queue: make(chan []byte, QueueSize), done: make(chan struct{})}
	go b.run()
	return b
}

// Write queues line (which the caller gives up), waiting while the queue
// is full. After Close lines are dropped.
func (b *Backend) Write(line []byte) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return
	}
	b.queue <- line
}

func (b *Backend) run() {
	defer close(b.done)
	tick := time.NewTicker(FlushInterval)
	defer tick.Stop()
	dirty := false
	for {
		select {
		case line, ok := <-b.queue:
			if !ok {
				return
			}
			b.write(line)
			dirty = true
		case <-tick.C:
			if dirty {
				if err := b.w.Flush(); err != nil {
					b.log.Error("audit log write failed", "err", err)
				}
				dirty = false
			}
		}
	}
}

func (b *Backend) write(line []byte) {
	if _, err := b.w.Write(line); err != nil {
		b.log.Error("audit log write failed", "err", err)
	}
}

// Close writes what is queued and closes the writer.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.queue)
	b.mu.Unlock()
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

package audit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// defaultMaxSizeMB is the size a log file grows to when --audit-log-maxsize
// is 0, as upstream's log rotation defaults it.
const defaultMaxSizeMB = 100

// backupTimeFormat stamps a rotated file's name (name-<time>.ext), in UTC,
// as the upstream server's rotation names backups, so tools that clean or
// ship them keep working.
const backupTimeFormat = "2006-01-02T15-04-05.000"

// LogFile is an append-only file rotated by size: when a write would pass
// the limit, the file is renamed with the time of rotation in its name and
// a new one started; then backups beyond the count or older than the age
// limit are removed. It is not safe for concurrent use (the log writer
// goroutine owns it).
type LogFile struct {
	path       string
	maxSize    int64
	maxBackups int
	maxAge     time.Duration
	now        func() time.Time

	f    *os.File
	w    *bufio.Writer
	size int64
}

// logBufferSize is the write buffer of the file: events are flushed when
// the queue runs empty, so a burst costs few system calls.
const logBufferSize = 64 << 10

// OpenLogFile opens (creating it and its directory) the log at path.
// maxSizeMB 0 means 100; maxBackups 0 keeps every backup; maxAgeDays 0
// keeps backups of any age. now is the clock of backup names (nil:
// time.Now).
func OpenLogFile(path string, maxSizeMB, maxBackups, maxAgeDays int, now func() time.Time) (*LogFile, error) {
	if maxSizeMB == 0 {
		maxSizeMB = defaultMaxSizeMB
	}
	if now == nil {
		now = time.Now
	}
	l := &LogFile{path: path, maxSize: int64(maxSizeMB) << 20, maxBackups: maxBackups, maxAge: time.Duration(maxAgeDays) * 24 * time.Hour, now: now}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the directory of the audit log: %w", err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *LogFile) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("opening the audit log: %w", err)
	}
	l.f, l.size = f, st.Size()
	if l.w == nil {
		l.w = bufio.NewWriterSize(f, logBufferSize)
	} else {
		l.w.Reset(f)
	}
	return nil
}

// Write appends p, rotating first when p would pass the size limit. A
// single p larger than the limit is refused.
func (l *LogFile) Write(p []byte) (int, error) {
	if int64(len(p)) > l.maxSize {
		return 0, fmt.Errorf("write length %d exceeds maximum file size %d", len(p), l.maxSize)
	}
	if l.size+int64(len(p)) > l.maxSize {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.w.Write(p)
	l.size += int64(n)
	return n, err
}

// Flush writes the buffered lines to the file.
func (l *LogFile) Flush() error { return l.w.Flush() }

// Close flushes and closes the file.
func (l *LogFile) Close() error {
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rotate renames the current file to its backup name, starts a new one
// and removes the backups the limits no longer keep.
func (l *LogFile) rotate() error {
	if err := l.Close(); err != nil {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	if err := os.Rename(l.path, l.backupName(l.now())); err != nil {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	if err := l.open(); err != nil {
		return err
	}
	return l.removeOld()
}

// nameParts splits the log's base name into the prefix and extension
// backups share.
func (l *LogFile) nameParts() (dir, prefix, ext string) {
	dir, base := filepath.Split(l.path)
	ext = filepath.Ext(base)
	return dir, strings.TrimSuffix(base, ext) + "-", ext
}

func (l *LogFile) backupName(t time.Time) string {
	dir, prefix, ext := l.nameParts()
	return filepath.Join(dir, prefix+t.UTC().Format(backupTimeFormat)+ext)
}

// removeOld deletes backups past the count (oldest first) and older than
// the age limit, judged by the time in their names.
func (l *LogFile) removeOld() error {
	if l.maxBackups == 0 && l.maxAge == 0 {
		return nil
	}
	dir, prefix, ext := l.nameParts()
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing audit log backups: %w", err)
	}
	type backup struct {
		name string
		t    time.Time
	}
	var backups []backup
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ext) || len(name) < len(prefix)+len(ext) {
			continue
		}
		t, err := time.Parse(backupTimeFormat, name[len(prefix):len(name)-len(ext)])
		if err != nil {
			continue
		}
		backups = append(backups, backup{name, t})
	}
	sort.Slice(backups, func(i, j int) bool { return backups[i].t.After(backups[j].t) })
	var remove []string
	if l.maxBackups > 0 && len(backups) > l.maxBackups {
		for _, b := range backups[l.maxBackups:] {
			remove = append(remove, b.name)
		}
		backups = backups[:l.maxBackups]
	}
	if l.maxAge > 0 {
		cutoff := l.now().Add(-l.maxAge)
		for _, b := range backups {
			if b.t.Before(cutoff) {
				remove = append(remove, b.name)
			}
		}
	}
	var firstErr error
	for _, name := range remove {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("removing an old audit log: %w", err)
		}
	}
	return firstErr
}

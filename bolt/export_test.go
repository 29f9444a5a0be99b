package bolt

// SlowWatcherEvents is more events than a watcher that never reads can
// hold: its queue, the batch its goroutine holds, and its channel.
const SlowWatcherEvents = 2*watchBuffer + watchOutBuffer + 100

// LiveGoroutines is the number of goroutines db is running.
func LiveGoroutines(db *DB) int64 { return db.live.Load() }

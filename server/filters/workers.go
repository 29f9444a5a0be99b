package filters

import "time"

// handlerWorkers run the handlers of timed requests (Timeout) on reused
// goroutines. A handler's stack grows deep (decoding, defaulting,
// validation, ownership), and a new goroutine's starts small and is
// copied at each doubling: on every request, a few percent of a create's
// CPU. A worker keeps its grown stack for the next handler.
var handlerWorkers = workers{tasks: make(chan func()), idle: workerIdle}

// workerIdle is how long an idle worker waits for a handler before it
// exits: a burst leaves no goroutines behind for long, and a stopped
// server none after a second.
const workerIdle = time.Second

// workers hands functions to idle goroutines, starting one when none is
// idle: a function never waits for a worker.
type workers struct {
	// tasks is unbuffered: a send succeeds only when a worker is waiting.
	tasks chan func()
	// idle is how long a worker waits for a function before it exits.
	idle time.Duration
}

// run calls f on an idle worker or a new goroutine, and returns at once.
// f must not panic (a panic would end the process, as in any goroutine);
// a runtime.Goexit of f ends only its worker.
func (w *workers) run(f func()) {
	select {
	case w.tasks <- f:
	default:
		go w.work(f)
	}
}

// work calls f and then every function handed to it, until none comes
// for w.idle.
func (w *workers) work(f func()) {
	idle := time.NewTimer(w.idle)
	defer idle.Stop()
	for {
		f()
		f = nil // f's closure is garbage once done
		idle.Reset(w.idle)
		select {
		case f = <-w.tasks:
		case <-idle.C:
			return
		}
	}
}

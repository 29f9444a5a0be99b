package filters

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// goroutineID tells goroutines apart in tests: the number in the first
// line of its stack trace.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	for i := len("goroutine "); i < len(buf); i++ {
		if buf[i] == ' ' {
			return string(buf[len("goroutine "):i])
		}
	}
	return string(buf)
}

func TestWorkers(t *testing.T) {
	t.Parallel()
	w := &workers{tasks: make(chan func()), idle: time.Minute}
	ran := make(chan string)
	w.run(func() { ran <- goroutineID() })
	first := <-ran
	// The worker that ran it waits for the next function: the next run
	// goes to it once it is waiting (bounded poll: it may not be yet).
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.run(func() { ran <- goroutineID() })
		if got := <-ran; got == first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no function ran on the idle worker")
		}
	}

	// Functions run at once, in parallel, whether or not a worker is idle.
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 20 {
		wg.Add(1)
		w.run(func() { defer wg.Done(); <-release })
	}
	close(release)
	wg.Wait()

	// A Goexit ends its worker alone; later functions still run.
	w.run(func() { defer close(ran); runtime.Goexit() })
	<-ran
	done := make(chan bool)
	w.run(func() { done <- true })
	<-done
}

// TestWorkersExitWhenIdle runs alone (not parallel): it counts goroutines.
func TestWorkersExitWhenIdle(t *testing.T) {
	before := runtime.NumGoroutine()
	w := &workers{tasks: make(chan func()), idle: time.Millisecond}
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		w.run(wg.Done)
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before the workers started", runtime.NumGoroutine(), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

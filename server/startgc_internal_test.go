package server

import (
	"runtime/debug"
	"testing"
)

// TestRelaxGC: a start raises the collector's target, nested starts keep
// it raised until the last is done, restoring twice is harmless, and an
// off collector stays off.
func TestRelaxGC(t *testing.T) {
	startGC.Lock()
	busy := startGC.starts != 0
	startGC.Unlock()
	if busy {
		t.Skip("a server of this process is starting")
	}
	percent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)

	a := relaxGC()
	if got := percent(); got != 100*startGCFactor {
		t.Fatalf("starting: GC percent %d, want %d", got, 100*startGCFactor)
	}
	b := relaxGC()
	a()
	a()
	if got := percent(); got != 100*startGCFactor {
		t.Fatalf("one of two starts done: GC percent %d, want %d", got, 100*startGCFactor)
	}
	b()
	if got := percent(); got != 100 {
		t.Fatalf("started: GC percent %d, want 100", got)
	}

	debug.SetGCPercent(-1)
	c := relaxGC()
	if got := percent(); got != -1 {
		t.Fatalf("GOGC=off starting: GC percent %d, want -1", got)
	}
	c()
	if got := percent(); got != -1 {
		t.Fatalf("GOGC=off started: GC percent %d, want -1", got)
	}
}

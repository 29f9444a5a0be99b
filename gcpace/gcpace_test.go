package gcpace

import (
	"runtime/debug"
	"testing"
)

func percent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// TestOverlaps: however pauses and raises overlap and in whatever order
// they end, the target follows the strongest active change, restoring
// twice is harmless, and the configured target returns at the end.
func TestOverlaps(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)

	type step struct {
		name string
		do   func()
		want int
	}
	var relaxA, relaxB, pause, relax8 func()
	steps := []step{
		{"relax", func() { relaxA = Relax(4) }, 400},
		{"second relax", func() { relaxB = Relax(4) }, 400},
		{"first relax ends twice", func() { relaxA(); relaxA() }, 400},
		{"pause inside a relax", func() { pause = Pause() }, -1},
		{"relax ends during the pause", func() { relaxB() }, -1},
		{"pause ends", func() { pause() }, 100},
		{"pause", func() { pause = Pause() }, -1},
		{"relax inside a pause", func() { relaxA = Relax(4) }, -1},
		{"pause ends first", func() { pause() }, 400},
		{"larger relax", func() { relax8 = Relax(8) }, 800},
		{"smaller relax ends", func() { relaxA() }, 800},
		{"larger relax ends", func() { relax8() }, 100},
	}
	for _, s := range steps {
		s.do()
		if got := percent(); got != s.want {
			t.Fatalf("%s: GC percent %d, want %d", s.name, got, s.want)
		}
	}
}

// TestOff: a collector configured off stays off through a raise.
func TestOff(t *testing.T) {
	orig := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(orig)
	restore := Relax(4)
	if got := percent(); got != -1 {
		t.Fatalf("GOGC=off relaxed: GC percent %d, want -1", got)
	}
	restore()
	if got := percent(); got != -1 {
		t.Fatalf("GOGC=off restored: GC percent %d, want -1", got)
	}
}

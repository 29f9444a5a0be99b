// Package gcpace owns the garbage collector's target while parts of
// platd change it for a while: a store load turns collection off, a
// server start raises the target. The changes of one process overlap
// and end in any order (tests run servers and loads side by side), so
// each is counted here and the target always follows the strongest one
// active; the configured target returns only when the last one ends.
package gcpace

import (
	"runtime/debug"
	"sync"
)

var state struct {
	sync.Mutex
	pauses  int
	relaxes map[int]int // active raises by factor
	base    int         // the configured target, read when the first change began
}

// Pause turns the collector off until restore is called. A memory limit
// (GOMEMLIMIT) still makes it run.
func Pause() (restore func()) {
	return begin(func() { state.pauses++ }, func() { state.pauses-- })
}

// Relax multiplies the configured target by factor until restore is
// called. An off collector (GOGC=off) stays off.
func Relax(factor int) (restore func()) {
	return begin(func() {
		if state.relaxes == nil {
			state.relaxes = map[int]int{}
		}
		state.relaxes[factor]++
	}, func() {
		if state.relaxes[factor]--; state.relaxes[factor] == 0 {
			delete(state.relaxes, factor)
		}
	})
}

// begin records a change and applies the resulting target; the returned
// function undoes it once, however often and from wherever it is called.
func begin(add, remove func()) (restore func()) {
	state.Lock()
	if state.pauses == 0 && len(state.relaxes) == 0 {
		state.base = debug.SetGCPercent(-1)
	}
	add()
	apply()
	state.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			state.Lock()
			remove()
			apply()
			state.Unlock()
		})
	}
}

// apply sets the target the active changes call for; the lock is held.
func apply() {
	target := state.base
	switch {
	case state.pauses > 0:
		target = -1
	case target > 0:
		factor := 1
		for f := range state.relaxes {
			factor = max(factor, f)
		}
		target *= factor
	}
	debug.SetGCPercent(target)
}

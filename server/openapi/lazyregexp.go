package openapi

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles a fixed expression on first use rather than at
// program start: most of these never run in a process's life, and the
// server's start time is one of its promises.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

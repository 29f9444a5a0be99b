package server

import (
	"net/http"
	"net/http/pprof"

	"github.com/julienschmidt/httprouter"
)

// profilingPrefix is where Go's profiles are served (--profiling).
const profilingPrefix = "/debug/pprof/"

// serveProfiling routes upstream's profiling paths to Go's handlers:
// /debug/pprof/ with every named profile under it, CPU profiles, execution
// traces and symbol lookups; /debug/pprof redirects to the index. As
// upstream, the command line is not served (it may carry secrets): the
// index knows no profile of that name.
func serveProfiling(router *httprouter.Router) {
	byName := map[string]http.HandlerFunc{"profile": pprof.Profile, "symbol": pprof.Symbol, "trace": pprof.Trace}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[len(profilingPrefix):]
		if f := byName[name]; f != nil {
			f(w, r)
			return
		}
		pprof.Index(w, r)
	})
	index := func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, profilingPrefix, http.StatusFound) }
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		router.HandlerFunc(m, profilingPrefix[:len(profilingPrefix)-1], index)
		router.Handler(m, profilingPrefix+"*name", h)
	}
}

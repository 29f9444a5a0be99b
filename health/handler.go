package health

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Handler serves endpoint (Healthz, Livez, Readyz or any other name given
// to Add) from the checks registered on it. Mount it at "/<endpoint>" and
// at every path under "/<endpoint>/"; it reads the full r.URL.Path:
//
//   - "/<endpoint>" runs every check: 200 "ok", or with ?verbose (any
//     value) one line per check and "<endpoint> check passed"; any failure
//     gives 500 with every line and "<endpoint> check failed". Each
//     ?exclude=<check> is reported as passing without running it.
//   - "/<endpoint>/<check>" runs one check: 200 "ok" or 500
//     "internal server error: <err>".
//   - anything else is a plain 404.
func (r *Registry) Handler(endpoint string) http.Handler {
	root := "/" + endpoint
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		path := req.URL.Path
		if path == root {
			r.serveAll(w, req, endpoint)
			return
		}
		name, ok := strings.CutPrefix(path, root+"/")
		if !ok || name == "" {
			http.NotFound(w, req)
			return
		}
		for _, c := range r.Checks(endpoint) {
			if c.Name == name {
				r.serveOne(w, req, endpoint, c)
				return
			}
		}
		http.NotFound(w, req)
	})
}

// serveOne answers the single-check path.
func (r *Registry) serveOne(w http.ResponseWriter, req *http.Request, endpoint string, c Check) {
	if err := c.Fn(req); err != nil {
		r.logFailures(req.Context(), endpoint, []failure{{c.Name, err}})
		http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, "ok")
}

// serveAll answers the endpoint's root path.
func (r *Registry) serveAll(w http.ResponseWriter, req *http.Request, endpoint string) {
	query := req.URL.Query()
	excluded := query["exclude"]
	unmatched := map[string]bool{}
	for _, name := range excluded {
		unmatched[name] = true
	}
	var out bytes.Buffer
	var failed []failure
	for _, c := range r.Checks(endpoint) {
		if slices.Contains(excluded, c.Name) {
			delete(unmatched, c.Name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name)
			continue
		}
		if err := c.Fn(req); err != nil {
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
			failed = append(failed, failure{c.Name, err})
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
	}
	if len(unmatched) > 0 {
		names := make([]string, 0, len(unmatched))
		for name := range unmatched {
			names = append(names, name)
		}
		slices.Sort(names)
		for i, name := range names {
			names[i] = fmt.Sprintf("%q", name)
		}
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(names, ","))
	}
	if len(failed) > 0 {
		r.logFailures(req.Context(), endpoint, failed)
		http.Error(w, fmt.Sprintf("%s%s check failed", out.String(), endpoint), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := query["verbose"]; !verbose {
		fmt.Fprint(w, "ok")
		return
	}
	fmt.Fprintf(&out, "%s check passed\n", endpoint)
	_, _ = out.WriteTo(w)
}

// failure is a check that failed in one probe.
type failure struct {
	check string
	err   error
}

// logFailures writes one line for a failed probe, naming each failed check
// with its reason. While the only failures are start-up hooks that are
// not yet late, the line is at debug level: a client polling readiness
// during a start would otherwise fill the log with the expected.
func (r *Registry) logFailures(ctx context.Context, endpoint string, failed []failure) {
	level := slog.LevelDebug
	for _, f := range failed {
		if f.err != errNotFinished {
			level = slog.LevelWarn
		}
	}
	if !r.log.Enabled(ctx, level) {
		return
	}
	if w := r.logWatch; w != nil && w.stuck(time.Now()) {
		// The line would wait behind the stuck write: the probe answers
		// without it, its body naming what failed.
		return
	}
	var reasons strings.Builder
	for i, f := range failed {
		if i > 0 {
			reasons.WriteString("; ")
		}
		fmt.Fprintf(&reasons, "%s: %v", f.check, f.err)
	}
	r.log.Log(ctx, level, "health check failed", "endpoint", endpoint, "failed", reasons.String())
}

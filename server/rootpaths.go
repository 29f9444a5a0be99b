package server

import (
	"encoding/json"
	"net/http"
	"slices"

	"platd/health"
)

// healthEndpoints are the health endpoints, each served at /<endpoint> and
// /<endpoint>/<check>.
var healthEndpoints = []string{health.Livez, health.Readyz, health.Healthz}

// rootPaths answers GET / (and /index.html) as upstream's index does: a
// RootPaths object naming, sorted, the paths a client can start from. They
// are fixed (the documents routes serves by path), the discovery documents
// of every served group and group-version and of every APIService's, and
// each health endpoint with each of its checks. The list is made per
// request, so custom resource groups, APIServices and checks added while
// serving appear in it.
func (s *Server) rootPaths(hr *health.Registry, fixed []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths := append([]string{"/api", "/apis", "/apis/"}, fixed...)
		groupVersion := func(group, version string) {
			if group == "" {
				paths = append(paths, "/api/"+version)
				return
			}
			paths = append(paths, "/apis/"+group, "/apis/"+group+"/"+version)
		}
		for _, g := range s.reg.Groups() {
			for _, v := range s.reg.Versions(g) {
				groupVersion(g, v)
			}
		}
		if d := s.reg.Lookup(s.opts.Brand.Group("apiregistration"), "v1", "apiservices"); d != nil {
			// A failed read leaves out only APIServices naming a
			// service: every other one is a served group-version.
			items, _, _ := s.rest.List(d, "")
			for _, as := range items {
				spec, _ := as["spec"].(map[string]any)
				group, _ := spec["group"].(string)
				version, _ := spec["version"].(string)
				if group != "" && version != "" {
					groupVersion(group, version)
				}
			}
		}
		for _, ep := range healthEndpoints {
			paths = append(paths, "/"+ep)
			for _, c := range hr.Checks(ep) {
				paths = append(paths, "/"+ep+"/"+c.Name)
			}
		}
		slices.Sort(paths)
		body, err := json.MarshalIndent(struct {
			Paths []string `json:"paths"`
		}{slices.Compact(paths)}, "", "  ")
		if err != nil {
			s.rest.WriteError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

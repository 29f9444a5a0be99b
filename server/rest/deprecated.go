package rest

import (
	"fmt"
	"net/http"

	"platd/server/audit"
)

// deprecated marks a request to a deprecated version: the Warning header
// with upstream's text (or a custom resource version's own), the audit
// annotations <domain>/deprecated and <domain>/removed-release, and the
// requested-deprecated-APIs gauge.
func (h *Handler) deprecated(w http.ResponseWriter, r *http.Request, s *scope) {
	d := s.d
	text := d.Deprecation
	if text == "" {
		text = fmt.Sprintf("%s %s is deprecated in v%s+", d.GroupVersion(), d.Kind, d.DeprecatedIn)
		if d.RemovedIn != "" {
			text += fmt.Sprintf(", unavailable in v%s+", d.RemovedIn)
		}
	}
	addWarnings(r.Context(), w, []string{text})
	audit.AddAnnotation(r.Context(), h.brand.Domain+"/deprecated", "true")
	if d.RemovedIn != "" {
		audit.AddAnnotation(r.Context(), h.brand.Domain+"/removed-release", d.RemovedIn)
	}
	if h.requestedDeprecated != nil {
		h.requestedDeprecated(d.Group, d.Version, d.Resource, s.sub, d.RemovedIn)
	}
}

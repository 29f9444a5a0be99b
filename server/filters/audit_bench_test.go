package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server/audit"
	"platd/server/request"
)

type discardSink struct{}

func (discardSink) Write([]byte) {}

// BenchmarkAuditMetadata is the audit filter's own cost on a create at
// Metadata level, against a handler that does nothing.
func BenchmarkAuditMetadata(b *testing.B) {
	p := audit.NewPolicy(&config.AuditPolicy{Rules: []config.AuditRule{{Level: config.AuditLevelMetadata}}})
	brand := config.Brands["plat"]
	h := Audit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit.AddAnnotation(r.Context(), "a/decision", "allow")
		w.WriteHeader(201)
	}), p, discardSink{}, brand)
	r := httptest.NewRequest("POST", "/api/v1/namespaces/bench/configmaps", strings.NewReader("{}"))
	r.RemoteAddr = "127.0.0.1:5555"
	r = r.WithContext(WithUser(request.WithInfo(r.Context(), request.Parse(r.Method, r.URL)), &security.User{Name: "admin", Groups: []string{"system:masters"}}))
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// BenchmarkAuditID is what every request pays for its Audit-Id header,
// audit on or off.
func BenchmarkAuditID(b *testing.B) {
	h := AuditID(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/api/v1/namespaces/a/configmaps/c", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

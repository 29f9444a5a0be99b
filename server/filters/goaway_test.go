package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGoaway(t *testing.T) {
	t.Parallel()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, tc := range []struct {
		name   string
		chance float64
		random float64
		proto  int
		want   string
	}{
		{"drawn over HTTP/2", 0.02, 0.019, 2, "close"},
		{"not drawn", 0.02, 0.02, 2, ""},
		{"HTTP/1 is left alone", 0.02, 0, 1, ""},
		{"off", 0, 0, 2, ""},
	} {
		h := goaway(next, tc.chance, func() float64 { return tc.random })
		r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
		r.ProtoMajor = tc.proto
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if got := rec.Header().Get("Connection"); got != tc.want || rec.Code != http.StatusNoContent {
			t.Errorf("%s: Connection %q, code %d; want %q, 204", tc.name, got, rec.Code, tc.want)
		}
	}
}

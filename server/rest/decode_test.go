package rest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platd/server/apierr"
)

// readBody accepts bodies up to 3 MiB, whether the length is declared or
// the body is chunked, and refuses larger ones with upstream's 413.
func TestReadBodyLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		n       int
		chunked bool
		wantErr bool
	}{
		{"declared at the limit", 3145728, false, false},
		{"declared over the limit", 3145729, false, true},
		{"chunked at the limit", 3145728, true, false},
		{"chunked over the limit", 3145729, true, true},
	} {
		var body io.Reader = strings.NewReader(strings.Repeat("a", tc.n))
		if tc.chunked {
			body = io.MultiReader(body) // hides the length
		}
		r := httptest.NewRequest(http.MethodPost, "/", body)
		if tc.chunked {
			r.ContentLength = -1
		}
		b, err := readBody(r)
		if !tc.wantErr {
			if err != nil || len(b) != tc.n {
				t.Errorf("%s: %d bytes, %v; want %d bytes", tc.name, len(b), err, tc.n)
			}
			continue
		}
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("%s: error %v, want a Status", tc.name, err)
		}
		st := ae.Status
		if st.Code != http.StatusRequestEntityTooLarge || st.Reason != apierr.ReasonTooLarge || st.Message != "Request entity too large: limit is 3145728" || st.Details != nil {
			t.Errorf("%s: %+v, want upstream's 413", tc.name, st)
		}
	}
}

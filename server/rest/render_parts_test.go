package rest

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platd/codec"
)

// TestWriteObjectParts: a JSON object response reads the same whether it
// is joined into one body or written in parts (objects from
// partsObjectBytes on), for every size about the threshold, compressed or
// not, pretty or not.
func TestWriteObjectParts(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	stored := func(size int) []byte {
		head := `{"metadata":{"name":"c","namespace":"ns","resourceVersion":"7"},"data":{"k":"`
		return []byte(head + strings.Repeat("v", max(size-len(head)-3, 0)) + `"}}`)
	}
	for _, size := range []int{100, partsObjectBytes - 1, partsObjectBytes, partsObjectBytes + 1, 3000, 9000} {
		for _, tt := range []struct {
			name     string
			out      output
			encoding string
		}{
			{"json", output{format: formatJSON, as: asObject}, ""},
			{"json gzip", output{format: formatJSON, as: asObject}, "gzip"},
			{"pretty", output{format: formatJSON, as: asObject, pretty: true}, ""},
		} {
			value := stored(size)
			want := append(objectJSON(nil, d, value), '\n')
			if tt.out.pretty {
				want = codec.Indent(nil, objectJSON(nil, d, value))
			}
			r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/configmaps/c", nil)
			if tt.encoding != "" {
				r.Header.Set("Accept-Encoding", tt.encoding)
			}
			w := httptest.NewRecorder()
			h.writeObject(w, r, tt.out, http.StatusOK, d, value)
			res := w.Result()
			body := readAllBody(t, res)
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != mediaJSON {
				t.Errorf("%s of %d bytes: status %d, Content-Type %q", tt.name, size, res.StatusCode, res.Header.Get("Content-Type"))
			}
			if !bytes.Equal(body, want) {
				t.Errorf("%s of %d bytes: body\n%.200s\nwant\n%.200s", tt.name, size, body, want)
			}
			if !bytes.Equal(value, stored(size)) {
				t.Errorf("%s of %d bytes: the stored bytes were written", tt.name, size)
			}
		}
	}
}

// readAllBody reads a recorded response's body, decompressed.
func readAllBody(t *testing.T, res *http.Response) []byte {
	t.Helper()
	var rd io.Reader = res.Body
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

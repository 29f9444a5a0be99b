package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Responses are framed by net/http as upstream's are: a body that fits
// net/http's buffer (2 KiB on HTTP/1.1, 4 KiB on HTTP/2) has a
// Content-Length, a longer one is chunked on HTTP/1.1 and has no length
// on HTTP/2. Errors (Status bodies) are framed the same way.
func TestResponseFraming(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "framing"}}).mustCode(t, 201)
	cms := "/api/v1/namespaces/framing/configmaps"
	value := strings.Repeat("v", 600)
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		e.do("POST", cms, cm(name, map[string]string{"k": value}, nil)).mustCode(t, 201)
	}
	e.do("POST", cms, cm("small", map[string]string{"k": "v"}, nil)).mustCode(t, 201)
	table := "application/json;as=Table;v=v1;g=" + e.opts.Brand.MetaGroup()

	h1, h2 := e.http1Client(), e.client
	for _, tc := range []struct {
		name           string
		client         *http.Client
		path, accept   string
		code, protocol int
		chunked        bool // else a Content-Length
	}{
		{"h1 small get", h1, cms + "/small", "application/json", 200, 1, false},
		{"h1 list", h1, cms, "application/json", 200, 1, true},
		{"h1 list as Table", h1, cms, table, 200, 1, true},
		{"h1 list as protobuf", h1, cms, e.opts.Brand.ProtobufMediaType, 200, 1, true},
		{"h1 small list", h1, cms + "?labelSelector=none%3Dnone", "application/json", 200, 1, false},
		{"h1 not found", h1, cms + "/nonexistent", "application/json", 404, 1, false},
		{"h2 small get", h2, cms + "/small", "application/json", 200, 2, false},
		{"h2 list", h2, cms, "application/json", 200, 2, true},
	} {
		rq, err := http.NewRequest(http.MethodGet, e.srv.URL()+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		rq.Header.Set("Authorization", "Bearer "+adminToken)
		rq.Header.Set("Accept", tc.accept)
		rq.Header.Set("Accept-Encoding", "identity")
		res, err := tc.client.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != tc.code || res.ProtoMajor != tc.protocol {
			t.Fatalf("%s: %d over HTTP/%d, %v", tc.name, res.StatusCode, res.ProtoMajor, err)
		}
		if tc.name == "h1 small get" {
			// HEAD is framed as GET: its length, no body.
			rq.Method = http.MethodHead
			head, err := tc.client.Do(rq)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, head.Body)
			head.Body.Close()
			if head.StatusCode != 200 || head.ContentLength != int64(len(body)) || n != 0 {
				t.Errorf("HEAD: %d, Content-Length %d, %d bytes; want 200, %d, none", head.StatusCode, head.ContentLength, n, len(body))
			}
		}
		chunked := len(res.TransferEncoding) == 1 && res.TransferEncoding[0] == "chunked"
		switch {
		case !tc.chunked && (res.ContentLength != int64(len(body)) || len(res.TransferEncoding) != 0 || len(body) > 2048):
			t.Errorf("%s: Content-Length %d, Transfer-Encoding %q for %d bytes; want the length", tc.name, res.ContentLength, res.TransferEncoding, len(body))
		case tc.chunked && (res.ContentLength != -1 || chunked != (tc.protocol == 1) || len(body) <= 4096):
			t.Errorf("%s: Content-Length %d, Transfer-Encoding %q for %d bytes; want no length", tc.name, res.ContentLength, res.TransferEncoding, len(body))
		}
	}
}

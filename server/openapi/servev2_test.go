package openapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestNegotiateV2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		accept string
		form   v2Form
		ok     bool
	}{
		{"", formJSON, true},
		{"application/json", formJSON, true},
		{mediaV2ProtobufAlias, formProtobuf, true},
		{mediaV2Protobuf, formProtobuf, true},
		{"*/*", formJSON, true},
		{"application/*", formJSON, true},
		{"*", formJSON, true},
		{"application/json;q=0.5, " + mediaV2Protobuf, formProtobuf, true},
		{mediaV2ProtobufAlias + ", application/json", formProtobuf, true},
		{"text/html, */*;q=0.1", formJSON, true},
		// Upstream lets quality order clauses but never refuses on it.
		{"application/json;q=0", formJSON, true},
		// Upstream compares media types case-sensitively.
		{"Application/JSON", 0, false},
		{"application/yaml", 0, false},
		{"text/html, application/xml", 0, false},
		{"nonsense", 0, false},
	} {
		form, ok := negotiateV2(c.accept)
		if form != c.form || ok != c.ok {
			t.Errorf("Accept %q: form %d ok %v, want %d %v", c.accept, form, ok, c.form, c.ok)
		}
	}
}

// serveV2Request runs one request to /openapi/v2 from remote.
func serveV2Request(h http.Handler, remote string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
	r.RemoteAddr = remote
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// remoteClient and localClient are RemoteAddrs off and on the loopback
// interface.
const (
	remoteClient = "192.0.2.7:40000"
	localClient  = "127.0.0.1:40000"
)

func TestServeV2Protobuf(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	desc := v2Document(t)
	jsonResp := serveV2Request(h, localClient, map[string]string{"Accept": "application/json"})
	etag := jsonResp.Header().Get("ETag")
	for _, accept := range []string{mediaV2ProtobufAlias, mediaV2Protobuf} {
		w := serveV2Request(h, localClient, map[string]string{"Accept": accept})
		hdr := w.Header()
		if w.Code != http.StatusOK || hdr.Get("Content-Type") != mediaV2Protobuf {
			t.Fatalf("%s: %d %v", accept, w.Code, hdr)
		}
		// One ETag for every form: Vary separates them in caches.
		if hdr.Get("ETag") != etag || len(etag) != 130 {
			t.Errorf("%s: ETag %q, JSON's %q", accept, hdr.Get("ETag"), etag)
		}
		if got := hdr.Values("Vary"); !reflect.DeepEqual(got, []string{"Accept-Encoding", "Accept"}) {
			t.Errorf("%s: Vary %q", accept, got)
		}
		if hdr.Get("Cache-Control") != "no-cache, private" || hdr.Get("Last-Modified") != jsonResp.Header().Get("Last-Modified") || hdr.Get("Expires") != "" {
			t.Errorf("%s: caching headers %v", accept, hdr)
		}
		if hdr.Get("Content-Encoding") != "" {
			t.Errorf("%s: loopback client got Content-Encoding %q", accept, hdr.Get("Content-Encoding"))
		}
		want, err := encodeV2Protobuf(jsonResp.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Body.Bytes(), want) {
			t.Errorf("%s: body is not the protobuf form of the JSON body", accept)
		}
		got := decodeProtobuf(t, desc, w.Body.Bytes()).(map[string]any)
		if got["swagger"] != swaggerV2 || dig(got, "info", "title") != "Kubernetes" {
			t.Errorf("%s: decoded document %v %v", accept, got["swagger"], got["info"])
		}

		nm := serveV2Request(h, localClient, map[string]string{"Accept": accept, "If-None-Match": etag})
		if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 {
			t.Errorf("%s If-None-Match: %d, %d bytes", accept, nm.Code, nm.Body.Len())
		}
	}
	w := serveV2Request(h, localClient, map[string]string{"Accept": "application/yaml"})
	if w.Code != http.StatusNotAcceptable || w.Body.Len() != 0 || len(w.Header().Values("Vary")) != 2 {
		t.Errorf("unacceptable: %d %v %q", w.Code, w.Header(), w.Body.String())
	}
}

func TestServeV2Gzip(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	// quiet is the same server told to leave loopback clients alone.
	quiet, _ := newTestHandler(t, "plat")
	WithoutLoopbackCompression()(quiet)
	plain := map[v2Form][]byte{}
	for form, accept := range map[v2Form]string{formJSON: "application/json", formProtobuf: mediaV2Protobuf} {
		plain[form] = serveV2Request(h, localClient, map[string]string{"Accept": accept}).Body.Bytes()
	}
	for _, c := range []struct {
		name, remote, encoding, rng string
		quiet, gzipped              bool
	}{
		{"remote gzip", remoteClient, "gzip", "", false, true},
		{"remote list", remoteClient, "deflate, gzip;q=0.5", "", false, true},
		{"remote refuses", remoteClient, "gzip;q=0", "", false, false},
		{"remote identity", remoteClient, "", "", false, false},
		{"remote range", remoteClient, "gzip", "bytes=0-9", false, false},
		// Every client is served alike, as upstream, unless told otherwise.
		{"loopback", localClient, "gzip", "", false, true},
		{"loopback v6", "[::1]:40000", "gzip", "", false, true},
		{"loopback left alone", localClient, "gzip", "", true, false},
		{"loopback v6 left alone", "[::1]:40000", "gzip", "", true, false},
		{"remote with loopback left alone", remoteClient, "gzip", "", true, true},
	} {
		for form, accept := range map[v2Form]string{formJSON: "application/json", formProtobuf: mediaV2ProtobufAlias} {
			hdr := map[string]string{"Accept": accept, "Accept-Encoding": c.encoding}
			if c.rng != "" {
				hdr["Range"] = c.rng
			}
			srv := h
			if c.quiet {
				srv = quiet
			}
			w := serveV2Request(srv, c.remote, hdr)
			body := w.Body.Bytes()
			if enc := w.Header().Get("Content-Encoding"); (enc == "gzip") != c.gzipped {
				t.Errorf("%s %s: Content-Encoding %q", c.name, accept, enc)
				continue
			}
			if c.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("%s %s: %v", c.name, accept, err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatalf("%s %s: %v", c.name, accept, err)
				}
			}
			want := plain[form]
			if c.rng != "" {
				want = want[:10]
			}
			if !bytes.Equal(body, want) {
				t.Errorf("%s %s: body differs from the plain one", c.name, accept)
			}
		}
	}
}

// TestV2DiscoveryConsumes checks discovery operations list their media
// types as consumed too, as upstream's v2 document does.
func TestV2DiscoveryConsumes(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	w := get(h, "/openapi/v2", map[string]string{"Accept": "application/json"})
	doc := decode(t, w.Body.Bytes())
	want := []any{"application/json", "application/yaml", mustBrand(t, "kubernetes").ProtobufMediaType}
	for _, p := range []string{"/api/", "/api/v1/", "/apis/"} {
		if got := dig(doc, "paths", p, "get", "consumes"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s consumes %v", p, got)
		}
	}
}

package codec

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"":                  false,
		"gzip":              true,
		"deflate, gzip":     true,
		" gzip ,br":         true,
		"gzip;q=1.0":        false,
		"GZIP":              false,
		"x-gzip":            false,
		"gzip, deflate, br": true,
	}
	for h, want := range tests {
		if got := AcceptsGzip(h); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

// serveBody answers with status and body, wrapped by GzipWriter, after
// setting Content-Type and (when asked) Content-Length.
func serveBody(status int, body []byte, setLength bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw, finish := GzipWriter(w, r)
		gw.Header().Set("Content-Type", "application/json")
		if setLength {
			gw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		gw.WriteHeader(status)
		if len(body) > 0 {
			if _, err := gw.Write(body); err != nil {
				panic(err)
			}
		}
		if err := finish(); err != nil {
			panic(err)
		}
	})
}

func TestGzipWriter(t *testing.T) {
	t.Parallel()
	big := listBody(t, GzipThreshold+1)
	exact := bytes.Repeat([]byte("a"), GzipThreshold)
	small := readTestdata(t, "configmap-pretty.json")
	tests := []struct {
		name           string
		acceptEncoding string
		status         int
		body           []byte
		setLength      bool
		wantGzip       bool
	}{
		{"large list compressed", "gzip", 200, big, false, true},
		{"caller content-length dropped", "gzip", 200, big, true, true},
		{"created status kept", "deflate, gzip", 201, big, false, true},
		{"small object not compressed", "gzip", 200, small, true, false},
		{"exactly at threshold not compressed", "gzip", 200, exact, false, false},
		{"q param does not count", "gzip;q=1.0", 200, big, false, false},
		{"no accept-encoding", "", 200, big, false, false},
		{"empty body", "gzip", 204, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, "/apis/rbac.example/v1/clusterroles", nil)
			if tt.acceptEncoding != "" {
				req.Header.Set("Accept-Encoding", tt.acceptEncoding)
			}
			rec := httptest.NewRecorder()
			serveBody(tt.status, tt.body, tt.setLength).ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.status)
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			got := rec.Body.Bytes()
			if tt.wantGzip {
				if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
					t.Fatalf("headers %v", res.Header)
				}
				if _, ok := res.Header["Content-Length"]; ok {
					t.Fatalf("Content-Length kept: %v", res.Header)
				}
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatal(err)
				}
				if got, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			} else if res.Header.Get("Content-Encoding") != "" || res.Header.Get("Vary") != "" {
				t.Fatalf("uncompressed response has headers %v", res.Header)
			}
			if !bytes.Equal(got, tt.body) {
				t.Fatalf("body differs: %d bytes, want %d", len(got), len(tt.body))
			}
		})
	}
}

// TestGzipWireHeaders checks the response headers on a real connection
// against the captured upstream ones.
func TestGzipWireHeaders(t *testing.T) {
	t.Parallel()
	big := listBody(t, 4*GzipThreshold)
	small := readTestdata(t, "configmap-pretty.json")
	mux := http.NewServeMux()
	mux.Handle("/big", serveBody(200, big, false))
	mux.Handle("/small", serveBody(200, small, false))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)

	get := func(path string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, b
	}

	res, body := get("/big")
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" ||
		res.ContentLength != -1 || len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" {
		t.Fatalf("large: headers %v, length %d, transfer %v", res.Header, res.ContentLength, res.TransferEncoding)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, big) {
		t.Fatalf("large body does not round-trip: %v", err)
	}
	if len(body) >= len(big)/4 {
		t.Errorf("compressed %d bytes to %d", len(big), len(body))
	}

	res, body = get("/small")
	if res.Header.Get("Content-Encoding") != "" || res.ContentLength != int64(len(small)) || !bytes.Equal(body, small) {
		t.Fatalf("small: headers %v, length %d", res.Header, res.ContentLength)
	}
}

func TestGzipWriteAfterFinish(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	w, finish := GzipWriter(httptest.NewRecorder(), req)
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if err := finish(); err != nil {
		t.Fatalf("second finish: %v", err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("write after finish succeeded")
	}
}

func BenchmarkGzipList(b *testing.B) {
	body := listBody(b, benchListSize)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rw := &countingWriter{header: http.Header{}}
		w, finish := GzipWriter(rw, req)
		if _, err := w.Write(body); err != nil {
			b.Fatal(err)
		}
		if err := finish(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rw.n)/float64(len(body)), "ratio")
	}
}

// countingWriter is a ResponseWriter that only counts body bytes.
type countingWriter struct {
	header http.Header
	n      int
}

func (c *countingWriter) Header() http.Header         { return c.header }
func (c *countingWriter) WriteHeader(int)             {}
func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

func TestGzipFlushBeforeWrite(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	w, finish := GzipWriter(rec, req)
	w.WriteHeader(http.StatusAccepted)
	if err := http.NewResponseController(w).Flush(); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("b"), GzipThreshold+1)
	if _, err := w.Write(big); err != nil {
		t.Fatal(err)
	}
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusAccepted || !rec.Flushed || rec.Header().Get("Content-Encoding") != "" || !bytes.Equal(rec.Body.Bytes(), big) {
		t.Fatalf("code %d flushed %v headers %v body %d bytes", rec.Code, rec.Flushed, rec.Header(), rec.Body.Len())
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:5000": true, "[::1]:443": true, "10.1.2.3:80": false, "[2001:db8::1]:1": false, "garbage": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"platd/config"
)

// bigData is ConfigMap data of about 150 KiB: one such object is over the
// 128 KiB compression threshold.
func bigData() map[string]string {
	return map[string]string{"blob": strings.Repeat("platd compresses large responses ", 150<<10/33)}
}

// gunzip decompresses a response body.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("body is not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("decompressing: %v", err)
	}
	return out
}

// seedBig creates a large ConfigMap "big" and a small one "small" in the
// default namespace.
func seedBig(t *testing.T, e *env) {
	t.Helper()
	e.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", cm("big", bigData(), nil)).mustCode(t, http.StatusCreated)
	e.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", cm("small", map[string]string{"a": "1"}, nil)).mustCode(t, http.StatusCreated)
}

// Large get and list responses are gzip-compressed for any client whose
// Accept-Encoding has a plain gzip token, loopback clients included, as
// upstream; small ones, other encodings and watches are not.
func TestResponseCompression(t *testing.T) {
	t.Parallel()
	e := start(t)
	seedBig(t, e)
	const list = "/api/v1/namespaces/default/configmaps"
	for _, tc := range []struct {
		name, path, acceptEncoding string
		gzipped                    bool
	}{
		{"large list", list, "gzip", true},
		{"large list, gzip among others", list, "deflate, gzip", true},
		{"large get", list + "/big", "gzip", true},
		{"large list as YAML", list, "gzip", true},
		{"small get", list + "/small", "gzip", false},
		{"gzip with a quality", list, "gzip;q=1.0", false},
		{"identity", list, "identity", false},
	} {
		accept := "application/json"
		if strings.Contains(tc.name, "YAML") {
			accept = "application/yaml"
		}
		// Setting Accept-Encoding keeps the client from decompressing.
		r := e.do(http.MethodGet, tc.path, nil, "Accept-Encoding", tc.acceptEncoding, "Accept", accept).mustCode(t, http.StatusOK)
		body := r.body
		// A length, when the transport sets one, is the one of the bytes
		// sent, never the uncompressed length.
		if cl := r.header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(body)) {
			t.Errorf("%s: Content-Length %s for %d bytes", tc.name, cl, len(body))
		}
		if tc.gzipped {
			if r.header.Get("Content-Encoding") != "gzip" || r.header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s: headers %v, want Content-Encoding: gzip, Vary: Accept-Encoding", tc.name, r.header)
				continue
			}
			body = gunzip(t, body)
		} else if r.header.Get("Content-Encoding") != "" || r.header.Get("Vary") != "" {
			t.Errorf("%s: headers %v, want neither Content-Encoding nor Vary", tc.name, r.header)
		}
		if accept != "application/json" {
			if !bytes.Contains(body, []byte("kind: ConfigMapList")) {
				t.Errorf("%s: body is not the YAML list: %.200s", tc.name, body)
			}
			continue
		}
		var obj struct {
			Kind  string
			Items []struct{ Metadata struct{ Name string } }
			Data  map[string]string
		}
		if err := json.Unmarshal(body, &obj); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		switch obj.Kind {
		case "ConfigMapList":
			if len(obj.Items) != 2 || obj.Items[0].Metadata.Name != "big" || obj.Items[1].Metadata.Name != "small" {
				t.Errorf("%s: items %+v", tc.name, obj.Items)
			}
		case "ConfigMap":
			want := map[string]string{"a": "1"}
			if strings.HasSuffix(tc.path, "/big") {
				want = bigData()
			}
			if len(obj.Data) != len(want) || obj.Data["a"] != want["a"] || obj.Data["blob"] != want["blob"] {
				t.Errorf("%s: data differs from what was stored", tc.name)
			}
		default:
			t.Errorf("%s: kind %q", tc.name, obj.Kind)
		}
	}

	// A watch is never compressed, however large its events.
	rq, err := http.NewRequest(http.MethodGet, e.srv.URL()+list+"?watch=true&resourceVersion=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	rq.Header.Set("Authorization", "Bearer "+adminToken)
	rq.Header.Set("Accept-Encoding", "gzip")
	res, err := e.client.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Encoding") != "" {
		t.Errorf("watch: Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), `{"type":"ADDED"`) {
		t.Errorf("watch: first line %.100q %v, want a plain ADDED event", sc.Text(), sc.Err())
	}
}

// With the APIResponseCompression gate off nothing is compressed; with
// --compress-loopback-responses=false loopback clients (as this test is)
// get plain bodies while the OpenAPI document follows the same rule.
func TestResponseCompressionOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mod     option
		openapi bool // the v2 document is still compressed
	}{
		{"gate off", func(o *config.Options) { o.FeatureGatesFlag = []string{config.APIResponseCompression + "=false"} }, true},
		{"loopback left alone", func(o *config.Options) { o.NoLoopbackCompression = true }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, tc.mod)
			seedBig(t, e)
			for _, p := range []string{"/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps/big"} {
				r := e.do(http.MethodGet, p, nil, "Accept-Encoding", "gzip").mustCode(t, http.StatusOK)
				if r.header.Get("Content-Encoding") != "" || r.header.Get("Vary") != "" || !json.Valid(r.body) || len(r.body) < 128<<10 {
					t.Errorf("%s: headers %v, %d bytes, want a plain JSON body", p, r.header, len(r.body))
				}
			}
			r := e.do(http.MethodGet, "/openapi/v2", nil, "Accept-Encoding", "gzip", "Accept", "application/json").mustCode(t, http.StatusOK)
			if got := r.header.Get("Content-Encoding") == "gzip"; got != tc.openapi {
				t.Errorf("/openapi/v2: Content-Encoding %q, want gzip %v", r.header.Get("Content-Encoding"), tc.openapi)
			}
		})
	}
}

// The captured upstream exchange encoding/gzip-clusterroles-list-headers:
// curl lists the default cluster roles over HTTP/1.1 with
// Accept-Encoding: gzip and gets a chunked, compressed body.
func TestResponseCompressionGolden(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"), func(o *config.Options) { o.AuthorizationModes = []string{config.ModeNode, config.ModeRBAC} })
	rq, err := http.NewRequest(http.MethodGet, e.srv.URL()+"/apis/rbac.authorization."+e.opts.Brand.Domain+"/v1/clusterroles", nil)
	if err != nil {
		t.Fatal(err)
	}
	rq.Header.Set("User-Agent", "curl/7.88.1")
	rq.Header.Set("Authorization", "Bearer "+adminToken)
	rq.Header.Set("Accept", "application/json")
	rq.Header.Set("Accept-Encoding", "gzip")
	res, err := e.http1Client().Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"Cache-Control": {"no-cache, private"}, "Content-Encoding": {"gzip"}, "Content-Type": {"application/json"}, "Vary": {"Accept-Encoding"}}
	for k, v := range want {
		if got := res.Header.Values(k); len(got) != 1 || got[0] != v[0] {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if res.StatusCode != http.StatusOK || len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" || res.ContentLength != -1 {
		t.Errorf("status %d, Transfer-Encoding %q, Content-Length %d; want 200, chunked, none", res.StatusCode, res.TransferEncoding, res.ContentLength)
	}
	var list struct {
		Kind  string
		Items []json.RawMessage
	}
	body := gunzip(t, raw)
	if err := json.Unmarshal(body, &list); err != nil || list.Kind != "ClusterRoleList" || len(list.Items) < 50 || len(body) <= 128<<10 {
		t.Errorf("decompressed: kind %q, %d items, %d bytes, %v", list.Kind, len(list.Items), len(body), err)
	}
}

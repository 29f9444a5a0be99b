package discovery

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"platd/server/registry"
)

func aggregatedAccept(group, version string) string {
	return "application/json;g=" + group + ";v=" + version + ";as=APIGroupDiscoveryList"
}

// TestAggregatedGoldenBody compares aggregated /api with the capture
// trimmed to the fixture resources.
func TestAggregatedGoldenBody(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	b := mustBrand(t, "kubernetes")
	w := get(h, "/api", map[string]string{"Accept": aggregatedAccept(b.DiscoveryGroup(), "v2")})
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	if want := readTestdata(t, "aggregated-api-subset.json"); !bytes.Equal(w.Body.Bytes(), want) {
		t.Errorf("body differs\n got: %s\nwant: %s", w.Body, want)
	}
}

// TestAggregatedETagRule re-encodes the full upstream capture with this
// package's types and checks that the ETag rule reproduces the captured
// header: SHA-512 of the compact document without kind and apiVersion.
func TestAggregatedETagRule(t *testing.T) {
	t.Parallel()
	hdr, body := goldenCapture(t, "aggregated-api.resp")
	var l groupDiscoveryList
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatal(err)
	}
	l.Kind, l.APIVersion = "", ""
	if got, want := etagOf(mustMarshal(l)), hdr.Get("Etag"); got != want {
		t.Errorf("etag %s, capture says %s", got, want)
	}
}

func TestAggregatedHeaders(t *testing.T) {
	t.Parallel()
	for _, brand := range []string{"plat", "kubernetes"} {
		b := mustBrand(t, brand)
		dg := b.DiscoveryGroup()
		tests := []struct {
			name, path, accept string
			wantVersion        string // "" means legacy
		}{
			{"api v2", "/api", aggregatedAccept(dg, "v2"), "v2"},
			{"apis v2", "/apis", aggregatedAccept(dg, "v2"), "v2"},
			{"apis v2beta1", "/apis", aggregatedAccept(dg, "v2beta1"), "v2beta1"},
			{"client-go accept", "/apis", aggregatedAccept(dg, "v2") + "," + aggregatedAccept(dg, "v2beta1") + ",application/json", "v2"},
			{"unknown version falls back", "/apis", aggregatedAccept(dg, "v3") + ",application/json", ""},
			{"other brand's group falls back", "/apis", aggregatedAccept("apidiscovery.example", "v2") + ",application/json", ""},
			{"not on group-version", "/api/v1", aggregatedAccept(dg, "v2") + ",application/json", ""},
		}
		for _, tc := range tests {
			t.Run(brand+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				h, _ := newTestHandler(t, brand)
				w := get(h, tc.path, map[string]string{"Accept": tc.accept, "User-Agent": "kubectl/v1.32.0"})
				if w.Code != http.StatusOK {
					t.Fatalf("status %d: %s", w.Code, w.Body)
				}
				ct := w.Header().Get("Content-Type")
				if tc.wantVersion == "" {
					if ct != "application/json" || w.Header().Get("ETag") != "" {
						t.Fatalf("want legacy answer, got %q etag %q", ct, w.Header().Get("ETag"))
					}
					return
				}
				wantCT := "application/json;g=" + dg + ";v=" + tc.wantVersion + ";as=APIGroupDiscoveryList"
				if ct != wantCT {
					t.Errorf("Content-Type %q want %q", ct, wantCT)
				}
				if w.Header().Get("Vary") != "Accept" || w.Header().Get("Cache-Control") != "public" {
					t.Errorf("Vary %q Cache-Control %q", w.Header().Get("Vary"), w.Header().Get("Cache-Control"))
				}
				var l groupDiscoveryList
				if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
					t.Fatal(err)
				}
				if l.Kind != "APIGroupDiscoveryList" || l.APIVersion != dg+"/"+tc.wantVersion {
					t.Errorf("kind %q apiVersion %q", l.Kind, l.APIVersion)
				}
				// The ETag covers the content without kind/apiVersion.
				l.Kind, l.APIVersion = "", ""
				if etag := w.Header().Get("ETag"); etag != etagOf(mustMarshal(l)) {
					t.Errorf("ETag %s does not hash the body", etag)
				}
				if !strings.HasSuffix(w.Body.String(), "}\n") {
					t.Errorf("compact body should end in a newline")
				}
			})
		}
	}
}

func TestAggregatedNotModified(t *testing.T) {
	t.Parallel()
	h, reg := newTestHandler(t, "plat")
	accept := aggregatedAccept(mustBrand(t, "plat").DiscoveryGroup(), "v2")
	first := get(h, "/apis", map[string]string{"Accept": accept})
	etag := first.Header().Get("ETag")
	if len(etag) != 130 || etag != strings.ToUpper(etag) {
		t.Fatalf("ETag %q is not a quoted upper-case SHA-512", etag)
	}
	again := get(h, "/apis", map[string]string{"Accept": accept, "If-None-Match": etag})
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 || again.Header().Get("ETag") != etag {
		t.Fatalf("revalidation: %d %q etag %q", again.Code, again.Body, again.Header().Get("ETag"))
	}
	// The core document is separate: its tag differs.
	if core := get(h, "/api", map[string]string{"Accept": accept}); core.Header().Get("ETag") == etag {
		t.Error("/api and /apis share an ETag")
	}
	// Equal descriptors re-added: rebuilt, same content, still 304.
	reg.Add(rbacDescriptors(mustBrand(t, "plat"))[0])
	if w := get(h, "/apis", map[string]string{"Accept": accept, "If-None-Match": etag}); w.Code != http.StatusNotModified {
		t.Errorf("equal content after rebuild: got %d, want 304", w.Code)
	}
	// A new group changes the document and its tag.
	reg.Add(&registry.Descriptor{Group: "stable.example.com", Version: "v1", Kind: "CronTab", Resource: "crontabs", Verbs: allVerbs})
	changed := get(h, "/apis", map[string]string{"Accept": accept, "If-None-Match": etag})
	if changed.Code != http.StatusOK || changed.Header().Get("ETag") == etag ||
		!strings.Contains(changed.Body.String(), `"crontabs"`) {
		t.Errorf("after a change: %d etag %q", changed.Code, changed.Header().Get("ETag"))
	}
}

func TestVersionGolden(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	_, want := goldenCapture(t, "version.resp")
	for _, ua := range []string{"curl/7.88.1", "kubectl/v1.32.0"} {
		w := get(h, "/version", map[string]string{"User-Agent": ua})
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !bytes.Equal(w.Body.Bytes(), want) {
			t.Errorf("%s: %d %q\n%s", ua, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	}
}

func TestSplitSemver(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, major, minor string }{
		{"v1.32.0", "1", "32"},
		{"v1.32.3-platd.1", "1", "32"},
		{"1.9", "1", "9"},
		{"", "", ""},
	}
	for _, tc := range tests {
		if ma, mi := splitSemver(tc.in); ma != tc.major || mi != tc.minor {
			t.Errorf("%q: %q %q", tc.in, ma, mi)
		}
	}
}
